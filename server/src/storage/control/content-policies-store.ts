/** Content policies, retention windows and the refusal audit in the control store (both engines). */
import { sql } from 'kysely';
import { parseGrid, type Boundary, type ContentClass, type Decider } from '../../domains/content-policy/model.js';
import {
  refusalKey,
  type Actor,
  type ContentPolicyStore,
  type ListedPolicy,
  type PolicyRecord,
  type PutResult,
  type RefusalCount,
  type RefusalQuery,
  type RetentionWindow,
} from '../../domains/content-policy/store.js';
import type { ControlDb } from './open.js';
import type { ContentPoliciesTable } from './schema.js';
import { isUniqueViolation } from './unique.js';

const toRecord = (r: ContentPoliciesTable): PolicyRecord => ({
  projectId: r.project_id,
  orgId: r.org_id,
  grid: parseGrid(r.grid),
  version: Number(r.version),
  updatedBy: { userId: r.updated_by_user_id, apiKeyId: r.updated_by_api_key_id },
  updatedAt: r.updated_at,
});

const changed = (n: { numUpdatedRows?: bigint } | undefined) => Number(n?.numUpdatedRows ?? 0n) > 0;

export class KyselyContentPolicyStore implements ContentPolicyStore {
  constructor(
    private readonly db: ControlDb,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  async find(projectId: string) {
    const r = await this.db.selectFrom('content_policies').selectAll().where('project_id', '=', projectId).executeTakeFirst();
    return r ? toRecord(r) : undefined;
  }

  private async insert(i: { projectId: string; orgId: string; grid: string; by: Actor; at: string }): Promise<boolean> {
    try {
      await this.db
        .insertInto('content_policies')
        .values({ project_id: i.projectId, org_id: i.orgId, grid: i.grid, version: 1, updated_by_user_id: i.by.userId, updated_by_api_key_id: i.by.apiKeyId, updated_at: i.at })
        .execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  private async update(i: { projectId: string; grid: string; by: Actor; at: string }, from: number): Promise<boolean> {
    const r = await this.db
      .updateTable('content_policies')
      .set({ grid: i.grid, version: from + 1, updated_by_user_id: i.by.userId, updated_by_api_key_id: i.by.apiKeyId, updated_at: i.at })
      .where('project_id', '=', i.projectId)
      .where('version', '=', from)
      .executeTakeFirst();
    return changed(r);
  }

  async put(input: Parameters<ContentPolicyStore['put']>[0]): Promise<PutResult> {
    const i = { ...input, grid: JSON.stringify(input.grid) };
    const done = async (): Promise<PutResult> => ({ ok: true, record: (await this.find(i.projectId))! });
    const current = async () => (await this.find(i.projectId))?.version ?? 0;
    if (i.expectedVersion !== undefined) {
      const ok = i.expectedVersion === 0 ? await this.insert(i) : await this.update(i, i.expectedVersion);
      return ok ? done() : { ok: false, currentVersion: await current() };
    }
    // Unconditional: one upsert, so concurrent writers each land at their own version, never lose.
    const r = await this.db
      .insertInto('content_policies')
      .values({ project_id: i.projectId, org_id: i.orgId, grid: i.grid, version: 1, updated_by_user_id: i.by.userId, updated_by_api_key_id: i.by.apiKeyId, updated_at: i.at })
      .onConflict((oc) =>
        oc.column('project_id').doUpdateSet({
          grid: i.grid,
          version: sql<number>`content_policies.version + 1`,
          updated_by_user_id: i.by.userId,
          updated_by_api_key_id: i.by.apiKeyId,
          updated_at: i.at,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ok: true, record: toRecord(r) };
  }

  async list(orgId: string, opts: { onlyProjectId?: string; after?: { updatedAt: string; projectId: string }; limit: number }): Promise<ListedPolicy[]> {
    const changedAt = sql<string>`coalesce(c.updated_at, '')`;
    let q = this.db
      .selectFrom('projects as p')
      .leftJoin('content_policies as c', 'c.project_id', 'p.id')
      .select([
        'p.id as pid',
        'p.org_id as porg',
        'c.project_id',
        'c.org_id',
        'c.grid',
        'c.version',
        'c.updated_by_user_id',
        'c.updated_by_api_key_id',
        'c.updated_at',
      ])
      .where('p.org_id', '=', orgId)
      .where('p.deleted_at', 'is', null);
    if (opts.onlyProjectId !== undefined) q = q.where('p.id', '=', opts.onlyProjectId);
    if (opts.after) {
      const { updatedAt, projectId } = opts.after;
      q = q.where((eb) => eb.or([eb(changedAt, '<', updatedAt), eb.and([eb(changedAt, '=', updatedAt), eb('p.id', '<', projectId)])]));
    }
    const rows = await q.orderBy(changedAt, 'desc').orderBy('p.id', 'desc').limit(opts.limit).execute();
    return rows.map((r) => ({
      projectId: r.pid,
      policy: r.project_id === null ? null : toRecord({ ...r, project_id: r.project_id, org_id: r.org_id!, grid: r.grid!, version: r.version!, updated_at: r.updated_at! }),
    }));
  }

  async retention(projectId: string): Promise<RetentionWindow[]> {
    const rows = await this.db.selectFrom('content_retention').selectAll().where('project_id', '=', projectId).orderBy('content_class').execute();
    return rows.map((r) => ({
      contentClass: r.content_class as ContentClass,
      retentionDays: Number(r.retention_days),
      updatedBy: { userId: r.updated_by_user_id, apiKeyId: r.updated_by_api_key_id },
      updatedAt: r.updated_at,
    }));
  }

  async putRetention(projectId: string, orgId: string, windows: { contentClass: ContentClass; retentionDays: number }[], by: Actor, at: string) {
    await this.db.transaction().execute(async (tx) => {
      // Writes of one project's windows run one at a time (SQLite: one writing transaction at a time), so
      // concurrent replacements each land whole instead of colliding on the key or leaving a mix.
      if (this.dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtext(${`content_retention:${projectId}`}))`.execute(tx);
      await tx.deleteFrom('content_retention').where('project_id', '=', projectId).execute();
      if (windows.length === 0) return;
      await tx
        .insertInto('content_retention')
        .values(
          windows.map((w) => ({
            project_id: projectId,
            content_class: w.contentClass,
            org_id: orgId,
            retention_days: w.retentionDays,
            updated_by_user_id: by.userId,
            updated_by_api_key_id: by.apiKeyId,
            updated_at: at,
          })),
        )
        .execute();
    });
  }

  async addRefusals(rows: RefusalCount[]) {
    if (rows.length === 0) return;
    await this.db
      .insertInto('content_policy_refusals')
      .values(
        rows.map((r) => ({
          project_id: r.projectId,
          minute: r.minute,
          cell_key: refusalKey(r),
          content_class: r.contentClass,
          boundary: r.boundary,
          decider: r.decider,
          decision: r.decision,
          count: r.count,
        })),
      )
      .onConflict((oc) => oc.columns(['project_id', 'minute', 'cell_key']).doUpdateSet({ count: sql`content_policy_refusals.count + excluded.count` }))
      .execute();
  }

  async refusals(q: RefusalQuery): Promise<RefusalCount[]> {
    let s = this.db.selectFrom('content_policy_refusals').selectAll().where('project_id', '=', q.projectId);
    if (q.contentClass !== undefined) s = s.where('content_class', '=', q.contentClass);
    if (q.boundary !== undefined) s = s.where('boundary', '=', q.boundary);
    if (q.from !== undefined) s = s.where('minute', '>=', q.from);
    if (q.to !== undefined) s = s.where('minute', '<=', q.to);
    if (q.after) {
      const { minute, key } = q.after;
      s = s.where((eb) => eb.or([eb('minute', '<', minute), eb.and([eb('minute', '=', minute), eb('cell_key', '<', key)])]));
    }
    const rows = await s.orderBy('minute', 'desc').orderBy('cell_key', 'desc').limit(q.limit).execute();
    return rows.map((r) => ({
      projectId: r.project_id,
      minute: r.minute,
      contentClass: r.content_class as ContentClass,
      boundary: r.boundary as Boundary,
      decider: r.decider as Decider,
      decision: r.decision as RefusalCount['decision'],
      count: Number(r.count),
    }));
  }

  async forgetProject(projectId: string) {
    await this.db.deleteFrom('content_policies').where('project_id', '=', projectId).execute();
    await this.db.deleteFrom('content_retention').where('project_id', '=', projectId).execute();
    await this.db.deleteFrom('content_policy_refusals').where('project_id', '=', projectId).execute();
  }
}
