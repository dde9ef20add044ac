/**
 * The rules of membership (issue 3): who a caller is (`/users/me`), the member list, role changes
 * and removal. An organization never loses its last owner; an admin cannot touch owners.
 */
import { conflict, invalidRequest, notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import type { AuditService } from '../audit/service.js';
import type { Role } from './roles.js';
import type { MemberEntry, UserRecord } from './store.js';

/**
 * Runs inside the removal's transaction, so what depends on the membership ends with it. Returns
 * counts of what it ended (e.g. `{ sessions_revoked: 2 }`) for the audit record.
 */
export type MemberRemovalHook = (tx: ControlStores, orgId: string, userId: string, at: string) => Promise<Record<string, number>>;

export function memberView(m: MemberEntry) {
  return { user_id: m.userId, email: m.email, name: m.name, role: m.role, created_at: m.createdAt };
}

export function userView(u: UserRecord) {
  return { id: u.id, email: u.email, name: u.name };
}

/** Emails are compared and stored lower-cased, without surrounding spaces. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Members and invitations belong to the whole organization; a key bound to one project cannot manage them. */
export function requireOrgLevel(caller: Principal): void {
  if (caller.projectId !== null) throw permissionDenied('a project-scoped key cannot manage organization members');
}

const LAST_OWNER = 'the last owner of an organization cannot be removed or demoted; make another member an owner first';

export class MemberService {
  private readonly removalHooks: MemberRemovalHook[] = [];

  constructor(
    private readonly store: ControlStore,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  onRemoved(hook: MemberRemovalHook): void {
    this.removalHooks.push(hook);
  }

  /** The person's current role; read with a transaction's stores to be consistent with what follows. */
  async roleOf(stores: ControlStores, orgId: string, userId: string): Promise<Role | undefined> {
    return (await stores.memberships.find(orgId, userId))?.role;
  }

  userById(stores: ControlStores, id: string) {
    return stores.users.findById(id);
  }

  userByEmail(email: string) {
    return this.store.users.findByEmail(normalizeEmail(email));
  }

  membershipsOf(userId: string) {
    return this.store.memberships.listForUser(userId);
  }

  /**
   * The role a caller acts with for the owner rules. A session acts with its person's role, a
   * person's key with that person's current role. A key with no person behind it descends from the
   * organization's owner credential made at first start (keys only narrow what their creator
   * holds), so it acts as an owner.
   */
  async actingRole(caller: Principal): Promise<Role> {
    if (caller.kind === 'session') return caller.role!;
    if (caller.userId === null) return 'owner';
    const role = await this.roleOf(this.store, caller.orgId, caller.userId);
    if (!role) throw permissionDenied('the person behind this key is no longer a member of the organization');
    return role;
  }

  async me(caller: Principal) {
    if (caller.userId === null) throw permissionDenied('no person is behind this credential; sign in, or use a key a person minted');
    const user = await this.store.users.findById(caller.userId);
    const role = caller.role ?? (await this.roleOf(this.store, caller.orgId, caller.userId));
    if (!user || !role) throw permissionDenied('the person behind this credential is no longer a member of the organization');
    return { ...userView(user), organization: { id: caller.orgId, role }, scopes: [...caller.scopes].sort() };
  }

  /** Anyone who may manage members, and every signed-in member, may see the member list. */
  async list(caller: Principal, opts: { after?: { createdAt: string; userId: string }; limit: number }) {
    requireOrgLevel(caller);
    if (!caller.scopes.has('members:write') && caller.kind !== 'session')
      throw permissionDenied('listing members needs scope members:write or a signed-in member');
    return this.store.memberships.list(caller.orgId, opts);
  }

  async setRole(caller: Principal, userId: string, role: Role) {
    requireOrgLevel(caller);
    const acting = await this.actingRole(caller);
    return this.store.transaction(async (tx) => {
      const m = await tx.memberships.find(caller.orgId, userId);
      if (!m) throw notFound('member');
      if (m.role === role) throw invalidRequest('the request changes nothing');
      if (acting !== 'owner' && m.role === 'owner') throw permissionDenied("only an owner can change an owner's role");
      if (acting !== 'owner' && role === 'owner') throw permissionDenied('only an owner can make someone an owner');
      if (m.role === 'owner' && (await tx.memberships.lockOwners(caller.orgId)).length <= 1) throw conflict(LAST_OWNER);
      await tx.memberships.updateRole(caller.orgId, userId, role);
      // The person's open streams re-check their scopes at once, on every node (docs/several-nodes.md).
      await tx.changes.publish({ topic: 'member.changed', orgId: caller.orgId, userId });
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: null,
        eventType: null,
        resource: 'member',
        action: 'update_role',
        result: 'success',
        toolName: null,
        targetId: userId,
        targetApiKeyId: null,
        metadata: { role, previous_role: m.role, via: 'api' },
      });
      const user = await tx.users.findById(userId);
      return memberView({ ...m, role, email: user!.email, name: user!.name });
    });
  }

  /** Removal ends the person's browser sessions and agent approvals in this organization in the same transaction. */
  async remove(caller: Principal, userId: string): Promise<void> {
    requireOrgLevel(caller);
    const acting = await this.actingRole(caller);
    const at = this.clock.now().toISOString();
    await this.store.transaction(async (tx) => {
      const m = await tx.memberships.find(caller.orgId, userId);
      if (!m) throw notFound('member');
      if (acting !== 'owner' && m.role === 'owner') throw permissionDenied('only an owner can remove an owner');
      if (m.role === 'owner' && (await tx.memberships.lockOwners(caller.orgId)).length <= 1) throw conflict(LAST_OWNER);
      await tx.memberships.delete(caller.orgId, userId);
      await tx.changes.publish({ topic: 'member.changed', orgId: caller.orgId, userId });
      const ended: Record<string, number> = {};
      for (const hook of this.removalHooks) Object.assign(ended, await hook(tx, caller.orgId, userId, at));
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: null,
        eventType: null,
        resource: 'member',
        action: 'remove',
        result: 'success',
        toolName: null,
        targetId: userId,
        targetApiKeyId: null,
        metadata: { role: m.role, ...ended, via: 'api' },
      });
    });
  }
}
