/**
 * Browser sessions (spec 1, "Authentication" 2, 4, 5, 7). A sign-in is a refresh family bound to one
 * person in one organization. It holds a short-lived access credential (the session cookie) and a
 * refresh credential; a refresh rotates both, and presenting a refresh credential that was already
 * rotated means it was copied, so the whole family is revoked.
 */
import { ApiError, badCredentials, invalidRequest, permissionDenied, unauthorized, unavailable } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import { newToken, plausibleToken, tokenHash } from '../../lib/tokens.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import type { AuditService } from '../audit/service.js';
import { userView, type MemberService } from '../people/members-service.js';
import { burnPasswordCheck, verifyPassword } from '../people/password.js';
import { ROLE_SCOPES, type Role } from '../people/roles.js';
import type { CredentialKind, SignInRecord } from './store.js';

export const ACCESS_TTL_MS = 15 * 60_000;
export const REFRESH_TTL_MS = 30 * 86_400_000;
/** Different prefixes, so a refresh secret can never be mistaken for an access secret. */
const PREFIX: Record<CredentialKind, string> = { access: 'svs', refresh: 'svr' };

export interface IssuedCredential {
  secret: string;
  expiresAt: Date;
}

export interface SignedIn {
  user: { id: string; email: string; name: string };
  organization: { id: string; role: Role };
  access: IssuedCredential;
  refresh: IssuedCredential;
}

/** Why a refresh was refused; every reason answers the same 401. */
type Refusal = 'unknown' | 'revoked' | 'expired' | 'reused' | 'membership_ended';

const actorOf = (s: SignInRecord) => ({ kind: 'session' as const, keyId: null, signInId: s.id, connectionId: null, userId: s.userId });

