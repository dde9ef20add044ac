/** The agent inventory in the control store (one code path for SQLite and PostgreSQL); review signals and the outbox are in signals-store.ts. */
import type { AssetFilter, AssetPosition, AssetRecord, AssetStore, AssetVersionRecord } from '../../domains/assets/store.js';
import type { ControlDb } from './open.js';
import type { AssetsTable } from './schema.js';

/** Keeps IN lists well below the parameter limits of both engines. */
const CHUNK = 500;

function chunks<T>(xs: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += CHUNK) out.push(xs.slice(i, i + CHUNK));
  return out;
}

const assetRow = (a: AssetRecord): AssetsTable => ({
  id: a.id,
  org_id: a.orgId,
  project_id: a.projectId,
  name: a.name,
  description: a.description,
  origin: a.origin,
  environment: a.environment,
  approval_state: a.approvalState,
  approver_principal: a.approverPrincipal,
  approval_reason: a.approvalReason,
  reviewed_at: a.reviewedAt,
  risk_tier: a.riskTier,
  data_classification: a.dataClassification,
  classified_by: a.classifiedBy,
  classification_reason: a.classificationReason,
  classified_at: a.classifiedAt,
  owner_team: a.ownerTeam,
  owner_principal: a.ownerPrincipal,
  ownership_set_by: a.ownershipSetBy,
  ownership_set_at: a.ownershipSetAt,
  quarantine_id: a.quarantineId,
  version: a.version,
  created_by: a.createdBy,
  created_at: a.createdAt,
  updated_at: a.updatedAt,
});

const toAsset = (r: AssetsTable, keys: string[]): AssetRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  name: r.name,
  description: r.description,
  origin: r.origin as AssetRecord['origin'],
  environment: r.environment,
  approvalState: r.approval_state as AssetRecord['approvalState'],
  approverPrincipal: r.approver_principal,
  approvalReason: r.approval_reason,
  reviewedAt: r.reviewed_at,
  riskTier: r.risk_tier as AssetRecord['riskTier'],
  dataClassification: r.data_classification as AssetRecord['dataClassification'],
  classifiedBy: r.classified_by,
  classificationReason: r.classification_reason,
  classifiedAt: r.classified_at,
  ownerTeam: r.owner_team,
  ownerPrincipal: r.owner_principal,
  ownershipSetBy: r.ownership_set_by,
  ownershipSetAt: r.ownership_set_at,
  quarantineId: r.quarantine_id,
  version: Number(r.version),
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  observationKeys: keys,
});

export class KyselyAssetStore implements AssetStore {
  constructor(private readonly db: ControlDb) {}

