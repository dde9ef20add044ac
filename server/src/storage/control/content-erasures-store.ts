/** Content erasures in the control store (both engines). */
import type { ErasureRecord, ErasureStore } from '../../domains/content-erasure/store.js';
import { isUniqueViolation } from './unique.js';
import type { ControlDb } from './open.js';
import type { ContentErasuresTable } from './schema.js';

const toRecord = (r: ContentErasuresTable): ErasureRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  kind: r.kind as ErasureRecord['kind'],
  subjectKind: r.subject_kind as ErasureRecord['subjectKind'],
  subjectId: r.subject_id,
  contentClasses: JSON.parse(r.content_classes) as ErasureRecord['contentClasses'],
  beforeAt: r.before_at,
  reason: r.reason,
  requestedBy: r.requested_by,
  requestId: r.request_id,
  status: r.status as ErasureRecord['status'],
  counts: r.counts === null ? null : (JSON.parse(r.counts) as ErasureRecord['counts']),
  detailCode: r.detail_code,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

export class KyselyErasureStore implements ErasureStore {
  constructor(private readonly db: ControlDb) {}

  async insert(r: ErasureRecord): Promise<boolean> {
    try {
      await this.db
        .insertInto('content_erasures')
        .values({
          id: r.id,
          org_id: r.orgId,
          project_id: r.projectId,
          kind: r.kind,
          subject_kind: r.subjectKind,
          subject_id: r.subjectId,
          content_classes: JSON.stringify(r.contentClasses),
          before_at: r.beforeAt,
          reason: r.reason,
          requested_by: r.requestedBy,
          request_id: r.requestId,
          status: r.status,
          counts: r.counts === null ? null : JSON.stringify(r.counts),
          detail_code: r.detailCode,
          created_at: r.createdAt,
          completed_at: r.completedAt,
        })
        .execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async finish(id: string, f: Parameters<ErasureStore['finish']>[1]) {
    await this.db
      .updateTable('content_erasures')
      .set({ status: f.status, counts: f.counts === null ? null : JSON.stringify(f.counts), detail_code: f.detailCode, completed_at: f.completedAt })
      .where('id', '=', id)
      .execute();
  }

  async find(id: string) {
    const r = await this.db.selectFrom('content_erasures').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRecord(r) : undefined;
  }

  async findByRequest(orgId: string, requestId: string) {
    const r = await this.db.selectFrom('content_erasures').selectAll().where('org_id', '=', orgId).where('request_id', '=', requestId).executeTakeFirst();
    return r ? toRecord(r) : undefined;
  }

  async list(projectId: string, opts: Parameters<ErasureStore['list']>[1]) {
    let q = this.db.selectFrom('content_erasures').selectAll().where('project_id', '=', projectId);
    if (opts.kind) q = q.where('kind', '=', opts.kind);
    const after = opts.after;
    if (after) q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toRecord);
  }
}
