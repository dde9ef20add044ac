/**
 * Containment of an agent under a two-person rule (docs/governance-quarantines.md).
 *
 * - Request (`quarantine:request`): pending; touches no credential; one open containment per target.
 * - Approve (`quarantine:approve`, by another person): resolves the target to the exact set of API keys
 *   and acts on each. A freeze is a hold on the key's telemetry writes (the key reads on); a revocation is
 *   for good. Writes receipt entries AUTHORIZED then QUARANTINED and an authority edge.
 * - Withdraw (pending only), lift (active only; releases only this containment's holds: a key still held
 *   by another active containment stays frozen until the last lift), reenforce (active only; retries the
 *   credentials recorded `failed`).
 *
 * People, not keys, are compared: a second key of the requester is the same person. A key with no person
 * behind it is its own identity. Moves are conditional on the state, so concurrent moves are safe: one
 * wins, the other is told the state is wrong.
 */
import { conflict, invalidRequest, notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import type { ProjectRecord } from '../projects/store.js';
import {
  CONTAINMENT_POLICY,
  DEFAULT_ACTION,
  effectOf,
  type EnforcementState,
  MAX_REASON,
  type QuarantineAction,
  type QuarantineStatus,
  type TargetKind,
} from './model.js';
import type { MediatedInput } from '../receipts/service.js';
import { newQuarantine, type Actor, type CredentialOutcome, type QuarantineRecord } from './store.js';

export const REQUEST = 'quarantine:request';
export const APPROVE = 'quarantine:approve';
/** Reads: either containment scope, or `agents:read` (a security reader sees containments). */
export const READ_SCOPES = [REQUEST, APPROVE, 'agents:read'] as const;

/** The API keys a target resolves to, and the sightings no key can be held for (OAuth tokens). */
export interface ResolvedTarget {
  apiKeyIds: string[];
  unenforceableSightings: number;
}

/** Resolves targets to credentials: from the sightings of an observation key, the keys of an asset, one key. */
export interface TargetResolver {
  /** undefined: the target names nothing (an unknown key or asset). */
  resolve(orgId: string, projectId: string, kind: TargetKind, target: string): Promise<ResolvedTarget | undefined>;
}

export interface RequestInput {
  asset_id?: string;
  observation_key?: string;
  api_key_id?: string;
  reason: string;
  action?: QuarantineAction;
  environment?: string;
  request_id?: string;
}

/** The person behind a principal, or the key itself when no person is (rule: people are compared, not keys). */
export function identityOf(a: Actor): string {
  return a.userId !== null ? `user:${a.userId}` : `api_key:${a.apiKeyId ?? 'platform'}`;
}

const actorOf = (p: Principal): Actor => ({ userId: p.userId, apiKeyId: p.keyId });

function requireReason(reason: unknown, what: string): string {
  if (typeof reason !== 'string' || reason.trim() === '') throw invalidRequest(`${what} is required`);
  if (reason.length > MAX_REASON) throw invalidRequest(`${what} must be at most ${MAX_REASON} characters`);
  return reason;
}

const wrongState = (q: QuarantineRecord, move: string, from: QuarantineStatus) =>
  invalidRequest(`cannot ${move} a containment that is ${q.status}: only a ${from} containment can be`, { status: q.status });

/** The inventory's hooks: an asset-targeted containment marks the asset while it is active; killed-credential signals. */
export interface AssetMarks {
  markQuarantine(assetId: string, quarantineId: string | null, actor: string): Promise<unknown>;
}

/** The review-signal part containment raises and clears KILLED_ASSET_CREDENTIAL through (assets/signals.ts). */
export interface KilledCredentialSignals {
  raiseKilledCredential(i: { orgId: string; projectId: string; quarantineId: string; apiKeyId: string; assetId: string | null }): Promise<void>;
  clearKilledCredentials(
    projectId: string,
    stillHeld: (s: { quarantineId: string; apiKeyId: string }) => Promise<'held' | 'containment_lifted' | 'key_revoked'>,
    by?: string,
  ): Promise<number>;
}

/** The receipt part: mediated entries appended inside the approval's transaction (domains/receipts). */
export interface MediatedReceipts {
  appendMediated(tx: ControlStores, input: MediatedInput): Promise<unknown>;
}

/** The asset an observation key maps to, and the observation keys of an asset. */
export interface AssetKeys {
  keysOf(orgId: string, projectId: string, assetId: string): Promise<string[] | undefined>;
  assetsOfKeys(projectId: string, keys: string[]): Promise<Map<string, string>>;
}

export class QuarantineService {
  constructor(
    private readonly store: ControlStore,
    private readonly targets: TargetResolver,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly assets?: AssetMarks,
    private readonly signals?: KilledCredentialSignals,
    private readonly assetKeys?: AssetKeys,
    private readonly receipts?: MediatedReceipts,
  ) {}

  /**
   * After an ingest by API key `apiKeyId` that sighted these observation keys: telemetry that resolves to
   * an agent under an active `kill`, from a key outside the set its approval reached, raises
   * KILLED_ASSET_CREDENTIAL. Most projects have no active kill: one indexed read answers.
   */
  async noteSightings(orgId: string, projectId: string, apiKeyId: string, keys: string[]): Promise<void> {
    if (!this.signals || keys.length === 0) return;
    const kills = await this.store.quarantines.activeKills(projectId);
    if (kills.length === 0) return;
    const owners = this.assetKeys ? await this.assetKeys.assetsOfKeys(projectId, keys) : new Map<string, string>();
    for (const k of kills) {
      let assetId: string | null = null;
      if (k.targetKind === 'observation_key') {
        if (!keys.includes(k.target)) continue;
        assetId = owners.get(k.target) ?? null;
      } else if (k.targetKind === 'asset_id') {
        if (![...owners.values()].includes(k.target)) continue;
        assetId = k.target;
      } else continue; // a kill of one key names no agent
      const reached = (await this.store.quarantines.outcomes([k.id])).some((o) => o.apiKeyId === apiKeyId);
      if (!reached) await this.signals.raiseKilledCredential({ orgId, projectId, quarantineId: k.id, apiKeyId, assetId });
    }
  }

  /** Clears the killed-credential signals of a project whose kill was lifted or whose key was revoked. */
  async clearKilledCredentials(orgId: string, projectId: string): Promise<number> {
    if (!this.signals) return 0;
    const active = new Set((await this.store.quarantines.activeKills(projectId)).map((q) => q.id));
    return this.signals.clearKilledCredentials(projectId, async (s) => {
      if (!active.has(s.quarantineId)) return 'containment_lifted';
      const key = await this.store.apiKeys.findById(orgId, s.apiKeyId);
      return !key || key.status === 'revoked' ? 'key_revoked' : 'held';
    });
  }

  /**
   * A key was revoked: its killed-credential signals clear now (the revocation is the event), in its project,
   * or in every live project of the organization for an organization-wide key.
   */
  async keyRevoked(k: { orgId: string; projectId: string | null }, liveProjects: () => Promise<{ id: string; orgId: string }[]>): Promise<number> {
    if (k.projectId !== null) return this.clearKilledCredentials(k.orgId, k.projectId);
    let cleared = 0;
    for (const p of await liveProjects()) if (p.orgId === k.orgId) cleared += await this.clearKilledCredentials(p.orgId, p.id);
    return cleared;
  }

  async request(p: Principal, project: ProjectRecord, input: RequestInput): Promise<{ record: QuarantineRecord; created: boolean }> {
    const named = (['asset_id', 'observation_key', 'api_key_id'] as const).filter((k) => input[k] !== undefined);
    if (named.length !== 1) throw invalidRequest('give exactly one target: asset_id, observation_key or api_key_id', { accepted: ['asset_id', 'observation_key', 'api_key_id'] });
    const kind = named[0]!;
    const target = input[kind]!;
    const reason = requireReason(input.reason, 'reason');
    if (input.request_id !== undefined) {
      const first = await this.store.quarantines.findByRequestId(p.orgId, input.request_id);
      if (first) return { record: this.sameRequest(p, project, first), created: false };
    }
    const rec = newQuarantine({
      id: this.ids.uuid(),
      orgId: p.orgId,
      projectId: project.id,
      status: 'pending',
      action: input.action ?? DEFAULT_ACTION,
      targetKind: kind,
      target,
      reason,
      environment: input.environment ?? null,
      requestId: input.request_id ?? null,
      requestedBy: actorOf(p),
      requestedAt: this.clock.now().toISOString(),
    });
    const outcome = await this.store.quarantines.insert(rec, await this.agentOf(project.id, kind, target));
    if (outcome === 'request_id_taken') {
      // A concurrent request with the same id won: answer as its retry.
      const first = (await this.store.quarantines.findByRequestId(p.orgId, input.request_id!))!;
      return { record: this.sameRequest(p, project, first), created: false };
    }
    if (outcome === 'target_taken')
      throw conflict(
        kind === 'api_key_id'
          ? 'an open containment already holds this api_key_id: one pending or active containment per target'
          : 'an open containment already holds this agent (by its asset or one of its observation keys): one pending or active containment per agent',
      );
    return { record: rec, created: true };
  }

  /**
   * What a containment holds, as the key of "one open containment per agent": an asset and each of its
   * observation keys are the same agent; an observation key no asset claims is its own; a key target
   * names a credential, not an agent.
   */
  private async agentOf(projectId: string, kind: TargetKind, target: string): Promise<string> {
    if (kind === 'api_key_id') return `api_key_id:${target}`;
    const assetId = kind === 'asset_id' ? target : (await this.assetKeys?.assetsOfKeys(projectId, [target]))?.get(target);
    // The asset form is the one an asset target always had, so containments stored before this rule still collide.
    return assetId !== undefined ? `asset_id:${assetId}` : `observation_key:${target}`;
  }

  /**
   * A request id belongs to its requester's request in one project: a retry by the same person in the same
   * project gets it back; another person, or the same person in another project (whose containment it must not
   * show), gets a 409 that says nothing of it.
   */
  private sameRequest(p: Principal, project: ProjectRecord, q: QuarantineRecord): QuarantineRecord {
    if (identityOf(q.requestedBy) !== identityOf(actorOf(p)) || q.projectId !== project.id) throw conflict('request_id is already used');
    return q;
  }

  async get(p: Principal, id: string): Promise<QuarantineRecord> {
    const q = await this.store.quarantines.find(p.orgId, id);
    // Another project's containment answers like a missing one.
    if (!q || (p.projectId !== null && q.projectId !== p.projectId)) throw notFound('quarantine');
    return q;
  }

  async list(p: Principal, project: ProjectRecord | undefined, opts: { statuses?: QuarantineStatus[]; limit: number; after?: { requestedAt: string; id: string } }) {
    return this.store.quarantines.list({ orgId: p.orgId, projectId: project?.id ?? p.projectId ?? undefined, statuses: opts.statuses, limit: opts.limit, after: opts.after });
  }

  async approve(p: Principal, id: string): Promise<QuarantineRecord> {
    const q = await this.get(p, id);
    if (q.status !== 'pending') throw wrongState(q, 'approve', 'pending');
    if (identityOf(q.requestedBy) === identityOf(actorOf(p))) throw permissionDenied('a containment is approved by someone other than the person who requested it');
    const resolved = await this.targets.resolve(q.orgId, q.projectId, q.targetKind, q.target);
    if (!resolved) throw notFound(q.targetKind === 'api_key_id' ? 'api key' : q.targetKind === 'asset_id' ? 'asset' : 'observation key');
    const now = this.clock.now().toISOString();
    const effect = effectOf(q.action);
    const by = actorOf(p);
    // Activation, the credentials reached (holding at once: a freeze row holds the key from this commit),
    // the receipt entries and the authority edge: all or nothing.
    const won = await this.store.transaction(async (tx) => {
      if (!(await tx.quarantines.transition(q.id, 'pending', { to: 'active', by, at: now }))) return false;
      await tx.quarantines.setUnenforceableSightings(q.id, resolved.unenforceableSightings);
      const others = await tx.quarantines.otherHolds(resolved.apiKeyIds, q.id);
      // Each key's state changes with this commit (a freeze holds from it): every node hears of it (docs/several-nodes.md).
      for (const apiKeyId of resolved.apiKeyIds) await tx.changes.publish({ topic: 'api_key.changed', keyId: apiKeyId });
      for (const apiKeyId of resolved.apiKeyIds)
        await tx.quarantines.putOutcome({
          quarantineId: q.id,
          apiKeyId,
          effect,
          state: 'unknown',
          detailCode: effect === 'freeze' && others.has(apiKeyId) ? 'held_by_another_quarantine' : null,
          enforcedAt: now,
          releasedAt: null,
        });
      await this.receipts?.appendMediated(tx, this.receiptEntries(q, by, now));
      return true;
    });
    if (!won) throw wrongState((await this.get(p, id)), 'approve', 'pending');
    await this.enforce(q.orgId, (await this.store.quarantines.outcomes([q.id])).filter((o) => o.state !== 'verified'));
    if (q.targetKind === 'asset_id') await this.assets?.markQuarantine(q.target, q.id, identityOf(by));
    return this.get(p, id);
  }

  /**
   * Carries out and verifies each credential's effect, each on its own: a failure is recorded `failed`
   * (reenforce retries it) and never undoes the others. A freeze is verified by reading the key as the
   * authentication path reads it; a revocation by reading its status.
   */
  private async enforce(orgId: string, outcomes: CredentialOutcome[]): Promise<number> {
    for (const o of outcomes) {
      const { state, detail } = await this.enforceOne(orgId, o).catch(() => ({ state: 'failed' as const, detail: 'store_error' }));
      // Without a detail of its own, the outcome keeps the one it had (another containment holding the key).
      await this.store.quarantines.putOutcome({ ...o, state, detailCode: detail ?? o.detailCode });
    }
    return outcomes.length;
  }

  private async enforceOne(orgId: string, o: CredentialOutcome): Promise<{ state: EnforcementState; detail: string | null }> {
    const key = await this.store.apiKeys.findById(orgId, o.apiKeyId);
    if (!key) return { state: 'failed', detail: 'key_not_found' };
    if (o.effect === 'revoke') {
      const already = key.status === 'revoked';
      if (!already) {
        await this.store.apiKeys.update(key.id, { status: 'revoked', revokedAt: this.clock.now().toISOString() });
        await this.store.changes.publish({ topic: 'api_key.changed', keyId: key.id });
      }
      const after = await this.store.apiKeys.findById(orgId, o.apiKeyId);
      if (after?.status !== 'revoked') return { state: 'failed', detail: 'revoke_not_verified' };
      return { state: 'verified', detail: already ? 'already_revoked' : null };
    }
    const after = await this.store.apiKeys.findByHash(key.keyHash);
    return after?.writeHeld === true ? { state: 'verified', detail: null } : { state: 'failed', detail: 'hold_not_verified' };
  }

  /** Whether the part's effect is in place, read as the authentication path reads the key (nothing is changed). */
  private async inPlace(orgId: string, o: CredentialOutcome): Promise<boolean> {
    const key = await this.store.apiKeys.findById(orgId, o.apiKeyId);
    if (!key) return false;
    if (o.effect === 'revoke') return key.status === 'revoked';
    return (await this.store.apiKeys.findByHash(key.keyHash))?.writeHeld === true;
  }

  async reenforce(p: Principal, id: string): Promise<{ record: QuarantineRecord; retried: number }> {
    const q = await this.get(p, id);
    if (q.status !== 'active') throw wrongState(q, 'reenforce', 'active');
    // A part left `unknown` (the server stopped between the approval's commit and its enforcement) is
    // checked first: in place, it is verified; not in place (a revocation never carried out), it is
    // failed and re-attempted with the others.
    for (const o of (await this.store.quarantines.outcomes([q.id])).filter((x) => x.state === 'unknown')) {
      const inPlace = await this.inPlace(q.orgId, o).catch(() => false);
      await this.store.quarantines.putOutcome({ ...o, state: inPlace ? 'verified' : 'failed', detailCode: inPlace ? o.detailCode : (o.detailCode ?? 'not_in_place') });
    }
    const failed = (await this.store.quarantines.outcomes([q.id])).filter((o) => o.state === 'failed');
    const retried = await this.enforce(q.orgId, failed.map((o) => ({ ...o, detailCode: o.detailCode === 'held_by_another_quarantine' ? o.detailCode : null })));
    return { record: await this.get(p, id), retried };
  }

  async lift(p: Principal, id: string, reasonIn: unknown): Promise<QuarantineRecord> {
    const reason = requireReason(reasonIn, 'reason');
    const q = await this.get(p, id);
    if (q.status !== 'active') throw wrongState(q, 'lift', 'active');
    const now = this.clock.now().toISOString();
    const won = await this.store.transaction(async (tx) => {
      if (!(await tx.quarantines.transition(q.id, 'active', { to: 'lifted', by: actorOf(p), at: now, reason }))) return false;
      // Only this containment's holds: a key another active containment holds stays frozen until the last lift.
      await tx.quarantines.releaseHolds(q.id, now);
      for (const o of await tx.quarantines.outcomes([q.id])) await tx.changes.publish({ topic: 'api_key.changed', keyId: o.apiKeyId });
      return true;
    });
    if (!won) throw wrongState(await this.get(p, id), 'lift', 'active');
    if (q.targetKind === 'asset_id') await this.assets?.markQuarantine(q.target, null, identityOf(actorOf(p)));
    if (q.action === 'kill') await this.clearKilledCredentials(q.orgId, q.projectId);
    return this.get(p, id);
  }

  async withdraw(p: Principal, id: string, reasonIn: unknown): Promise<QuarantineRecord> {
    const reason = requireReason(reasonIn, 'reason');
    const q = await this.get(p, id);
    const own = identityOf(q.requestedBy) === identityOf(actorOf(p));
    const needs = own ? REQUEST : APPROVE;
    if (!p.scopes.has(needs))
      throw permissionDenied(own ? `withdrawing your own containment needs scope ${REQUEST}` : `withdrawing someone else's containment needs scope ${APPROVE}`);
    if (q.status !== 'pending') throw wrongState(q, 'withdraw', 'pending');
    const won = await this.store.quarantines.transition(q.id, 'pending', { to: 'withdrawn', by: actorOf(p), at: this.clock.now().toISOString(), reason });
    if (!won) throw wrongState(await this.get(p, id), 'withdraw', 'pending');
    return this.get(p, id);
  }

  outcomes(ids: string[]) {
    return this.store.quarantines.outcomes(ids);
  }

  /**
   * AUTHORIZED (the second person's approval under the containment policy; it exercises the approver's
   * authority edge through the tool `quarantine` for the purpose `containment:<action>`) then QUARANTINED.
   */
  private receiptEntries(q: QuarantineRecord, approver: Actor, at: string): MediatedInput {
    const common = {
      requesterPrincipal: identityOf(q.requestedBy),
      effectClass: 'EFFECT_CLASS_INTERNAL' as const,
      destructive: q.action !== 'freeze_writes',
      occurredAt: at,
    };
    return {
      orgId: q.orgId,
      projectId: q.projectId,
      actionId: q.id,
      policy: CONTAINMENT_POLICY,
      subject: { kind: q.targetKind, id: q.target },
      source: 'quarantine',
      entries: [
        { ...common, state: 'RECEIPT_STATE_AUTHORIZED', approverPrincipal: identityOf(approver), tool: 'quarantine', purpose: `containment:${q.action}` },
        { ...common, state: 'RECEIPT_STATE_QUARANTINED' },
      ],
    };
  }
}
