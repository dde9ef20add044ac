/**
 * Deployments and their field configuration (docs/signatures.md).
 *
 * A deployment is an asset running in an environment, attested by a signed bill of materials of that
 * asset. Its configuration is registered as snapshots (the components as configured in the field). The
 * review signals follow it:
 * - CONFIG_UNREGISTERED opens when the deployment is recorded (attested, nothing registered yet);
 * - ABOM_DRIFT opens when a registered configuration differs from the manifest's components; its
 *   `detail_code` is `<reason>:<kind>` of the first differing component (the deployment names it fully);
 *   repeated differing registrations refresh the one signal of the episode;
 * - both clear when a matching configuration is registered (that ends the episode: a later drift opens
 *   a new signal).
 */
import { conflict, invalidRequest, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { AbomService } from '../abom/service.js';
import { type AssetKind, kindName, kindValue } from '../abom/model.js';
import { principalRef, type SignalService } from '../assets/signals.js';
import type { ProjectRecord } from '../projects/store.js';
import { canonicalJson, sha256 } from '../signing/byte-contract.js';
import type { ConfigComponent, DeploymentFilter, DeploymentRecord, Drift, SnapshotRecord } from './store.js';

export interface CreateDeploymentInput {
  asset_id: string;
  manifest_id: string;
  environment: string;
  release?: string | null;
}

export interface RegisterConfigInput {
  deployment_id: string;
  components: { kind: AssetKind; ref: string; version?: string; content_sha256: string }[];
}

const UNREGISTERED = 'REVIEW_SIGNAL_KIND_CONFIG_UNREGISTERED';
const DRIFT = 'REVIEW_SIGNAL_KIND_ABOM_DRIFT';
export const unregisteredKey = (deploymentId: string) => `${UNREGISTERED}:${deploymentId}`;
/** One drift signal per episode: the episode is named by the last matching snapshot (`initial` before any). */
export const driftKey = (d: Pick<DeploymentRecord, 'id' | 'lastMatchSnapshotId'>) => `${DRIFT}:${d.id}:${d.lastMatchSnapshotId ?? 'initial'}`;

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byIdentity = (a: ConfigComponent, b: ConfigComponent) => a.kind - b.kind || cmp(a.ref, b.ref);
const compareConfig = (a: ConfigComponent, b: ConfigComponent) => byIdentity(a, b) || cmp(a.version, b.version) || cmp(a.content_sha256, b.content_sha256);
const same = (a: ConfigComponent, b: ConfigComponent) => compareConfig(a, b) === 0;

/** Sorted, and without exact repeats (a manifest may list one component twice under two `declared_by`). */
function normalize(components: ConfigComponent[]): ConfigComponent[] {
  return [...components].sort(compareConfig).filter((c, i, all) => i === 0 || !same(all[i - 1], c));
}

/**
 * The first difference between the manifest's components and a configuration, walking both in component
 * order: a component only the manifest has is `component_missing`, one only the configuration has
 * `component_unexpected`; the same (kind, ref) in another version `version_differs`, with other content
 * `content_differs`. undefined when they match.
 */
export function firstDrift(expected: ConfigComponent[], found: ConfigComponent[]): Drift | undefined {
  const e = normalize(expected);
  const f = normalize(found);
  let i = 0;
  let j = 0;
  while (i < e.length || j < f.length) {
    if (j >= f.length) return { reason: 'component_missing', expected: e[i] };
    if (i >= e.length) return { reason: 'component_unexpected', found: f[j] };
    if (same(e[i], f[j])) {
      i++;
      j++;
      continue;
    }
    const order = byIdentity(e[i], f[j]);
    if (order < 0) return { reason: 'component_missing', expected: e[i] };
    if (order > 0) return { reason: 'component_unexpected', found: f[j] };
    return { reason: e[i].version !== f[j].version ? 'version_differs' : 'content_differs', expected: e[i], found: f[j] };
  }
  return undefined;
}

/** `<reason>:<kind>`, e.g. `version_differs:model`: short, lowercase and groupable. */
export function driftCode(d: Drift): string {
  const c = (d.expected ?? d.found)!;
  return `${d.reason}:${(kindName(c.kind) ?? 'ASSET_KIND_UNSPECIFIED').replace(/^ASSET_KIND_/, '').toLowerCase()}`;
}

class LostRace extends Error {}

export class DeploymentService {
  constructor(
    private readonly control: ControlStore,
    private readonly abom: AbomService,
    private readonly signals: SignalService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Records a deployment attested by a valid manifest of the same asset; opens CONFIG_UNREGISTERED. */
  async create(caller: Principal, project: ProjectRecord, input: CreateDeploymentInput): Promise<DeploymentRecord> {
    const asset = await this.control.assets.find(input.asset_id);
    if (!asset || asset.orgId !== caller.orgId || asset.projectId !== project.id) throw notFound('asset');
    const m = await this.abom.get(caller, project, input.manifest_id);
    if (!m.valid || !m.members) throw invalidRequest(`manifest ${input.manifest_id} does not verify (${m.defect}); sign a fresh one`, { defect: m.defect });
    if (m.members.asset_id !== asset.id) throw invalidRequest('the manifest describes another asset');
    if (m.members.scope.environment !== '' && m.members.scope.environment !== input.environment)
      throw invalidRequest(`the manifest is scoped to environment "${m.members.scope.environment}"`);
    const release = input.release === undefined ? m.members.release : input.release;
    if (m.members.release !== null && release !== m.members.release) throw invalidRequest('release differs from the release of the attesting manifest');
    const at = this.clock.now().toISOString();
    const d: DeploymentRecord = {
      id: this.ids.uuid(),
      orgId: caller.orgId,
      projectId: project.id,
      assetId: asset.id,
      manifestId: m.record.id,
      environment: input.environment,
      release,
      configState: 'unregistered',
      currentSnapshotId: null,
      lastMatchSnapshotId: null,
      createdAt: at,
      createdBy: principalRef(caller),
      updatedAt: at,
    };
    await this.control.transaction(async (tx) => {
      await tx.deployments.insert(d);
      await this.signals.raise(tx, {
        orgId: d.orgId,
        projectId: d.projectId,
        kind: UNREGISTERED,
        dedupKey: unregisteredKey(d.id),
        subjectRef: d.id,
        detailCode: 'no_configuration_registered',
        assetId: d.assetId,
        evidenceRef: d.manifestId,
        seenAt: at,
      });
    });
    return d;
  }

  async get(caller: Principal, project: ProjectRecord, id: string): Promise<DeploymentRecord> {
    const d = await this.control.deployments.find(id);
    if (!d || d.orgId !== caller.orgId || d.projectId !== project.id) throw notFound('deployment');
    return d;
  }

  list(project: ProjectRecord, filter: Omit<DeploymentFilter, 'projectId'>, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    return this.control.deployments.list({ ...filter, projectId: project.id }, opts);
  }

  /** The current snapshots of these deployments, by id. */
  async currentSnapshots(ds: DeploymentRecord[]): Promise<Map<string, SnapshotRecord>> {
    const out = new Map<string, SnapshotRecord>();
    for (const d of ds) {
      if (d.currentSnapshotId === null) continue;
      const [s] = await this.control.deployments.snapshots(d.id, { limit: 0 });
      if (s) out.set(d.id, s);
    }
    return out;
  }

  async snapshots(caller: Principal, project: ProjectRecord, deploymentId: string, opts: { after?: { registeredAt: string; id: string }; limit: number }) {
    await this.get(caller, project, deploymentId);
    return this.control.deployments.snapshots(deploymentId, opts);
  }

  /**
   * Registers the configuration of a deployment and compares it with the attesting manifest: a match
   * clears CONFIG_UNREGISTERED and the episode's ABOM_DRIFT; a difference raises (or refreshes) ABOM_DRIFT.
   */
  async register(caller: Principal, project: ProjectRecord, input: RegisterConfigInput): Promise<{ deployment: DeploymentRecord; snapshot: SnapshotRecord }> {
    const first = await this.get(caller, project, input.deployment_id);
    const m = await this.abom.check((await this.control.manifests.find(first.manifestId))!);
    if (!m.members) throw conflict(`the attesting manifest cannot be read (${m.defect}); attest the deployment with a fresh manifest`);
    const components = input.components.map((c) => ({ kind: kindValue(c.kind), ref: c.ref, version: c.version ?? '', content_sha256: c.content_sha256 }));
    const sorted = [...components].sort(compareConfig);
    for (let i = 1; i < sorted.length; i++) if (same(sorted[i - 1], sorted[i])) throw invalidRequest('components repeats a component (same kind, ref, version and content)');
    const expected = m.members.components.map(({ declared_by: _who, ...c }) => c);
    const drift = firstDrift(expected, sorted) ?? null;
    const by = principalRef(caller);
    for (let attempt = 0; attempt < 5; attempt++) {
      const d = attempt === 0 ? first : (await this.control.deployments.find(first.id))!;
      const at = this.clock.now().toISOString();
      const snapshot: SnapshotRecord = {
        id: this.ids.uuid(),
        orgId: d.orgId,
        projectId: d.projectId,
        deploymentId: d.id,
        components: sorted,
        configSha256: sha256(canonicalJson(sorted)).toString('hex'),
        matches: drift === null,
        drift,
        registeredAt: at,
        registeredBy: by,
      };
      const next: DeploymentRecord = {
        ...d,
        configState: drift === null ? 'matching' : 'drifted',
        currentSnapshotId: snapshot.id,
        lastMatchSnapshotId: drift === null ? snapshot.id : d.lastMatchSnapshotId,
        updatedAt: at,
      };
      try {
        await this.control.transaction(async (tx) => {
          await tx.deployments.insertSnapshot(snapshot);
          if (!(await tx.deployments.setConfig(next, d.currentSnapshotId))) throw new LostRace();
          if (drift === null) {
            await this.signals.clearByDedup(tx, d.projectId, unregisteredKey(d.id), 'configuration_matches', by, at);
            await this.signals.clearByDedup(tx, d.projectId, driftKey(d), 'configuration_matches', by, at);
          } else {
            await this.signals.raise(tx, {
              orgId: d.orgId,
              projectId: d.projectId,
              kind: DRIFT,
              dedupKey: driftKey(d),
              subjectRef: d.id,
              detailCode: driftCode(drift),
              assetId: d.assetId,
              evidenceRef: snapshot.id,
              seenAt: at,
            });
          }
        });
        return { deployment: next, snapshot };
      } catch (e) {
        if (!(e instanceof LostRace)) throw e;
      }
    }
    throw conflict('the configuration of this deployment is being registered concurrently; retry');
  }
}