export class SessionService {
  constructor(
    private readonly store: ControlStore,
    private readonly members: MemberService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /**
   * Resolves a session cookie on every request: the exact access credential must be active and
   * unexpired, its sign-in not revoked, and the person still a member; the scopes are the role's
   * current ones, so a role change applies to the next request.
   */
  async authenticate(secret: string): Promise<Principal | undefined> {
    if (!plausibleToken(secret, PREFIX.access)) return undefined;
    const found = await this.store.sessions.findCredential(tokenHash(secret));
    if (!found) return undefined;
    const { credential: c, signIn } = found;
    if (c.kind !== 'access' || c.status !== 'active' || signIn.revokedAt !== null) return undefined;
    if (Date.parse(c.expiresAt) <= this.clock.now().getTime()) return undefined;
    const role = await this.members.roleOf(this.store, signIn.orgId, signIn.userId);
    if (!role) return undefined;
    return {
      kind: 'session',
      keyId: null,
      signInId: signIn.id,
      connectionId: null,
      orgId: signIn.orgId,
      projectId: null,
      scopes: new Set(ROLE_SCOPES[role]),
      userId: signIn.userId,
      role,
    };
  }

  /** Email and password; `orgId` picks the organization when the person belongs to several. */
  async login(input: { email: string; password: string; orgId?: string }): Promise<SignedIn> {
    const user = await this.members.userByEmail(input.email);
    if (!user) {
      await burnPasswordCheck(input.password);
      throw badCredentials();
    }
    if (!(await verifyPassword(input.password, user.passwordHash))) throw badCredentials();
    // Only after the password: which organizations a person belongs to is theirs to know.
    const memberships = await this.members.membershipsOf(user.id);
    if (input.orgId === undefined && memberships.length > 1)
      throw invalidRequest('you belong to several organizations; name one with org_id', {
        organization_ids: memberships.map((m) => m.orgId),
      });
    const chosen = input.orgId === undefined ? memberships[0] : memberships.find((m) => m.orgId === input.orgId);
    if (!chosen)
      throw permissionDenied(input.orgId === undefined ? 'you are not a member of any organization' : 'you are not a member of that organization');
    const now = this.clock.now();
    const signIn: SignInRecord = { id: this.ids.uuid(), userId: user.id, orgId: chosen.orgId, createdAt: now.toISOString(), revokedAt: null };
    const issued = await this.store.transaction(async (tx) => {
      await tx.sessions.insertSignIn(signIn);
      const creds = await this.issue(tx, signIn.id, now);
      await this.audit.record(tx, actorOf(signIn), signIn.orgId, {
        projectId: null,
        eventType: null,
        resource: 'session',
        action: 'sign_in',
        result: 'success',
        toolName: null,
        targetId: signIn.id,
        targetApiKeyId: null,
        metadata: { via: 'password' },
      });
      return creds;
    });
    return { user: userView(user), organization: { id: chosen.orgId, role: chosen.role }, ...issued };
  }

  /**
   * Rotates the refresh credential. The membership is checked in the same transaction before the
   * credential is consumed, so when that check cannot be made the transaction rolls back, the
   * answer is 503 and the same credential works on retry. The organization never changes.
   */
  async refresh(secret: string | undefined): Promise<SignedIn> {
    if (!secret || !plausibleToken(secret, PREFIX.refresh)) throw unauthorized();
    let outcome: { refused: Refusal } | SignedIn;
    try {
      outcome = await this.store.transaction(async (tx): Promise<{ refused: Refusal } | SignedIn> => {
        const found = await tx.sessions.findCredential(tokenHash(secret));
        if (!found || found.credential.kind !== 'refresh') return { refused: 'unknown' };
        const { credential: c, signIn } = found;
        if (signIn.revokedAt !== null || c.status === 'revoked') return { refused: 'revoked' };
        if (c.status === 'rotated') return this.revokeFamily(tx, signIn, 'reused');
        const now = this.clock.now();
        if (Date.parse(c.expiresAt) <= now.getTime()) return { refused: 'expired' };
        const role = await this.members.roleOf(tx, signIn.orgId, signIn.userId);
        if (!role) return this.revokeFamily(tx, signIn, 'membership_ended');
        // A concurrent refresh with the same credential got there first: that is reuse too.
        if (!(await tx.sessions.markRotated(c.id))) return this.revokeFamily(tx, signIn, 'reused');
        await tx.sessions.retireAccess(signIn.id);
        // Streams on the retired access credential end (as `expired`) at once, on every node.
        await tx.changes.publish({ topic: 'session.changed', signInId: signIn.id });
        const issued = await this.issue(tx, signIn.id, now);
        const user = await this.members.userById(tx, signIn.userId);
        return { user: userView(user!), organization: { id: signIn.orgId, role }, ...issued };
      });
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw unavailable('the session could not be checked right now; retry with the same refresh cookie', 1, e);
    }
    if ('refused' in outcome) throw unauthorized();
    return outcome;
  }

  /**
   * Signs out: revokes the whole family of the refresh cookie (and the sign-in of the session
   * cookie) in one transaction. Any failure is 503, and the caller must not touch the cookies then.
   */
  async logout(cookies: { refresh?: string; session?: string }): Promise<void> {
    const hashes: { hash: string; kind: CredentialKind }[] = [];
    if (cookies.refresh && plausibleToken(cookies.refresh, PREFIX.refresh)) hashes.push({ hash: tokenHash(cookies.refresh), kind: 'refresh' });
    if (cookies.session && plausibleToken(cookies.session, PREFIX.access)) hashes.push({ hash: tokenHash(cookies.session), kind: 'access' });
    if (hashes.length === 0) return;
    try {
      await this.store.transaction(async (tx) => {
        const families = new Map<string, SignInRecord>();
        for (const { hash, kind } of hashes) {
          const found = await tx.sessions.findCredential(hash);
          if (found && found.credential.kind === kind && found.signIn.revokedAt === null) families.set(found.signIn.id, found.signIn);
        }
        const at = this.clock.now().toISOString();
        for (const s of families.values()) {
          await tx.sessions.revokeFamily(s.id, at);
          await tx.changes.publish({ topic: 'session.changed', signInId: s.id });
          await this.audit.record(tx, actorOf(s), s.orgId, {
            projectId: null,
            eventType: null,
            resource: 'session',
            action: 'sign_out',
            result: 'success',
            toolName: null,
            targetId: s.id,
            targetApiKeyId: null,
            metadata: { via: 'logout' },
          });
        }
      });
    } catch (e) {
      throw unavailable('sign-out could not be completed right now; retry', 1, e);
    }
  }

  /** Ends a removed member's sign-ins in the removal's transaction; returns how many. */
  async revokeMember(tx: ControlStores, orgId: string, userId: string, at: string): Promise<number> {
    return (await tx.sessions.revokeForMember(orgId, userId, at)).length;
  }

  private async revokeFamily(tx: ControlStores, signIn: SignInRecord, reason: Refusal): Promise<{ refused: Refusal }> {
    await tx.sessions.revokeFamily(signIn.id, this.clock.now().toISOString());
    await tx.changes.publish({ topic: 'session.changed', signInId: signIn.id });
    await this.audit.record(tx, 'system', signIn.orgId, {
      projectId: null,
      eventType: null,
      resource: 'session',
      action: 'revoke',
      result: 'success',
      toolName: null,
      targetId: signIn.id,
      targetApiKeyId: null,
      metadata: { reason, user_id: signIn.userId, via: 'refresh' },
    });
    return { refused: reason };
  }

  private async issue(tx: ControlStores, signInId: string, now: Date) {
    const make = async (kind: CredentialKind, ttl: number): Promise<IssuedCredential> => {
      const secret = newToken(PREFIX[kind]);
      const expiresAt = new Date(now.getTime() + ttl);
      await tx.sessions.insertCredential({
        id: this.ids.uuid(),
        signInId,
        kind,
        tokenHash: tokenHash(secret),
        status: 'active',
        createdAt: now.toISOString(),
        expiresAt: expiresAt.toISOString(),
      });
      return { secret, expiresAt };
    };
    return { access: await make('access', ACCESS_TTL_MS), refresh: await make('refresh', REFRESH_TTL_MS) };
  }
}
