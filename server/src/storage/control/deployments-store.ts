import type { ConfigState, DeploymentFilter, DeploymentRecord, DeploymentStore, SnapshotRecord } from '../../domains/deployments/store.js';
import type { ControlDb } from './open.js';
import type { ConfigSnapshotsTable, DeploymentsTable } from './schema.js';

const toDeployment = (r: DeploymentsTable): DeploymentRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  assetId: r.asset_id,
  manifestId: r.manifest_id,
  environment: r.environment,
  release: r.release,
  configState: r.config_state as ConfigState,
  currentSnapshotId: r.current_snapshot_id,
  lastMatchSnapshotId: r.last_match_snapshot_id,
  createdAt: r.created_at,
  createdBy: r.created_by,
  updatedAt: r.updated_at,
});

const toSnapshot = (r: ConfigSnapshotsTable): SnapshotRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  deploymentId: r.deployment_id,
  components: JSON.parse(r.components),
  configSha256: r.config_sha256,
  matches: Number(r.matches) === 1,
  drift: r.drift === null ? null : JSON.parse(r.drift),
  registeredAt: r.registered_at,
  registeredBy: r.registered_by,
});

export class KyselyDeploymentStore implements DeploymentStore {
  constructor(private readonly db: ControlDb) {}

  async insert(d: DeploymentRecord) {
    await this.db
      .insertInto('deployments')
      .values({
        id: d.id,
        org_id: d.orgId,
        project_id: d.projectId,
        asset_id: d.assetId,
        manifest_id: d.manifestId,
        environment: d.environment,
        release: d.release,
        config_state: d.configState,
        current_snapshot_id: d.currentSnapshotId,
        last_match_snapshot_id: d.lastMatchSnapshotId,
        created_at: d.createdAt,
        created_by: d.createdBy,
        updated_at: d.updatedAt,
      })
      .execute();
  }

  async find(id: string) {
    const r = await this.db.selectFrom('deployments').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toDeployment(r);
  }

  async list(f: DeploymentFilter, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    let q = this.db.selectFrom('deployments').selectAll().where('project_id', '=', f.projectId);
    if (f.assetId !== undefined) q = q.where('asset_id', '=', f.assetId);
    if (f.environment !== undefined) q = q.where('environment', '=', f.environment);
    const after = opts.after;
    if (after) q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toDeployment);
  }

  async setConfig(d: DeploymentRecord, expectedSnapshotId: string | null) {
    const res = await this.db
      .updateTable('deployments')
      .set({ config_state: d.configState, current_snapshot_id: d.currentSnapshotId, last_match_snapshot_id: d.lastMatchSnapshotId, updated_at: d.updatedAt })
      .where('id', '=', d.id)
      .where((eb) => (expectedSnapshotId === null ? eb('current_snapshot_id', 'is', null) : eb('current_snapshot_id', '=', expectedSnapshotId)))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async insertSnapshot(s: SnapshotRecord) {
    await this.db
      .insertInto('config_snapshots')
      .values({
        id: s.id,
        org_id: s.orgId,
        project_id: s.projectId,
        deployment_id: s.deploymentId,
        components: JSON.stringify(s.components),
        config_sha256: s.configSha256,
        matches: s.matches ? 1 : 0,
        drift: s.drift === null ? null : JSON.stringify(s.drift),
        registered_at: s.registeredAt,
        registered_by: s.registeredBy,
      })
      .execute();
  }

  async snapshots(deploymentId: string, opts: { after?: { registeredAt: string; id: string }; limit: number }) {
    let q = this.db.selectFrom('config_snapshots').selectAll().where('deployment_id', '=', deploymentId);
    const after = opts.after;
    if (after) q = q.where((eb) => eb.or([eb('registered_at', '<', after.registeredAt), eb.and([eb('registered_at', '=', after.registeredAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('registered_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toSnapshot);
  }
}
