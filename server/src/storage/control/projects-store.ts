import type { ProjectRecord, ProjectStore } from '../../domains/projects/store.js';
import type { ProjectsTable } from './schema.js';
import type { ControlDb } from './open.js';

const toRecord = (r: ProjectsTable): ProjectRecord => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  samplingRate: Number(r.sampling_rate),
  createdAt: r.created_at,
  deletedAt: r.deleted_at,
});

export class KyselyProjectStore implements ProjectStore {
  constructor(private readonly db: ControlDb) {}

  async insert(p: ProjectRecord) {
    await this.db
      .insertInto('projects')
      .values({ id: p.id, org_id: p.orgId, name: p.name, sampling_rate: p.samplingRate, created_at: p.createdAt, deleted_at: p.deletedAt })
      .execute();
  }

  async find(orgId: string, id: string) {
    const r = await this.db
      .selectFrom('projects')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async list(orgId: string, opts: { onlyId?: string; after?: { createdAt: string; id: string }; limit: number }) {
    let sel = this.db.selectFrom('projects').selectAll().where('org_id', '=', orgId).where('deleted_at', 'is', null);
    if (opts.onlyId) sel = sel.where('id', '=', opts.onlyId);
    if (opts.after) {
      const { createdAt, id } = opts.after;
      sel = sel.where((eb) => eb.or([eb('created_at', '>', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '>', id)])]));
    }
    const rows = await sel.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(opts.limit + 1).execute();
    return rows.map(toRecord);
  }

  async update(id: string, patch: { name?: string; samplingRate?: number }) {
    const values: Partial<ProjectsTable> = {};
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.samplingRate !== undefined) values.sampling_rate = patch.samplingRate;
    await this.db.updateTable('projects').set(values).where('id', '=', id).execute();
  }

  async markDeleted(id: string, at: string) {
    await this.db.updateTable('projects').set({ deleted_at: at }).where('id', '=', id).execute();
  }
}
