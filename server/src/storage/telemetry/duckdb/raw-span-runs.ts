/**
 * The agent reads recomputed from raw spans at read time: how every run, session and turn list was answered
 * before summaries were kept at ingest (issue 21). Kept as the independent oracle of the summaries: the
 * property test (summaries.property.test.ts) checks that every list answered from summaries equals this
 * answer on randomized span streams. Not used by the service.
 *
 * The run CTEs (`rootsCte`, `withFallbacks`): among the trace's invoke_agent spans, the root is the
 * earliest-starting one whose parent is not another invoke_agent span of the trace (ties: smallest span
 * id; when every one has such a parent, the earliest of all); a trace without an invoke_agent span is
 * rooted at its top invoke_workflow span (no parent) when it has one (`ROOT_CANDIDATE`). Its session key
 * and turn id fall back to the first span of the trace (by start, then span id) that has one. A span
 * stored more than once is read once, as its first ingested copy (`spansOnce`).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { OP } from '../../../domains/agent-runs/model.js';
import type {
  AgentRunsStore,
  KeyPosition,
  ModelUsageRow,
  RunFilter,
  RunHealthRow,
  RunPosition,
  RunRow,
  SessionFilter,
  SessionRow,
  StepRow,
  TurnRow,
} from '../../../domains/agent-runs/store.js';
import { ROOT_CANDIDATE, Params, STATUS_OF_ROOT, inList, lit, narrowScope, num, query, rootRowsCte, rootStartsCte, rootsCte, runConditions, runCte, spansOnce, toRunRow, withFallbacks } from './agent-runs-sql.js';
import { MODEL_CALL_COLUMNS, nestedUsage, totalsCte, usageOf, usageStep } from './model-calls-sql.js';
import { STEP_COLUMNS, healthOf, toStepRow } from './agent-runs-query.js';
import type { TelemetryDb } from './open.js';

/** The reads the summaries answer. */
export type SummarizedReads = Pick<AgentRunsStore, 'runs' | 'runStarts' | 'runHealth' | 'modelUsage' | 'steps' | 'sessions' | 'turns'>;

export class RawSpanAgentRunsQuery implements SummarizedReads {
  constructor(private readonly db: TelemetryDb) {}

  runs(filter: RunFilter, opts: { after?: RunPosition; limit?: number }): Promise<RunRow[]> {
    const p = new Params();
    const project = p.str(filter.projectId);
    const { narrow, where } = runConditions(p, filter);
    if (opts.after) where.push(`(start_us, trace_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.traceId)})`);
    const limit = opts.limit !== undefined ? `LIMIT ${p.int(opts.limit)}` : '';
    const filtered = (from: string) => `SELECT * FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY start_us DESC, trace_id DESC ${limit}`;
    // Without a session or turn filter the page is chosen on the roots alone; the fallbacks of its runs
    // are then read in the same pass as their counts.
    let pageCte: string;
    if (filter.sessionKeys || filter.turnIds) pageCte = `${runCte(project, narrow)}, pg AS (${filtered('runs')})`;
    else if (opts.limit === undefined) pageCte = `${rootsCte(project, narrow)}, pg AS (${filtered('roots')})`;
    else {
      // A page of a list: chosen on the root columns the filter and the order read (`keys`), then the
      // whole root read for the page's runs only (the same root: the choice is the same arg_min).
      let keys: string;
      if (filter.observationKey !== undefined || filter.statuses) {
        const keyColumns = ['start_us', ...(filter.observationKey !== undefined ? ['observation_key'] : []), ...(filter.statuses ? ['run_status', 'response_status'] : [])];
        keys = `${rootRowsCte(project, narrowScope(project, narrow), keyColumns, 'key_rows')},
        keys AS (
          SELECT trace_id, r.start_us AS start_us
            ${filter.observationKey !== undefined ? ', r.observation_key AS observation_key' : ''}
            ${filter.statuses ? `, ${STATUS_OF_ROOT} AS status` : ''}
          FROM key_rows
        )`;
      } else {
        keys = rootStartsCte(project, narrowScope(project, narrow), 'keys');
      }
      pageCte = `${keys},
        page_keys AS (${filtered('keys')}),
        ${rootsCte(project, [], 'roots', 'trace_id IN (SELECT trace_id FROM page_keys)')},
        pg AS (SELECT * FROM roots)`;
    }
    // Every span of the trace is a step, the root too: the counts agree with the graph's `steps` list.
    const sql = `
      WITH ${pageCte},
      ps AS (${spansOnce(project, 'trace_id IN (SELECT trace_id FROM pg)', `${MODEL_CALL_COLUMNS}, outcome, safety_check, session_key, turn_id, start_us`)}),
      agg AS (
        SELECT s.trace_id,
          count(*) AS step_count,
          count(*) FILTER (WHERE s.outcome = 'OUTCOME_ERROR') AS error_steps,
          count(*) FILTER (WHERE s.canonical_operation = ${lit(OP.executeTool)}) AS tool_calls,
          count(*) FILTER (WHERE ${usageStep('s')}) AS usage_steps,
          ${nestedUsage('s')} AS nested_usage,
          count(*) FILTER (WHERE s.safety_check AND s.outcome IS NOT NULL) AS safety_outcomes,
          count(*) FILTER (WHERE s.safety_check AND s.outcome = 'OUTCOME_ERROR') AS safety_errors,
          arg_min(s.session_key, {'start': s.start_us, 'span': s.span_id}) FILTER (WHERE s.session_key IS NOT NULL) AS first_session,
          arg_min(s.turn_id, {'start': s.start_us, 'span': s.span_id}) FILTER (WHERE s.turn_id IS NOT NULL) AS first_turn
        FROM pg JOIN ps s ON s.trace_id = pg.trace_id
        GROUP BY s.trace_id
      )
      SELECT pg.trace_id, pg.root_span_id, pg.agent_name, pg.agent_id, pg.observation_key, pg.service_name, pg.environment,
        coalesce(pg.own_session, agg.first_session) AS session_key, coalesce(pg.own_turn, agg.first_turn) AS turn_id,
        pg.status, pg.terminal_reason, pg.start_us, pg.end_us, agg.* EXCLUDE (trace_id, first_session, first_turn)
      FROM pg JOIN agg ON agg.trace_id = pg.trace_id
      ORDER BY pg.start_us DESC, pg.trace_id DESC`;
    return this.db.read(async (c) => {
      const rows = await query(c, sql, p);
      // A usage step is a model call unless it reports the totals of usage steps below it: only the traces
      // where a usage step has a child are walked (a second, small query).
      const nested = rows.filter((r) => r.nested_usage === true).map((r) => String(r.trace_id));
      const totals = nested.length ? await totalsPerTrace(c, filter.projectId, nested) : new Map<string, number>();
      return rows.map((r) => toRunRow({ ...r, model_calls: num(r.usage_steps) - (totals.get(String(r.trace_id)) ?? 0) }));
    });
  }

