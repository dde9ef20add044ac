/** The rules of API keys (spec 1, "Authentication" 1, 3, 6, 13; "Account and audit"; the API key listing entry). */
import { ApiError, conflict, invalidRequest, notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import type { AuditEntry, AuditService } from '../audit/service.js';
import { legacyKeyHash, type KeyedHash } from '../../lib/keyed-hash.js';
import { keyPrefix, newKeySecret, plausibleKey, KEY_PREFIX, SHOWN_RANDOM_CHARS } from './secret.js';
import { isScope } from './scopes.js';
import type { ApiKeyRecord } from './store.js';

/** The scope that mints and revokes keys. */
const MINT_SCOPE = 'api_key:write';

export const DEFAULT_EXPIRY_DAYS = 30;
export const MAX_EXPIRY_DAYS = 365;
const DAY_MS = 86_400_000;
/** last_used_at is written at most this often per key, so reads do not become writes. */
const LAST_USED_GRANULARITY_MS = 60_000;

export interface CreateKeyInput {
  name: string;
  scopes: string[];
  project_id?: string;
  org_wide?: boolean;
  expires_in_days?: number;
}

export interface UpdateKeyInput {
  name?: string;
  scopes?: string[];
}

export function keyStatus(k: ApiKeyRecord, now: Date): 'active' | 'revoked' | 'expired' {
  if (k.status === 'revoked') return 'revoked';
  return Date.parse(k.expiresAt) <= now.getTime() ? 'expired' : 'active';
}

export function keyView(k: ApiKeyRecord, now: Date) {
  return {
    id: k.id,
    name: k.name,
    status: keyStatus(k, now),
    project_id: k.projectId,
    org_wide: k.projectId === null,
    // A key stored before prefixes were shortened shows no more than a new one until its first use rewrites it.
    key_prefix: k.keyPrefix.slice(0, KEY_PREFIX.length + SHOWN_RANDOM_CHARS),
    scopes: k.scopes,
    expires_at: k.expiresAt,
    last_used_at: k.lastUsedAt,
    created_at: k.createdAt,
    revoked_at: k.revokedAt,
    user_id: k.userId,
    created_by_api_key_id: k.createdByApiKeyId,
    created_by_state: k.createdByState,
  };
}

function checkScopes(scopes: string[]): void {
  if (scopes.length === 0) throw invalidRequest('scopes must name at least one scope');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) throw invalidRequest(`unknown scope: ${unknown.join(', ')}`, { unknown_scopes: unknown });
  if (new Set(scopes).size !== scopes.length) throw invalidRequest('scopes must not repeat');
}

export class ApiKeyService {
  constructor(
    private readonly store: ControlStore,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly keyHash: KeyedHash,
  ) {}

  /**
   * The stored record of a presented secret. A key stored under the old unkeyed SHA-256 is found by
   * that hash once and rewritten to the keyed hash (and the short prefix) on this first use.
   */
  private async findBySecret(secret: string): Promise<ApiKeyRecord | undefined> {
    const keyed = this.keyHash.hash(secret);
    const k = await this.store.apiKeys.findByHash(keyed);
    if (k) return k;
    const old = await this.store.apiKeys.findByHash(legacyKeyHash(secret));
    if (!old) return undefined;
    const upgraded = { keyHash: keyed, keyPrefix: keyPrefix(secret) };
    await this.store.apiKeys.update(old.id, upgraded);
    return { ...old, ...upgraded };
  }

  /** Resolves a presented secret to a principal, re-reading the key's record on every call (rule 6). */
  async authenticate(secret: string): Promise<Principal | undefined> {
    if (!plausibleKey(secret)) return undefined;
    const k = await this.findBySecret(secret);
    const now = this.clock.now();
    if (!k || keyStatus(k, now) !== 'active') return undefined;
    if (!k.lastUsedAt || now.getTime() - Date.parse(k.lastUsedAt) >= LAST_USED_GRANULARITY_MS) {
      await this.store.apiKeys.update(k.id, { lastUsedAt: now.toISOString() });
    }
    return {
      kind: 'api_key',
      keyId: k.id,
      signInId: null,
      connectionId: null,
      orgId: k.orgId,
      projectId: k.projectId,
      scopes: new Set(k.scopes),
      userId: k.userId,
      role: null,
      writeFrozen: k.writeHeld === true,
    };
  }

