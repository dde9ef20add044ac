/**
 * The rules of invitations (issue 3): an invitation carries a one-time token, shown once and stored
 * only as a hash; it is accepted without a credential, once, within 7 days. A revoked, expired,
 * used or unknown token all get the same answer, so the answer tells nothing about which it was.
 */
import { badCredentials, conflict, invalidRequest, notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import { newToken, plausibleToken, tokenHash } from '../../lib/tokens.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { AuditService } from '../audit/service.js';
import { normalizeEmail, requireOrgLevel, type MemberService } from './members-service.js';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './password.js';
import type { Role } from './roles.js';
import type { InvitationRecord, UserRecord } from './store.js';

export const INVITATION_TTL_MS = 7 * 86_400_000;
const TOKEN_PREFIX = 'svi';

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export function invitationStatus(i: InvitationRecord, now: Date): InvitationStatus {
  if (i.status === 'pending' && Date.parse(i.expiresAt) <= now.getTime()) return 'expired';
  return i.status;
}

export function invitationView(i: InvitationRecord, now: Date) {
  return { id: i.id, email: i.email, role: i.role, status: invitationStatus(i, now), expires_at: i.expiresAt, created_at: i.createdAt };
}

const invalidInvitation = () => invalidRequest('invitation is invalid or expired');

export function checkNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw invalidRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
}

export interface AcceptInput {
  token: string;
  name?: string;
  password: string;
}

export class InvitationService {
  constructor(
    private readonly store: ControlStore,
    private readonly members: MemberService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async create(caller: Principal, input: { email: string; role: Role }) {
    requireOrgLevel(caller);
    const email = normalizeEmail(input.email);
    if (input.role === 'owner' && (await this.members.actingRole(caller)) !== 'owner')
      throw permissionDenied('only an owner can invite an owner');
    const existing = await this.store.users.findByEmail(email);
    if (existing && (await this.store.memberships.find(caller.orgId, existing.id)))
      throw conflict('this person is already a member of the organization');
    const now = this.clock.now();
    const token = newToken(TOKEN_PREFIX);
    const rec: InvitationRecord = {
      id: this.ids.uuid(),
      orgId: caller.orgId,
      email,
      role: input.role,
      tokenHash: tokenHash(token),
      status: 'pending',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + INVITATION_TTL_MS).toISOString(),
      acceptedAt: null,
      acceptedUserId: null,
      revokedAt: null,
      createdByUserId: caller.userId,
      createdByApiKeyId: caller.keyId,
    };
    await this.store.transaction(async (tx) => {
      await tx.invitations.insert(rec);
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: null,
        eventType: null,
        resource: 'invitation',
        action: 'create',
        result: 'success',
        toolName: null,
        targetId: rec.id,
        targetApiKeyId: null,
        metadata: { email, role: rec.role, via: 'api' },
      });
    });
    return { ...invitationView(rec, now), token };
  }

  async list(caller: Principal, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    requireOrgLevel(caller);
    return this.store.invitations.list(caller.orgId, opts);
  }

  /** Revoking again changes nothing; an accepted invitation has done its work and cannot be revoked. */
  async revoke(caller: Principal, id: string) {
    requireOrgLevel(caller);
    const inv = await this.store.invitations.findById(caller.orgId, id);
    if (!inv) throw notFound('invitation');
    const now = this.clock.now();
    if (inv.status === 'revoked') return invitationView(inv, now);
    if (inv.status === 'accepted') throw conflict('an accepted invitation cannot be revoked; remove the member instead');
    const next: InvitationRecord = { ...inv, status: 'revoked', revokedAt: now.toISOString() };
    await this.store.transaction(async (tx) => {
      await tx.invitations.markRevoked(inv.id, next.revokedAt!);
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: null,
        eventType: null,
        resource: 'invitation',
        action: 'revoke',
        result: 'success',
        toolName: null,
        targetId: inv.id,
        targetApiKeyId: null,
        metadata: { email: inv.email, role: inv.role, via: 'api' },
      });
    });
    return invitationView(next, now);
  }

  /**
   * Accepting needs no credential: the token is the proof. A new person gives a name and a
   * password; a person who already has an account with the invited email proves it with their
   * password (and gives no name: an invitation never renames anyone).
   */
  async accept(input: AcceptInput) {
    if (!plausibleToken(input.token, TOKEN_PREFIX)) throw invalidInvitation();
    const inv = await this.store.invitations.findByTokenHash(tokenHash(input.token));
    if (!inv || invitationStatus(inv, this.clock.now()) !== 'pending') throw invalidInvitation();
    const existing = await this.store.users.findByEmail(inv.email);
    const at = this.clock.now().toISOString();
    let person: UserRecord;
    if (existing) {
      if (input.name !== undefined) throw invalidRequest('an account with this email exists; send only token and password');
      if (!(await verifyPassword(input.password, existing.passwordHash))) throw badCredentials();
      person = existing;
    } else {
      const name = input.name?.trim();
      if (!name) throw invalidRequest('name is required to create an account');
      checkNewPassword(input.password);
      person = { id: this.ids.uuid(), email: inv.email, name, passwordHash: await hashPassword(input.password), createdAt: at };
    }
    await this.store.transaction(async (tx) => {
      // Single use: only one acceptance can move the invitation out of pending.
      if (!(await tx.invitations.markAccepted(inv.id, at, person.id))) throw invalidInvitation();
      if (!existing) await tx.users.insert(person);
      else if (await tx.memberships.find(inv.orgId, person.id)) throw conflict('you are already a member of this organization');
      await tx.memberships.insert({ orgId: inv.orgId, userId: person.id, role: inv.role, createdAt: at });
      await this.audit.record(tx, { kind: 'system', userId: person.id }, inv.orgId, {
        projectId: null,
        eventType: null,
        resource: 'invitation',
        action: 'accept',
        result: 'success',
        toolName: null,
        targetId: inv.id,
        targetApiKeyId: null,
        metadata: { email: inv.email, role: inv.role, user_id: person.id, new_account: !existing, via: 'invitation' },
      });
    });
    return { user: { id: person.id, email: person.email, name: person.name }, organization: { id: inv.orgId, role: inv.role } };
  }
}
