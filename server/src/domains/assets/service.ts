/**
 * The agent inventory (assets), attribution reads, review signals and their notification outbox
 * (docs/governance.md).
 *
 * - An asset is declared (`declare`) or discovered (`discoverAssets`): every observation key sighted in
 *   telemetry maps to exactly one asset of its project; a key nobody declared gets a `discovered` (shadow)
 *   asset and raises SHADOW_ASSET.
 * - Reviews are the only writer of risk_tier and approval; classification and ownership are
 *   independent writes. Who acts comes from the credential. Every write appends a version.
 * - Signals are deduplicated by (project, dedup key): a repeat raise refreshes `last_seen_at` without a
 *   second notification, a closed signal is never reopened. Every open and close is written to the
 *   outbox in the transaction of the change.
 */
import { conflict, invalidRequest, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import type { ProjectService } from '../projects/service.js';
import type { ProjectRecord } from '../projects/store.js';
import type { AgentRunsStore, SightingRow } from '../agent-runs/store.js';
import {
  ACTIVE_STATUSES,
  type ApprovalState,
  type AssetChange,
  type AssetFilter,
  type AssetPosition,
  type AssetRecord,
  type DataClassification,
  type OutboxEvent,
  type RiskTier,
  type SignalFilter,
  type SignalKind,
  type SignalPosition,
  type SignalRecord,
  type SignalSeverity,
} from './store.js';

/** Days an asset may sit in the inventory before UNREVIEWED_ASSET / UNOWNED_ASSET are raised (SVC_ASSET_REVIEW_WINDOW_DAYS). */
export const DEFAULT_REVIEW_WINDOW_DAYS = 7;

/** Severity of each kind (the spec leaves them to us; docs/governance.md explains the choice). */
export const SEVERITY_OF: Record<SignalKind, SignalSeverity> = {
  REVIEW_SIGNAL_KIND_SHADOW_ASSET: 'REVIEW_SIGNAL_SEVERITY_HIGH',
  REVIEW_SIGNAL_KIND_ABOM_DRIFT: 'REVIEW_SIGNAL_SEVERITY_HIGH',
  REVIEW_SIGNAL_KIND_CONFIG_UNREGISTERED: 'REVIEW_SIGNAL_SEVERITY_MEDIUM',
  REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL: 'REVIEW_SIGNAL_SEVERITY_CRITICAL',
  REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM: 'REVIEW_SIGNAL_SEVERITY_HIGH',
  REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET: 'REVIEW_SIGNAL_SEVERITY_MEDIUM',
  REVIEW_SIGNAL_KIND_UNOWNED_ASSET: 'REVIEW_SIGNAL_SEVERITY_LOW',
  REVIEW_SIGNAL_KIND_REVOKED_AUTHORITY_EXERCISED: 'REVIEW_SIGNAL_SEVERITY_CRITICAL',
};

/** The narrow read of the telemetry store discovery and attribution need. */
export type SightingsReader = Pick<AgentRunsStore, 'identityKeys' | 'sightings'>;

/** Who acted, as a bounded identifier: the person behind the credential, else the API key. */
export function principalRef(p: Principal): string {
  if (p.userId) return `user:${p.userId}`;
  if (p.keyId) return `api_key:${p.keyId}`;
  return p.connectionId ? `oauth:${p.connectionId}` : `org:${p.orgId}`;
}

const SYSTEM = 'system';
const usToIso = (us: number) => new Date(Math.floor(us / 1000)).toISOString();

export interface DeclareInput {
  name: string;
  description?: string;
  observation_keys?: string[];
}
export interface ReviewInput {
  approval_state: ApprovalState;
  risk_tier: RiskTier;
  reason: string;
}
export interface ClassifyInput {
  data_classification: DataClassification;
  reason: string;
}
export interface OwnershipInput {
  owner_team?: string | null;
  owner_principal?: string | null;
}

export interface Credentials {
  source: string;
  apiKeyId: string;
  firstSeenUs: number;
  lastSeenUs: number;
  sightingCount: number;
}

/** One observation key's mapping and who sent it; `sightings` is undefined when the telemetry store could not be read. */
export interface Mapping {
  observationKey: string;
  assetId: string | null;
  sightings?: SightingRow[];
}

export interface Attribution {
  availability: 'answered' | 'unavailable';
  unavailableReason?: string;
  mappings: Mapping[];
}

export class AssetService {
  /** project:key pairs known to map to an asset (so ingest asks the control store only about new keys). */
  private readonly known = new Set<string>();
  private pending: Promise<unknown> = Promise.resolve();
  private lastSeq = 0;

  constructor(
    private readonly control: ControlStore,
    private readonly projects: ProjectService,
    private readonly telemetry: SightingsReader,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    readonly reviewWindowDays = DEFAULT_REVIEW_WINDOW_DAYS,
  ) {}

  private now() {
    return this.clock.now().toISOString();
  }

  // ---- reads

  /** The asset when the credential may see it; a foreign, missing or other-project asset is the same 404. */
  async get(caller: Principal, id: string, selector?: string): Promise<AssetRecord> {
    const a = await this.control.assets.find(id);
    if (!a || a.orgId !== caller.orgId || (selector !== undefined && selector !== '' && selector !== a.projectId)) throw notFound('asset');
    try {
      await this.projects.get(caller, a.projectId);
    } catch {
      throw notFound('asset');
    }
    return a;
  }

  list(filter: AssetFilter, opts: { after?: AssetPosition; limit: number }) {
    return this.control.assets.list(filter, opts);
  }

  async versions(caller: Principal, id: string, selector: string | undefined, opts: { afterVersion?: number; limit: number }) {
    const a = await this.get(caller, id, selector);
    return this.control.assets.versions(a.id, opts);
  }

  // ---- writes

  async declare(caller: Principal, project: ProjectRecord, input: DeclareInput): Promise<AssetRecord> {
    const keys = input.observation_keys ?? [];
    if (new Set(keys).size !== keys.length) throw invalidRequest('observation_keys must not repeat a key');
    const at = this.now();
    const asset = newAsset({
      id: this.ids.uuid(),
      orgId: project.orgId,
      projectId: project.id,
      name: input.name,
      description: input.description ?? null,
      origin: 'declared',
      createdBy: principalRef(caller),
      createdAt: at,
      observationKeys: [...keys].sort(codePoint),
    });
    await this.control.transaction(async (tx) => {
      if (!(await tx.assets.mapKeys(project.id, asset.id, keys, at))) {
        const taken = await tx.assets.assetsOfKeys(project.id, keys);
        const [key, owner] = [...taken][0] ?? ['', ''];
        throw conflict(`observation key "${key}" already maps to asset ${owner} in this project (a key maps to at most one asset)`);
      }
      await tx.assets.insert(asset);
      await this.appendVersion(tx, asset, 'declared', principalRef(caller), at);
    });
    for (const k of keys) this.known.add(`${project.id}\n${k}`);
    return asset;
  }

  async review(caller: Principal, id: string, selector: string | undefined, input: ReviewInput): Promise<AssetRecord> {
    if (input.approval_state === 'APPROVAL_STATE_APPROVED' && input.risk_tier === 'RISK_TIER_UNASSESSED')
      throw invalidRequest('an approval needs an assessed risk_tier: one of RISK_TIER_LOW, RISK_TIER_MEDIUM, RISK_TIER_HIGH, RISK_TIER_CRITICAL');
    const who = principalRef(caller);
    return this.write(caller, id, selector, 'review', (a, at) => ({
      ...a,
      approvalState: input.approval_state,
      riskTier: input.risk_tier,
      approvalReason: input.reason,
      approverPrincipal: who,
      reviewedAt: at,
      // quarantineId is left as it is: approving a quarantined asset does not lift the quarantine.
    }), async (tx, a, at) => {
      if (a.approvalState !== 'APPROVAL_STATE_UNREVIEWED')
        await this.clear(tx, a.id, ['REVIEW_SIGNAL_KIND_SHADOW_ASSET', 'REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET'], 'reviewed', who, at);
    });
  }

  async classify(caller: Principal, id: string, selector: string | undefined, input: ClassifyInput): Promise<AssetRecord> {
    const who = principalRef(caller);
    return this.write(caller, id, selector, 'classification', (a, at) => ({
      ...a,
      dataClassification: input.data_classification,
      classificationReason: input.reason,
      classifiedBy: who,
      classifiedAt: at,
    }));
  }

  async setOwnership(caller: Principal, id: string, selector: string | undefined, input: OwnershipInput): Promise<AssetRecord> {
    if (input.owner_team === undefined && input.owner_principal === undefined)
      throw invalidRequest('name owner_team, owner_principal or both (null clears one)');
    const who = principalRef(caller);
    return this.write(caller, id, selector, 'ownership', (a, at) => ({
      ...a,
      ownerTeam: input.owner_team === undefined ? a.ownerTeam : input.owner_team,
      ownerPrincipal: input.owner_principal === undefined ? a.ownerPrincipal : input.owner_principal,
      ownershipSetBy: who,
      ownershipSetAt: at,
    }), async (tx, a, at) => {
      if (a.ownerTeam !== null || a.ownerPrincipal !== null) await this.clear(tx, a.id, ['REVIEW_SIGNAL_KIND_UNOWNED_ASSET'], 'owner_set', who, at);
    });
  }

  /**
   * The quarantine part's hook: marks (or, with null, unmarks) the quarantine holding the asset. Reviews
   * never change it.
   */
  async markQuarantine(assetId: string, quarantineId: string | null, actor: string): Promise<AssetRecord> {
    return this.control.transaction(async (tx) => {
      const a = await tx.assets.find(assetId);
      if (!a) throw notFound('asset');
      const at = this.now();
      const next = { ...a, quarantineId, version: a.version + 1, updatedAt: at };
      if (!(await tx.assets.update(next, a.version))) throw conflict('the asset changed meanwhile; retry');
      await this.appendVersion(tx, next, 'quarantine', actor, at);
      return next;
    });
  }

  private async write(
    caller: Principal,
    id: string,
    selector: string | undefined,
    change: AssetChange,
    apply: (a: AssetRecord, at: string) => AssetRecord,
    after?: (tx: ControlStores, a: AssetRecord, at: string) => Promise<void>,
  ): Promise<AssetRecord> {
    await this.get(caller, id, selector);
    // Optimistic: the update applies only to the version it was computed from; a concurrent write makes
    // it try again on the newer row (every write lands, each as its own version).
    for (let attempt = 0; ; attempt++) {
      const done = await this.control.transaction(async (tx) => {
        const current = await tx.assets.find(id);
        if (!current) throw notFound('asset');
        const at = this.now();
        const next = { ...apply(current, at), version: current.version + 1, updatedAt: at };
        if (!(await tx.assets.update(next, current.version))) return undefined;
        await this.appendVersion(tx, next, change, principalRef(caller), at);
        await after?.(tx, next, at);
        return next;
      });
      if (done) return done;
      if (attempt >= 20) throw conflict('the asset is being changed by many writers at once; retry');
    }
  }

  private async appendVersion(tx: ControlStores, a: AssetRecord, change: AssetChange, actor: string | null, at: string) {
    await tx.assets.appendVersion({ assetId: a.id, version: a.version, projectId: a.projectId, change, actor, occurredAt: at, snapshot: a });
  }

  // ---- attribution

  /** Each key's current asset and the credentials that sent it; `unavailable` when the telemetry store could not be read. */
  async attribution(projectId: string, keys: string[]): Promise<Attribution> {
    const owners = await this.control.assets.assetsOfKeys(projectId, keys);
    let rows: SightingRow[];
    try {
      rows = keys.length ? await this.telemetry.sightings(projectId, keys) : [];
    } catch {
      return {
        availability: 'unavailable',
        unavailableReason: 'telemetry_unreadable',
        mappings: keys.map((k) => ({ observationKey: k, assetId: owners.get(k) ?? null })),
      };
    }
    return {
      availability: 'answered',
      mappings: keys.map((k) => ({ observationKey: k, assetId: owners.get(k) ?? null, sightings: rows.filter((r) => r.observationKey === k) })),
    };
  }

  // ---- discovery

  /**
   * Creates a discovered (shadow) asset for every sighted observation key that maps to none, raising
   * SHADOW_ASSET, and refreshes the shadow signals of keys sighted again. Idempotent and safe to run
   * concurrently (on any number of nodes): the key mapping's primary key lets one creator win.
   * Returns the assets it created.
   */
  async discoverAssets(projectId?: string): Promise<AssetRecord[]> {
    const projects = (await this.control.assets.liveProjects()).filter((p) => projectId === undefined || p.id === projectId);
    const created: AssetRecord[] = [];
    for (const p of projects) {
      let after: string | undefined;
      for (;;) {
        const keys = await this.telemetry.identityKeys(p.id, { after, limit: 500 });
        if (keys.length === 0) break;
        created.push(...(await this.discoverKeys(p, keys)));
        after = keys[keys.length - 1];
        if (keys.length < 500) break;
      }
    }
    return created;
  }

  private async discoverKeys(project: { id: string; orgId: string }, keys: string[]): Promise<AssetRecord[]> {
    const rows = await this.telemetry.sightings(project.id, keys);
    const lastSeen = new Map<string, number>();
    for (const r of rows) lastSeen.set(r.observationKey, Math.max(lastSeen.get(r.observationKey) ?? 0, r.lastSeenUs));
    const owners = await this.control.assets.assetsOfKeys(project.id, keys);
    const created: AssetRecord[] = [];
    for (const key of keys) {
      const seenAt = usToIso(lastSeen.get(key) ?? this.clock.now().getTime() * 1000);
      if (owners.has(key)) {
        // Sighted again: an active shadow signal moves its last_seen_at forward (no second notification).
        const s = await this.control.reviewSignals.findByDedup(project.id, shadowKey(key));
        if (s && ACTIVE_STATUSES.includes(s.status)) await this.control.reviewSignals.touch(s.id, seenAt);
      } else {
        const a = await this.createShadow(project, key, seenAt);
        if (a) created.push(a);
      }
      this.known.add(`${project.id}\n${key}`);
    }
    return created;
  }

  private async createShadow(project: { id: string; orgId: string }, key: string, seenAt: string): Promise<AssetRecord | undefined> {
    const at = this.now();
    const asset = newAsset({ id: this.ids.uuid(), orgId: project.orgId, projectId: project.id, name: key, origin: 'discovered', createdAt: at, observationKeys: [key] });
    return this.control.transaction(async (tx) => {
      // Another discovery (or a declaration) got there first: nothing to do.
      if (!(await tx.assets.mapKeys(project.id, asset.id, [key], at))) return undefined;
      await tx.assets.insert(asset);
      await this.appendVersion(tx, asset, 'discovered', SYSTEM, at);
      await this.raise(tx, {
        orgId: project.orgId,
        projectId: project.id,
        kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET',
        dedupKey: shadowKey(key),
        subjectRef: key,
        detailCode: 'undeclared_observation_key',
        assetId: asset.id,
        seenAt: seenAt > at ? seenAt : at,
      });
      return asset;
    });
  }

  /**
   * The ingest hook: after spans with these observation keys were committed, discovers the keys this
   * process has not seen mapped yet (in the background; `settled()` waits for it). A key already known
   * costs one set lookup.
   */
  noteSightings(projectId: string, keys: Iterable<string>, onError: (e: unknown) => void = () => {}): void {
    const fresh = [...new Set(keys)].filter((k) => !this.known.has(`${projectId}\n${k}`));
    if (fresh.length === 0) return;
    this.pending = this.pending
      .then(async () => {
        const p = (await this.control.assets.liveProjects()).find((x) => x.id === projectId);
        if (p) await this.discoverKeys(p, fresh.sort(codePoint));
      })
      .catch(onError);
  }

  /** Runs `fn` after the discoveries started so far (so it sees their assets); `settled()` waits for it too. */
  afterDiscovery(fn: () => Promise<unknown>): Promise<unknown> {
    const run = this.pending.then(fn);
    this.pending = run.catch(() => {});
    return run;
  }

  /** Resolves when the discoveries started by `noteSightings` so far have finished. */
  settled(): Promise<unknown> {
    return this.pending;
  }

  // ---- killed-credential signals (raised by the containment part)

  /**
   * REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL: telemetry from `apiKeyId` resolves to an agent under the
   * active kill `quarantineId`, but the key was outside the set the approval reached. One signal per
   * (kill, key): a repeat refreshes it.
   */
  async raiseKilledCredential(i: { orgId: string; projectId: string; quarantineId: string; apiKeyId: string; assetId: string | null }): Promise<void> {
    const kind: SignalKind = 'REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL';
    await this.control.transaction((tx) =>
      this.raise(tx, {
        orgId: i.orgId,
        projectId: i.projectId,
        kind,
        dedupKey: `${kind}:${i.quarantineId}:${i.apiKeyId}`,
        subjectRef: i.apiKeyId,
        detailCode: 'key_outside_approved_set',
        assetId: i.assetId,
        evidenceRef: i.quarantineId,
        seenAt: this.now(),
      }),
    );
  }

  /**
   * Clears the active killed-credential signals of a project whose containment is no longer active or
   * whose key is revoked (`stillHeld` answers for one signal); each clear is notified once.
   */
  async clearKilledCredentials(projectId: string, stillHeld: (s: { quarantineId: string; apiKeyId: string }) => Promise<'held' | 'containment_lifted' | 'key_revoked'>, by = 'platform') {
    const kind: SignalKind = 'REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL';
    let cleared = 0;
    for (;;) {
      const page = await this.control.reviewSignals.list({ projectId, kinds: [kind], statuses: [...ACTIVE_STATUSES] }, { limit: 200 });
      let changed = 0;
      for (const s of page) {
        const verdict = await stillHeld({ quarantineId: s.evidenceRef ?? '', apiKeyId: s.subjectRef });
        if (verdict === 'held') continue;
        const at = this.now();
        const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolvedBy: by, resolvedAt: at, resolutionCode: verdict };
        await this.control.transaction(async (tx) => {
          if (await tx.reviewSignals.transition(next, ACTIVE_STATUSES)) {
            await this.notify(tx, next, 'resolved', at);
            changed++;
          }
        });
      }
      cleared += changed;
      if (changed === 0 || page.length <= 200) return cleared;
    }
  }

  // ---- review window sweep

  /**
   * Raises UNREVIEWED_ASSET for every asset older than the review window with no approval decision, and
   * UNOWNED_ASSET for every one with neither owner; a repeat sweep refreshes `last_seen_at`. Returns how
   * many signals it opened.
   */
  async sweepReviewWindow(now: Date = this.clock.now()): Promise<{ opened: number; refreshed: number }> {
    const cutoff = new Date(now.getTime() - this.reviewWindowDays * 86_400_000).toISOString();
    const at = now.toISOString();
    let opened = 0;
    let refreshed = 0;
    let afterId: string | undefined;
    for (;;) {
      const page = await this.control.assets.pastWindow(cutoff, { afterId, limit: 200 });
      for (const a of page.slice(0, 200)) {
        const raises: RaiseInput[] = [];
        if (a.approvalState === 'APPROVAL_STATE_UNREVIEWED')
          raises.push({ ...assetSignal(a, 'REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET', a.reviewedAt ?? ''), detailCode: 'review_window_elapsed', seenAt: at });
        if (a.ownerTeam === null && a.ownerPrincipal === null)
          raises.push({ ...assetSignal(a, 'REVIEW_SIGNAL_KIND_UNOWNED_ASSET', a.ownershipSetAt ?? ''), detailCode: 'no_owner', seenAt: at });
        for (const r of raises) {
          const outcome = await this.control.transaction((tx) => this.raise(tx, r));
          if (outcome === 'opened') opened++;
          if (outcome === 'refreshed') refreshed++;
        }
      }
      if (page.length <= 200) break;
      afterId = page[199].id;
    }
    return { opened, refreshed };
  }

  // ---- signals

  /**
   * Opens the signal of this dedup key, or refreshes its `last_seen_at` when it is still active. A closed
   * signal stays closed. Only an open writes to the outbox.
   */
  async raise(tx: ControlStores, r: RaiseInput): Promise<'opened' | 'refreshed' | 'closed'> {
    const signal: SignalRecord = {
      id: this.ids.uuid(),
      orgId: r.orgId,
      projectId: r.projectId,
      dedupKey: r.dedupKey,
      kind: r.kind,
      status: 'REVIEW_SIGNAL_STATUS_OPEN',
      severity: SEVERITY_OF[r.kind],
      subjectRef: r.subjectRef,
      detailCode: r.detailCode,
      assetId: r.assetId,
      evidenceRef: r.evidenceRef ?? null,
      openedAt: r.seenAt,
      lastSeenAt: r.seenAt,
      acknowledgedBy: null,
      acknowledgedAt: null,
      resolvedBy: null,
      resolvedAt: null,
      resolutionCode: null,
      resolutionReason: null,
    };
    if (await tx.reviewSignals.insertIfNew(signal)) {
      await this.notify(tx, signal, 'opened', this.now());
      return 'opened';
    }
    const existing = await tx.reviewSignals.findByDedup(r.projectId, r.dedupKey);
    if (existing && ACTIVE_STATUSES.includes(existing.status)) {
      await tx.reviewSignals.touch(existing.id, r.seenAt);
      return 'refreshed';
    }
    return 'closed';
  }

  /** Auto-clear: resolves the active signals of these kinds about the asset, each notified once. */
  private async clear(tx: ControlStores, assetId: string, kinds: SignalKind[], code: string, by: string, at: string) {
    for (const s of await tx.reviewSignals.activeOfAsset(assetId, kinds)) {
      const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolvedBy: by, resolvedAt: at, resolutionCode: code };
      if (await tx.reviewSignals.transition(next, ACTIVE_STATUSES)) await this.notify(tx, next, 'resolved', at);
    }
  }

  private async notify(tx: ControlStores, s: SignalRecord, event: OutboxEvent, at: string) {
    this.lastSeq = Math.max(this.lastSeq + 1, this.clock.now().getTime() * 1000);
    await tx.outbox.append({
      id: this.ids.uuid(),
      seq: this.lastSeq,
      orgId: s.orgId,
      projectId: s.projectId,
      source: 'review_signals',
      event,
      signalId: s.id,
      kind: s.kind,
      severity: s.severity,
      subjectRef: s.subjectRef,
      assetId: s.assetId,
      occurredAt: at,
      payload: s,
      deliveredAt: null,
    });
  }

  listSignals(filter: SignalFilter, opts: { after?: SignalPosition; limit: number }) {
    return this.control.reviewSignals.list(filter, opts);
  }

  /** A signal the credential may see (404 otherwise, as for a missing one). */
  async getSignal(caller: Principal, id: string): Promise<SignalRecord> {
    const s = await this.control.reviewSignals.find(id);
    if (!s || s.orgId !== caller.orgId || (caller.projectId !== null && caller.projectId !== s.projectId)) throw notFound('review signal');
    return s;
  }

  /** OPEN -> ACKNOWLEDGED: someone is looking at it; it still auto-clears and is still refreshed. */
  async acknowledge(caller: Principal, id: string): Promise<SignalRecord> {
    const s = await this.getSignal(caller, id);
    if (s.status === 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED') return s;
    if (s.status !== 'REVIEW_SIGNAL_STATUS_OPEN') throw invalidRequest(`only an open signal can be acknowledged; this one is ${s.status}`);
    const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED', acknowledgedBy: principalRef(caller), acknowledgedAt: this.now() };
    if (!(await this.control.reviewSignals.transition(next, ['REVIEW_SIGNAL_STATUS_OPEN']))) return this.getSignal(caller, id);
    return next;
  }

  /** OPEN or ACKNOWLEDGED -> DISMISSED with a reason: closed for good (a later sighting does not reopen it); notified. */
  async dismiss(caller: Principal, id: string, reason: string): Promise<SignalRecord> {
    const s = await this.getSignal(caller, id);
    if (!ACTIVE_STATUSES.includes(s.status)) throw invalidRequest(`only an open or acknowledged signal can be dismissed; this one is ${s.status}`);
    const at = this.now();
    const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_DISMISSED', resolvedBy: principalRef(caller), resolvedAt: at, resolutionCode: 'dismissed', resolutionReason: reason };
    return this.control.transaction(async (tx) => {
      if (!(await tx.reviewSignals.transition(next, ACTIVE_STATUSES)))
        throw invalidRequest('the signal was closed meanwhile');
      await this.notify(tx, next, 'dismissed', at);
      return next;
    });
  }

  outbox(projectId: string, opts: { after?: { seq: number; id: string }; limit: number }) {
    return this.control.outbox.list(projectId, opts);
  }
}