  async create(caller: Principal, input: CreateKeyInput) {
    const name = input.name.trim();
    if (name === '') throw invalidRequest('name must not be empty');
    checkScopes(input.scopes);
    const orgWide = input.org_wide === true;
    if (orgWide === (input.project_id !== undefined))
      throw invalidRequest('give exactly one of project_id and org_wide: true');
    const lacking = input.scopes.filter((s) => !caller.scopes.has(s));
    if (lacking.length) throw permissionDenied(`a key cannot grant scopes its creator lacks: ${lacking.join(', ')}`);
    if (caller.projectId !== null && (orgWide || input.project_id !== caller.projectId))
      throw permissionDenied('a project-scoped key can only mint keys for its own project');
    if (input.project_id !== undefined && !(await this.store.projects.find(caller.orgId, input.project_id)))
      throw notFound('project');
    const days = input.expires_in_days ?? DEFAULT_EXPIRY_DAYS;
    const now = this.clock.now();
    const secret = newKeySecret();
    const rec: ApiKeyRecord = {
      id: this.ids.uuid(),
      orgId: caller.orgId,
      projectId: orgWide ? null : input.project_id!,
      name,
      keyHash: this.keyHash.hash(secret),
      keyPrefix: keyPrefix(secret),
      scopes: input.scopes,
      status: 'active',
      expiresAt: new Date(now.getTime() + days * DAY_MS).toISOString(),
      lastUsedAt: null,
      createdAt: now.toISOString(),
      revokedAt: null,
      // A key minted by a person, or by a key that a person minted, belongs to that person.
      userId: caller.userId,
      createdByApiKeyId: caller.kind === 'api_key' ? caller.keyId : null,
      createdByState: caller.kind === 'api_key' ? 'api_key' : 'user',
    };
    await this.store.transaction(async (tx) => {
      await tx.apiKeys.insert(rec);
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: rec.projectId,
        eventType: 'api_key_created',
        resource: 'api_key',
        action: 'create',
        result: 'success',
        toolName: null,
        targetId: rec.id,
        targetApiKeyId: rec.id,
        metadata: { scopes: rec.scopes, via: 'api' },
      });
    });
    return { ...keyView(rec, now), key: secret };
  }

  /** The key as the caller may see it: another organization's or another project's key is missing. */
  private async visible(caller: Principal, id: string): Promise<ApiKeyRecord> {
    const k = await this.store.apiKeys.findById(caller.orgId, id);
    if (!k || (caller.projectId !== null && k.projectId !== caller.projectId)) throw notFound('api key');
    return k;
  }

  async get(caller: Principal, id: string) {
    return keyView(await this.visible(caller, id), this.clock.now());
  }

  async list(caller: Principal, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    return this.store.apiKeys.list({ orgId: caller.orgId, projectId: caller.projectId ?? undefined, ...opts });
  }

  async update(caller: Principal, id: string, input: UpdateKeyInput) {
    const k = await this.visible(caller, id);
    if (k.status === 'revoked') throw new ApiError(409, 'conflict', 'a revoked key cannot be changed');
    const name = input.name?.trim();
    if (name === '') throw invalidRequest('name must not be empty');
    if (input.scopes !== undefined) {
      checkScopes(input.scopes);
      const widened = input.scopes.filter((s) => !k.scopes.includes(s));
      if (widened.length) throw invalidRequest(`scopes can only be narrowed; not held by the key: ${widened.join(', ')}`);
    }
    const nameChanges = name !== undefined && name !== k.name;
    // Scopes are a distinct subset here, so they change exactly when fewer are named.
    const scopesChange = input.scopes !== undefined && input.scopes.length !== k.scopes.length;
    if (!nameChanges && !scopesChange) throw invalidRequest('the request changes nothing');
    const now = this.clock.now();
    const next = { ...k, name: nameChanges ? name! : k.name, scopes: scopesChange ? input.scopes! : k.scopes };
    await this.store.transaction(async (tx) => {
      await tx.apiKeys.update(k.id, { name: next.name, scopes: next.scopes });
      // Streams admitted with the key re-check it at once, on every node (docs/several-nodes.md).
      if (scopesChange) await tx.changes.publish({ topic: 'api_key.changed', keyId: k.id });
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: k.projectId,
        eventType: 'api_key_updated',
        resource: 'api_key',
        action: 'update',
        result: 'success',
        toolName: null,
        targetId: k.id,
        targetApiKeyId: k.id,
        metadata: { scopes: next.scopes, previous_scopes: k.scopes, via: 'api', ...(nameChanges ? { previous_name: k.name } : {}) },
      });
    });
    return keyView(next, now);
  }

  private revokedListeners: ((k: { id: string; orgId: string; projectId: string | null }) => Promise<unknown>)[] = [];

  /**
   * Runs `fn` after each revocation through the API has committed (the killed-credential signals of the key
   * clear at once, context.ts). A listener's failure never undoes or fails the revocation: the minute sweep
   * (`signals.killed_credentials`) clears what it missed.
   */
  onRevoked(fn: (k: { id: string; orgId: string; projectId: string | null }) => Promise<unknown>): void {
    this.revokedListeners.push(fn);
  }

  async revoke(caller: Principal, id: string) {
    const k = await this.visible(caller, id);
    const now = this.clock.now();
    if (k.status === 'revoked') return keyView(k, now); // permanent; revoking again changes nothing
    const next: ApiKeyRecord = { ...k, status: 'revoked', revokedAt: now.toISOString() };
    await this.store.transaction(async (tx) => {
      await refuseLockout(tx, k, now);
      await tx.apiKeys.update(k.id, { status: 'revoked', revokedAt: next.revokedAt });
      await tx.changes.publish({ topic: 'api_key.changed', keyId: k.id });
      await this.audit.record(tx, caller, caller.orgId, revokedEntry(k, 'api'));
    });
    for (const fn of this.revokedListeners) await fn(k).catch(() => undefined);
    return keyView(next, now);
  }

  /**
   * A removed member's keys (minted by them, or by a key they minted) stop working with the
   * membership: revoked in the removal's transaction, each with its own audit record.
   */
  async revokeForMember(tx: ControlStores, orgId: string, userId: string, at: string): Promise<number> {
    const revoked = await tx.apiKeys.revokeForUser(orgId, userId, at);
    for (const k of revoked) {
      await tx.changes.publish({ topic: 'api_key.changed', keyId: k.id });
      await this.audit.record(tx, 'system', orgId, revokedEntry(k, 'member_removed'));
    }
    return revoked.length;
  }
}

