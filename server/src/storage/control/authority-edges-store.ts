/** Authority edges over Kysely (SQLite and PostgreSQL); the table is from 0009_quarantines. */
import type { AuthorityEdgeRecord, AuthorityEdgeStore, EdgeFilter } from '../../domains/authority-edges/store.js';
import type { ControlDb } from './open.js';
import type { AuthorityEdgesTable } from './schema.js';

const toRecord = (r: AuthorityEdgesTable): AuthorityEdgeRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  principal: r.principal,
  tool: r.tool,
  purpose: r.purpose,
  sourceKind: r.source_kind,
  sourceId: r.source_id,
  createdAt: r.created_at,
  sightingCount: Number(r.sighting_count),
  lastExercisedAt: r.last_exercised_at,
  revokedAt: r.revoked_at,
  revokedBy: r.revoked_by,
  revokeReason: r.revoke_reason,
});

export class KyselyAuthorityEdgeStore implements AuthorityEdgeStore {
  constructor(private readonly db: ControlDb) {}

  async find(id: string) {
    const r = await this.db.selectFrom('authority_edges').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async findMatch(projectId: string, principal: string, tool: string, purpose: string) {
    const r = await this.db
      .selectFrom('authority_edges')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('principal', '=', principal)
      .where('tool', '=', tool)
      .where('purpose', '=', purpose)
      .orderBy('created_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async insert(e: AuthorityEdgeRecord) {
    await this.db
      .insertInto('authority_edges')
      .values({
        id: e.id,
        org_id: e.orgId,
        project_id: e.projectId,
        principal: e.principal,
        tool: e.tool,
        purpose: e.purpose,
        source_kind: e.sourceKind,
        source_id: e.sourceId,
        created_at: e.createdAt,
        sighting_count: e.sightingCount,
        last_exercised_at: e.lastExercisedAt,
        revoked_at: e.revokedAt,
        revoked_by: e.revokedBy,
        revoke_reason: e.revokeReason,
      })
      .execute();
  }

  async exercise(id: string, at: string) {
    await this.db
      .updateTable('authority_edges')
      .set((eb) => ({
        sighting_count: eb('sighting_count', '+', 1),
        last_exercised_at: eb.case().when('last_exercised_at', 'is', null).then(at).when('last_exercised_at', '<', at).then(at).else(eb.ref('last_exercised_at')).end(),
      }))
      .where('id', '=', id)
      .execute();
  }

  async revoke(id: string, by: string, at: string, reason: string) {
    // Conditional on no revocation yet: of concurrent revocations the first is kept.
    const res = await this.db
      .updateTable('authority_edges')
      .set({ revoked_at: at, revoked_by: by, revoke_reason: reason })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async list(f: EdgeFilter, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    let q = this.db.selectFrom('authority_edges').selectAll().where('org_id', '=', f.orgId).where('project_id', '=', f.projectId);
    if (f.principal !== undefined) q = q.where('principal', '=', f.principal);
    if (!f.includeRevoked) q = q.where('revoked_at', 'is', null);
    const a = opts.after;
    if (a) q = q.where((eb) => eb.or([eb('created_at', '<', a.createdAt), eb.and([eb('created_at', '=', a.createdAt), eb('id', '<', a.id)])]));
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toRecord);
  }
}