export interface RaiseInput {
  orgId: string;
  projectId: string;
  kind: SignalKind;
  dedupKey: string;
  subjectRef: string;
  detailCode: string;
  assetId: string | null;
  evidenceRef?: string;
  seenAt: string;
}

const shadowKey = (observationKey: string) => `REVIEW_SIGNAL_KIND_SHADOW_ASSET:${observationKey}`;

/**
 * An asset signal whose dedup key names the episode: after a decision is taken back (a review back to
 * UNREVIEWED, both owners cleared) a later sweep opens a new signal instead of reopening the closed one.
 */
function assetSignal(a: AssetRecord, kind: SignalKind, episode: string) {
  return { orgId: a.orgId, projectId: a.projectId, kind, dedupKey: `${kind}:${a.id}:${episode}`, subjectRef: a.id, assetId: a.id };
}

const codePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A new asset (version 1): unreviewed, unassessed, unclassified, unowned, not quarantined, unless told otherwise. */
export function newAsset(a: Pick<AssetRecord, 'id' | 'orgId' | 'projectId' | 'name' | 'origin' | 'createdAt'> & Partial<AssetRecord>): AssetRecord {
  return {
    description: null,
    environment: null,
    approvalState: 'APPROVAL_STATE_UNREVIEWED',
    approverPrincipal: null,
    approvalReason: null,
    reviewedAt: null,
    riskTier: 'RISK_TIER_UNASSESSED',
    dataClassification: 'DATA_CLASSIFICATION_UNCLASSIFIED',
    classifiedBy: null,
    classificationReason: null,
    classifiedAt: null,
    ownerTeam: null,
    ownerPrincipal: null,
    ownershipSetBy: null,
    ownershipSetAt: null,
    quarantineId: null,
    version: 1,
    createdBy: null,
    updatedAt: a.createdAt,
    observationKeys: [],
    ...a,
  };
}