/**
 * Revoking the organization's last way to mint keys would lock everyone out for good (there is no
 * other way in): the last active organization-wide key holding `api_key:write`, while no owner or
 * admin can sign in to mint another. Refused with 409; mint the replacement first, then revoke.
 */
async function refuseLockout(tx: ControlStores, k: ApiKeyRecord, now: Date): Promise<void> {
  if (k.projectId !== null || !k.scopes.includes(MINT_SCOPE) || Date.parse(k.expiresAt) <= now.getTime()) return;
  const others = await tx.apiKeys.activeOrgWide(k.orgId, k.id, now.toISOString());
  if (others.some((o) => o.scopes.includes(MINT_SCOPE))) return;
  if ((await tx.memberships.lockOwners(k.orgId)).length > 0) return;
  if ((await tx.memberships.list(k.orgId, { limit: 1000 })).some((m) => m.role === 'admin')) return;
  throw conflict(
    `this is the organization's last key that can mint keys (${MINT_SCOPE}) and no owner or admin can sign in: revoking it would lock everyone out. Create its replacement first (svc api-keys create NAME --org-wide --scope ...), then revoke this one`,
  );
}

/** The audit entry of a key's revocation; `via` says what revoked it. */
function revokedEntry(k: ApiKeyRecord, via: 'api' | 'member_removed'): AuditEntry {
  return {
    projectId: k.projectId,
    eventType: 'api_key_revoked',
    resource: 'api_key',
    action: 'revoke',
    result: 'success',
    toolName: null,
    targetId: k.id,
    targetApiKeyId: k.id,
    metadata: { scopes: k.scopes, via },
  };
}
