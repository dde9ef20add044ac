/**
 * The agent inventory (assets) and attribution reads (docs/governance.md); the signals it raises and
 * clears live in signals.ts.
 *
 * - An asset is declared (`declare`) or discovered (`discoverAssets`): every observation key sighted in
 *   telemetry maps to exactly one asset of its project; a key nobody declared gets a `discovered` (shadow)
 *   asset and raises SHADOW_ASSET.
 * - Reviews are the only writer of risk_tier and approval; classification and ownership are
 *   independent writes. Who acts comes from the credential. Every write appends a version.
 */
import { conflict, invalidRequest, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import type { ProjectService } from '../projects/service.js';
import type { ProjectRecord } from '../projects/store.js';
import type { AgentRunsStore, SightingRow } from '../agent-runs/store.js';
import { codePoint, seenIn, type SeenIn } from './environments.js';
import { newAsset } from './new-asset.js';
import { principalRef, shadowKey, type SignalService } from './signals.js';
import {
  type ApprovalState,
  type AssetChange,
  type AssetFilter,
  type AssetPosition,
  type AssetRecord,
  type DataClassification,
  type RiskTier,
} from './store.js';

/** The narrow read of the telemetry store discovery and attribution need. */
export type SightingsReader = Pick<AgentRunsStore, 'identityKeys' | 'sightings' | 'sightingEnvironments'>;

export type { SeenIn };
export type AssetRead = AssetRecord & SeenIn;

const SYSTEM = 'system';
/** How often ingest refreshes the shadow signal of a key it already knows (docs/governance.md: "exact to a minute"). */
export const SIGHTING_REFRESH_MS = 30_000;
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
  /**
   * project:key pairs known to map to an asset, with when this process last refreshed the key's shadow
   * signal (ms): ingest asks the control store about new keys, and about a known key at most once per
   * SIGHTING_REFRESH_MS, so an open SHADOW_ASSET signal's last_seen_at stays exact to a minute.
   */
  private readonly known = new Map<string, number>();
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly control: ControlStore,
    private readonly projects: ProjectService,
    private readonly telemetry: SightingsReader,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly signals: SignalService,
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

  /** The assets with where they were seen (SeenIn), read from the sightings of their observation keys. */
  async withEnvironments<A extends AssetRecord>(assets: A[]): Promise<(A & SeenIn)[]> {
    const seen = await seenIn(this.telemetry, assets);
    return assets.map((a) => ({ ...a, ...(seen.get(a.id) ?? { environment: null, environments: null, environmentsTruncated: false }) }));
  }

  /** The asset's versions (snapshots) and where the asset is seen now (a snapshot does not keep it). */
  async versions(caller: Principal, id: string, selector: string | undefined, opts: { afterVersion?: number; limit: number }) {
    const a = await this.get(caller, id, selector);
    const [rows, seen] = await Promise.all([this.control.assets.versions(a.id, opts), seenIn(this.telemetry, [a])]);
    return { rows, seen: seen.get(a.id)! };
  }

  // ---- writes

  /**
   * Declares an asset. When its observation keys already map to one discovered (shadow) asset, and to no
   * other, the declaration adopts that asset instead of creating one: it becomes declared (`shadow`
   * false) with the declared name, description and any further keys, and keeps its history, review and
   * signals (the SHADOW_ASSET signal clears with a review, like every shadow signal). A key of a declared
   * asset, or keys of several assets, is 409.
   */
  async declare(caller: Principal, project: ProjectRecord, input: DeclareInput): Promise<{ asset: AssetRecord; adopted: boolean }> {
    const keys = input.observation_keys ?? [];
    if (new Set(keys).size !== keys.length) throw invalidRequest('observation_keys must not repeat a key');
    const at = this.now();
    const who = principalRef(caller);
    const taken = (owners: Map<string, string>) => {
      const [key, owner] = [...owners][0] ?? [];
      if (key === undefined) return conflict('an observation key of the declaration was mapped to another asset meanwhile (a key maps to at most one asset); retry');
      return conflict(`observation key "${key}" already maps to asset ${owner} in this project (a key maps to at most one asset)`);
    };
    const result = await this.control.transaction(async (tx) => {
      const owners = await tx.assets.assetsOfKeys(project.id, keys);
      if (owners.size > 0) {
        const ids = new Set(owners.values());
        const shadow = ids.size === 1 ? await tx.assets.find([...ids][0]!) : undefined;
        if (!shadow || shadow.origin !== 'discovered') throw taken(owners);
        const free = keys.filter((k) => !owners.has(k));
        if (!(await tx.assets.mapKeys(project.id, shadow.id, free, at))) throw taken(await tx.assets.assetsOfKeys(project.id, free));
        const next: AssetRecord = {
          ...shadow,
          origin: 'declared',
          name: input.name,
          description: input.description ?? shadow.description,
          createdBy: who,
          observationKeys: [...new Set([...shadow.observationKeys, ...keys])].sort(codePoint),
          version: shadow.version + 1,
          updatedAt: at,
        };
        // A concurrent declaration (or any write) of the same shadow asset got there first: it is the 409.
        if (!(await tx.assets.update(next, shadow.version))) throw taken(owners);
        await this.appendVersion(tx, next, 'declared', who, at);
        return { asset: next, adopted: true };
      }
      const asset = newAsset({
        id: this.ids.uuid(),
        orgId: project.orgId,
        projectId: project.id,
        name: input.name,
        description: input.description ?? null,
        origin: 'declared',
        createdBy: who,
        createdAt: at,
        observationKeys: [...keys].sort(codePoint),
      });
      if (!(await tx.assets.mapKeys(project.id, asset.id, keys, at))) throw taken(await tx.assets.assetsOfKeys(project.id, keys));
      await tx.assets.insert(asset);
      await this.appendVersion(tx, asset, 'declared', who, at);
      return { asset, adopted: false };
    });
    for (const k of keys) this.known.set(`${project.id}\n${k}`, this.clock.now().getTime());
    return result;
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
        await this.signals.clearOfAsset(tx, a.id, ['REVIEW_SIGNAL_KIND_SHADOW_ASSET', 'REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET'], 'reviewed', who, at);
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
      if (a.ownerTeam !== null || a.ownerPrincipal !== null) await this.signals.clearOfAsset(tx, a.id, ['REVIEW_SIGNAL_KIND_UNOWNED_ASSET'], 'owner_set', who, at);
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
      if (owners.has(key)) await this.signals.touchShadow(project.id, key, seenAt);
      else {
        const a = await this.createShadow(project, key, seenAt);
        if (a) created.push(a);
      }
      this.known.set(`${project.id}\n${key}`, this.clock.now().getTime());
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
      await this.signals.raise(tx, {
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
    const now = this.clock.now().getTime();
    const fresh: string[] = [];
    const again: string[] = [];
    for (const k of new Set(keys)) {
      const at = this.known.get(`${projectId}\n${k}`);
      if (at === undefined) fresh.push(k);
      else if (now - at >= SIGHTING_REFRESH_MS) {
        again.push(k);
        this.known.set(`${projectId}\n${k}`, now);
      }
    }
    if (fresh.length === 0 && again.length === 0) return;
    this.pending = this.pending
      .then(async () => {
        if (fresh.length) {
          const p = (await this.control.assets.liveProjects()).find((x) => x.id === projectId);
          if (p) await this.discoverKeys(p, fresh.sort(codePoint));
        }
        for (const k of again) await this.signals.touchShadow(projectId, k, new Date(now).toISOString());
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
}
