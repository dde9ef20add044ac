/** The sampling job's cursors and retries in the control store (one code path for SQLite and PostgreSQL). */
import type { RunPosition } from '../../domains/agent-runs/store.js';
import type { RetryState, SamplingCursor, SamplingRetry, SamplingStore } from '../../domains/evaluations/sampling/store.js';
import type { ControlDb } from './open.js';
import type { EvaluationSamplingCursorsTable, EvaluationSamplingRetriesTable } from './schema.js';

const toCursor = (r: EvaluationSamplingCursorsTable): SamplingCursor => ({
  ruleId: r.rule_id,
  orgId: r.org_id,
  projectId: r.project_id,
  after: { startUs: Number(r.after_start_us), traceId: r.after_trace_id },
  pending: r.pending_trace_id === null ? null : { startUs: Number(r.pending_start_us), traceId: r.pending_trace_id },
  pausedAt: r.paused_at,
  version: Number(r.version),
  updatedAt: r.updated_at,
});

const toRetry = (r: EvaluationSamplingRetriesTable): SamplingRetry => ({
  ruleId: r.rule_id,
  traceId: r.trace_id,
  orgId: r.org_id,
  projectId: r.project_id,
  startUs: Number(r.start_us),
  state: r.state as RetryState,
  attempts: Number(r.attempts),
  nextAt: r.next_at,
  reason: r.reason,
  updatedAt: r.updated_at,
});

const retryRow = (r: SamplingRetry): EvaluationSamplingRetriesTable => ({
  rule_id: r.ruleId,
  trace_id: r.traceId,
  org_id: r.orgId,
  project_id: r.projectId,
  start_us: r.startUs,
  state: r.state,
  attempts: r.attempts,
  next_at: r.nextAt,
  reason: r.reason,
  updated_at: r.updatedAt,
});

const pendingColumns = (p: RunPosition | null) => ({ pending_start_us: p?.startUs ?? null, pending_trace_id: p?.traceId ?? null });

export class KyselySamplingStore implements SamplingStore {
  constructor(private readonly db: ControlDb) {}

  async cursor(ruleId: string) {
    const r = await this.db.selectFrom('evaluation_sampling_cursors').selectAll().where('rule_id', '=', ruleId).executeTakeFirst();
    return r && toCursor(r);
  }

  async createCursor(c: Omit<SamplingCursor, 'version' | 'pending' | 'pausedAt'>) {
    await this.db
      .insertInto('evaluation_sampling_cursors')
      .values({
        rule_id: c.ruleId,
        org_id: c.orgId,
        project_id: c.projectId,
        after_start_us: c.after.startUs,
        after_trace_id: c.after.traceId,
        ...pendingColumns(null),
        paused_at: null,
        version: 1,
        updated_at: c.updatedAt,
      })
      .onConflict((oc) => oc.column('rule_id').doNothing())
      .execute();
    return (await this.cursor(c.ruleId))!;
  }

  async advance(ruleId: string, version: number, set: { after: RunPosition; pending: RunPosition | null; at: string }) {
    const r = await this.db
      .updateTable('evaluation_sampling_cursors')
      .set({ after_start_us: set.after.startUs, after_trace_id: set.after.traceId, ...pendingColumns(set.pending), paused_at: null, version: version + 1, updated_at: set.at })
      .where('rule_id', '=', ruleId)
      .where('version', '=', version)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async pauseOthers(activeRuleIds: string[], at: string) {
    let q = this.db.updateTable('evaluation_sampling_cursors').set({ paused_at: at }).where('paused_at', 'is', null);
    if (activeRuleIds.length) q = q.where('rule_id', 'not in', activeRuleIds);
    await q.execute();
  }

  async putRetry(r: SamplingRetry) {
    const row = retryRow(r);
    await this.db
      .insertInto('evaluation_sampling_retries')
      .values(row)
      .onConflict((oc) => oc.columns(['rule_id', 'trace_id']).doUpdateSet({ state: row.state, attempts: row.attempts, next_at: row.next_at, reason: row.reason, updated_at: row.updated_at }))
      .execute();
  }

  async dueRetries(ruleId: string, now: string, limit: number) {
    const rows = await this.db
      .selectFrom('evaluation_sampling_retries')
      .selectAll()
      .where('rule_id', '=', ruleId)
      .where('state', '=', 'waiting')
      .where('next_at', '<=', now)
      .orderBy('next_at')
      .orderBy('trace_id')
      .limit(limit)
      .execute();
    return rows.map(toRetry);
  }

  async updateRetry(ruleId: string, traceId: string, attempts: number, next: SamplingRetry | null) {
    const r =
      next === null
        ? await this.db.deleteFrom('evaluation_sampling_retries').where('rule_id', '=', ruleId).where('trace_id', '=', traceId).where('attempts', '=', attempts).where('state', '=', 'waiting').executeTakeFirst()
        : await this.db
            .updateTable('evaluation_sampling_retries')
            .set({ state: next.state, attempts: next.attempts, next_at: next.nextAt, reason: next.reason, updated_at: next.updatedAt })
            .where('rule_id', '=', ruleId)
            .where('trace_id', '=', traceId)
            .where('attempts', '=', attempts)
            .where('state', '=', 'waiting')
            .executeTakeFirst();
    const n = 'numDeletedRows' in r ? r.numDeletedRows : r.numUpdatedRows;
    return Number(n) === 1;
  }

  async retries(ruleId: string) {
    const rows = await this.db.selectFrom('evaluation_sampling_retries').selectAll().where('rule_id', '=', ruleId).orderBy('trace_id').execute();
    return rows.map(toRetry);
  }
}