  async runStarts(projectId: string, opts: { after: RunPosition; beforeUs: number; limit: number }): Promise<RunPosition[]> {
    const p = new Params();
    const project = p.str(projectId);
    // A run starting after the position has a root candidate starting after it too: only those traces are read.
    const scope = narrowScope(project, [`${ROOT_CANDIDATE} AND start_us >= ${p.int(opts.after.startUs)}`]);
    const sql = `
      WITH ${rootStartsCte(project, scope, 'starts')}
      SELECT trace_id, start_us FROM starts
      WHERE (start_us, trace_id) > (${p.int(opts.after.startUs)}, ${p.str(opts.after.traceId)}) AND start_us < ${p.int(opts.beforeUs)}
      ORDER BY start_us, trace_id
      LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({ traceId: String(r.trace_id), startUs: num(r.start_us) }));
  }

  async runHealth(projectId: string, observationKeys: string[], sinceUs: number): Promise<RunHealthRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new Params();
    const project = p.str(projectId);
    const keys = inList(p, observationKeys);
    const since = p.int(sinceUs);
    const sql = `
      WITH ${rootRowsCte(project, narrowScope(project, [`${ROOT_CANDIDATE} AND observation_key ${keys} AND start_us >= ${since}`]), ['observation_key', 'run_status', 'response_status', 'start_us'], 'rr')},
      runs AS (SELECT r.observation_key AS observation_key, r.start_us AS start_us, ${STATUS_OF_ROOT} AS status FROM rr)
      SELECT observation_key, status, count(*) AS n, max(start_us) AS last_start FROM runs
      WHERE observation_key ${keys} AND start_us >= ${since}
      GROUP BY ALL`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return healthOf(rows);
  }

  async modelUsage(projectId: string, traceIds: string[]): Promise<ModelUsageRow[]> {
    if (traceIds.length === 0) return [];
    const groups = 'trace_id, provider, model, input_tokens, output_tokens, reported_cost_nanos';
    const spans = (p: Params, ids: string[]) =>
      `ps AS MATERIALIZED (${spansOnce(p.str(projectId), `trace_id ${inList(p, ids)}`, `${MODEL_CALL_COLUMNS}, provider, model, reported_cost_nanos`)})`;
    // The usage steps of the traces where no usage step has a child are all model calls; the other traces
    // (named by a row with `nested`) are read again with the walk that leaves out the totals.
    const p = new Params();
    const sql = `
      WITH ${spans(p, traceIds)},
      nest AS (SELECT s.trace_id FROM ps s GROUP BY s.trace_id HAVING ${nestedUsage('s')})
      SELECT ${groups}, count(*) AS steps, false AS nested FROM ps
      WHERE ${usageStep()} AND trace_id NOT IN (SELECT trace_id FROM nest) GROUP BY ALL
      UNION ALL SELECT trace_id, NULL, NULL, NULL, NULL, NULL, 0, true FROM nest`;
    const rows = await this.db.read(async (c) => {
      const fast = await query(c, sql, p);
      const nested = fast.filter((r) => r.nested === true).map((r) => String(r.trace_id));
      if (nested.length === 0) return fast;
      const q = new Params();
      const exact = `
        WITH ${spans(q, nested)}, ${totalsCte('ps')}
        SELECT ${groups}, count(*) AS steps FROM (SELECT * FROM ps WHERE ${usageStep()}) ANTI JOIN tot USING (trace_id, span_id)
        GROUP BY ALL`;
      return [...fast.filter((r) => r.nested !== true), ...(await query(c, exact, q))];
    });
    return rows.map((r) => ({ traceId: String(r.trace_id), ...usageOf(r), steps: num(r.steps) }));
  }

  /** Spans of the trace (every step, the root included): what a run summary's step count must be. */
  async countSteps(projectId: string, traceId: string): Promise<number> {
    const p = new Params();
    const sql = `SELECT count(DISTINCT span_id) AS n FROM spans WHERE project_id = ${p.str(projectId)} AND trace_id = ${p.str(traceId)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return num(rows[0].n);
  }

  async steps(projectId: string, traceId: string): Promise<StepRow[]> {
    const p = new Params();
    const sql = `
      SELECT ${STEP_COLUMNS}
      FROM spans WHERE project_id = ${p.str(projectId)} AND trace_id = ${p.str(traceId)}
      QUALIFY row_number() OVER (PARTITION BY span_id ORDER BY ingested_at_us, start_us) = 1
      ORDER BY start_us, span_id`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map(toStepRow);
  }

  async sessions(filter: SessionFilter, opts: { after?: KeyPosition; limit?: number }): Promise<SessionRow[]> {
    const p = new Params();
    const project = p.str(filter.projectId);
    const narrow: string[] = [];
    const inner: string[] = ['session_key IS NOT NULL'];
    if (filter.sessionKeys) {
      const l = inList(p, filter.sessionKeys);
      narrow.push(`session_key ${l}`);
      inner.push(`session_key ${l}`);
    }
    const outer: string[] = [];
    if (filter.sinceUs !== undefined) outer.push(`start_us >= ${p.int(filter.sinceUs)}`);
    if (filter.untilUs !== undefined) outer.push(`start_us <= ${p.int(filter.untilUs)}`);
    if (opts.after) outer.push(`(start_us, session_key) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.key)})`);
    const limit = opts.limit !== undefined ? `LIMIT ${p.int(opts.limit)}` : '';
    const sql = `
      WITH ${rootRowsCte(project, narrowScope(project, narrow), ['session_key', 'turn_id', 'start_us', 'end_us'], 'root_rows')},
      roots AS (SELECT trace_id, r.session_key AS own_session, r.turn_id AS own_turn, r.start_us, r.end_us FROM root_rows),
      ${withFallbacks('runs', 'roots', project)},
      ses AS (
        SELECT session_key, count(*) AS run_count, count(DISTINCT turn_id) AS turn_count, min(start_us) AS start_us, max(end_us) AS end_us
        FROM runs WHERE ${inner.join(' AND ')} GROUP BY session_key
      )
      SELECT * FROM ses ${outer.length ? `WHERE ${outer.join(' AND ')}` : ''}
      ORDER BY start_us DESC, session_key DESC ${limit}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      sessionKey: String(r.session_key),
      runCount: num(r.run_count),
      turnCount: num(r.turn_count),
      startUs: num(r.start_us),
      endUs: num(r.end_us),
    }));
  }

  async turns(projectId: string, sessionKey: string, opts: { after?: KeyPosition; limit: number }): Promise<TurnRow[]> {
    const p = new Params();
    const project = p.str(projectId);
    const key = p.str(sessionKey);
    const after = opts.after ? `WHERE (start_us, turn_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.key)})` : '';
    const sql = `
      WITH ${runCte(project, [`session_key = ${key}`])},
      t AS (
        SELECT turn_id, count(*) AS run_count, min(start_us) AS start_us, max(end_us) AS end_us
        FROM runs WHERE session_key = ${key} AND turn_id IS NOT NULL GROUP BY turn_id
      )
      SELECT * FROM t ${after} ORDER BY start_us DESC, turn_id DESC LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({ turnId: String(r.turn_id), runCount: num(r.run_count), startUs: num(r.start_us), endUs: num(r.end_us) }));
  }
}

/** The number of usage steps per trace that report totals of usage steps below them (`totalsCte`). */
async function totalsPerTrace(c: DuckDBConnection, projectId: string, traceIds: string[]): Promise<Map<string, number>> {
  const p = new Params();
  const sql = `
    WITH ps AS MATERIALIZED (${spansOnce(p.str(projectId), `trace_id ${inList(p, traceIds)}`, MODEL_CALL_COLUMNS)}),
    ${totalsCte('ps')}
    SELECT trace_id, count(*) AS n FROM tot GROUP BY trace_id`;
  return new Map((await query(c, sql, p)).map((r) => [String(r.trace_id), num(r.n)]));
}