  private async withKeys(rows: AssetsTable[]): Promise<AssetRecord[]> {
    const byAsset = new Map<string, string[]>();
    for (const ids of chunks(rows.map((r) => r.id))) {
      const keys = await this.db
        .selectFrom('asset_observation_keys')
        .select(['asset_id', 'observation_key'])
        .where('asset_id', 'in', ids)
        .orderBy('observation_key')
        .execute();
      for (const k of keys) byAsset.set(k.asset_id, [...(byAsset.get(k.asset_id) ?? []), k.observation_key]);
    }
    // Code point order on both engines (PostgreSQL collations may order otherwise).
    return rows.map((r) => toAsset(r, (byAsset.get(r.id) ?? []).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))));
  }

  async insert(a: AssetRecord) {
    await this.db.insertInto('assets').values(assetRow(a)).execute();
  }

  async update(a: AssetRecord, expectedVersion: number) {
    const { id, org_id: _o, project_id: _p, created_at: _c, ...rest } = assetRow(a);
    const r = await this.db.updateTable('assets').set(rest).where('id', '=', id).where('version', '=', expectedVersion).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async find(id: string) {
    const r = await this.db.selectFrom('assets').selectAll().where('id', '=', id).executeTakeFirst();
    return r && (await this.withKeys([r]))[0];
  }

  async list(f: AssetFilter, opts: { after?: AssetPosition; limit: number }) {
    let sel = this.db.selectFrom('assets').selectAll().where('project_id', '=', f.projectId);
    if (f.origin) sel = sel.where('origin', '=', f.origin);
    if (f.riskTiers) sel = sel.where('risk_tier', 'in', f.riskTiers);
    if (f.approvalStates) sel = sel.where('approval_state', 'in', f.approvalStates);
    if (f.dataClassifications) sel = sel.where('data_classification', 'in', f.dataClassifications);
    if (f.ownerTeam !== undefined) sel = sel.where('owner_team', '=', f.ownerTeam);
    if (f.unowned === true) sel = sel.where('owner_team', 'is', null).where('owner_principal', 'is', null);
    if (f.unowned === false) sel = sel.where((eb) => eb.or([eb('owner_team', 'is not', null), eb('owner_principal', 'is not', null)]));
    if (opts.after) {
      const { createdAt, id } = opts.after;
      sel = sel.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await sel.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return this.withKeys(rows);
  }

  async mapKeys(projectId: string, assetId: string, keys: string[], at: string) {
    if (keys.length === 0) return true;
    const taken = await this.assetsOfKeys(projectId, keys);
    if (taken.size > 0) return false;
    let inserted = 0;
    for (const part of chunks(keys)) {
      const r = await this.db
        .insertInto('asset_observation_keys')
        .values(part.map((k) => ({ project_id: projectId, observation_key: k, asset_id: assetId, mapped_at: at })))
        .onConflict((oc) => oc.columns(['project_id', 'observation_key']).doNothing())
        .executeTakeFirst();
      inserted += Number(r.numInsertedOrUpdatedRows ?? 0);
    }
    return inserted === keys.length;
  }

  async assetsOfKeys(projectId: string, keys: string[]) {
    const out = new Map<string, string>();
    for (const part of chunks([...new Set(keys)])) {
      const rows = await this.db
        .selectFrom('asset_observation_keys')
        .select(['observation_key', 'asset_id'])
        .where('project_id', '=', projectId)
        .where('observation_key', 'in', part)
        .execute();
      for (const r of rows) out.set(r.observation_key, r.asset_id);
    }
    return out;
  }

  async appendVersion(v: AssetVersionRecord) {
    await this.db
      .insertInto('asset_versions')
      .values({
        asset_id: v.assetId,
        version: v.version,
        project_id: v.projectId,
        change: v.change,
        actor: v.actor,
        occurred_at: v.occurredAt,
        snapshot: JSON.stringify(v.snapshot),
      })
      .execute();
  }

  async versions(assetId: string, opts: { afterVersion?: number; limit: number }) {
    let sel = this.db.selectFrom('asset_versions').selectAll().where('asset_id', '=', assetId);
    if (opts.afterVersion !== undefined) sel = sel.where('version', '>', opts.afterVersion);
    const rows = await sel.orderBy('version', 'asc').limit(opts.limit + 1).execute();
    return rows.map((r) => ({
      assetId: r.asset_id,
      version: Number(r.version),
      projectId: r.project_id,
      change: r.change as AssetVersionRecord['change'],
      actor: r.actor,
      occurredAt: r.occurred_at,
      snapshot: JSON.parse(r.snapshot) as AssetRecord,
    }));
  }

  async liveProjects() {
    const rows = await this.db.selectFrom('projects').select(['id', 'org_id']).where('deleted_at', 'is', null).orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, orgId: r.org_id }));
  }

  async pastWindow(createdBefore: string, opts: { afterId?: string; limit: number }) {
    let sel = this.db
      .selectFrom('assets')
      .selectAll()
      .where('created_at', '<=', createdBefore)
      .where((eb) =>
        eb.or([eb('approval_state', '=', 'APPROVAL_STATE_UNREVIEWED'), eb.and([eb('owner_team', 'is', null), eb('owner_principal', 'is', null)])]),
      );
    if (opts.afterId !== undefined) sel = sel.where('id', '>', opts.afterId);
    const rows = await sel.orderBy('id').limit(opts.limit + 1).execute();
    return this.withKeys(rows);
  }
}
