/**
 * DuckDB adapter of the agent-reads port (domains/agent-runs/store.ts): runs, steps, sessions, turns,
 * agent events and sightings, aggregated at read time over the per-span columns ingestion derived
 * (docs/agent-model.md). Every user value is a bound parameter; the only text spliced into the SQL is
 * the model's constants (operation and status names) and generated parameter names.
 *
 * The run CTEs (`rootsCte`, `withFallbacks`): among the trace's invoke_agent spans, the root is the earliest-starting one
 * whose parent is not another invoke_agent span of the trace (ties: smallest span id; when every one
 * has such a parent, the earliest of all); a trace without an invoke_agent span is rooted at its top
 * invoke_workflow span (no parent) when it has one (`ROOT_CANDIDATE`), chosen with arg_min rather than a window (about twice as fast). Its session key and turn id fall back to the first span of
 * the trace (by start, then span id) that has one. Callers narrow the traces the CTE looks at with
 * conditions that can only drop traces the final filter drops too (a run of session S has a span
 * carrying S; a run of agent K has an invoke_agent span of K; ...).
 *
 * A span stored more than once (each delivery of a retried export is stored) is read once, as its first
 * ingested copy: the root and the fallbacks take the earliest copy in their ordering, and whatever
 * counts or lists spans reads them through `spansOnce`, over the spans of the traces being read only (a
 * window orders the copies of the spans stored more than once; the others pass as they are). Span events are told apart by (trace, span, position).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { OP } from '../../../domains/agent-runs/model.js';
import type {
  AgentRunsStore,
  EventFilter,
  EventPosition,
  EventRow,
  KeyPosition,
  ModelUsageRow,
  RunFilter,
  RunHealthRow,
  RunPosition,
  RunRow,
  SessionFilter,
  SessionRow,
  SightingEnvironmentRow,
  SightingRow,
  StepRow,
  TurnRow,
} from '../../../domains/agent-runs/store.js';
import { ROOT_CANDIDATE, Params, STATUS_OF_ROOT, inList, lit, narrowScope, num, numOrNull, query, rootRowsCte, rootStartsCte, rootsCte, runConditions, runCte, spansOnce, strOrNull, toRunRow, withFallbacks } from './agent-runs-sql.js';
import { MODEL_CALL_COLUMNS, nestedUsage, totalsCte, usageOf, usageStep } from './model-calls-sql.js';
import type { TelemetryDb } from './open.js';

export class DuckDbAgentRunsQuery implements AgentRunsStore {
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
    const out = new Map<string, RunHealthRow>();
    for (const r of rows) {
      const key = String(r.observation_key);
      const h = out.get(key) ?? { observationKey: key, runs: 0, byStatus: {}, lastStartUs: 0 };
      h.runs += num(r.n);
      if (r.status !== null && r.status !== undefined) h.byStatus[String(r.status)] = num(r.n);
      h.lastStartUs = Math.max(h.lastStartUs, num(r.last_start));
      out.set(key, h);
    }
    return [...out.values()];
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

  async countSteps(projectId: string, traceId: string): Promise<number> {
    const p = new Params();
    const sql = `SELECT count(DISTINCT span_id) AS n FROM spans WHERE project_id = ${p.str(projectId)} AND trace_id = ${p.str(traceId)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return num(rows[0].n);
  }

  async steps(projectId: string, traceId: string): Promise<StepRow[]> {
    const p = new Params();
    const sql = `
      SELECT span_id, parent_span_id, name, status_code, status_message, canonical_operation, response_status, outcome, start_us, end_us, tool_name, model, provider,
        input_tokens, output_tokens, reported_cost_nanos, safety_check, memory_item_id, memory_store, memory_provenance,
        memory_trust_label, context_events, attributes
      FROM spans WHERE project_id = ${p.str(projectId)} AND trace_id = ${p.str(traceId)}
      QUALIFY row_number() OVER (PARTITION BY span_id ORDER BY ingested_at_us, start_us) = 1
      ORDER BY start_us, span_id`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      spanId: String(r.span_id),
      parentSpanId: strOrNull(r.parent_span_id),
      name: String(r.name),
      statusCode: String(r.status_code),
      statusMessage: strOrNull(r.status_message),
      canonicalOperation: String(r.canonical_operation),
      responseStatus: strOrNull(r.response_status),
      outcome: strOrNull(r.outcome),
      startUs: num(r.start_us),
      endUs: num(r.end_us),
      toolName: strOrNull(r.tool_name),
      model: strOrNull(r.model),
      provider: strOrNull(r.provider),
      inputTokens: numOrNull(r.input_tokens),
      outputTokens: numOrNull(r.output_tokens),
      reportedCostNanos: numOrNull(r.reported_cost_nanos),
      safetyCheck: r.safety_check === true,
      memoryItemId: strOrNull(r.memory_item_id),
      memoryStore: strOrNull(r.memory_store),
      memoryProvenance: strOrNull(r.memory_provenance),
      memoryTrustLabel: strOrNull(r.memory_trust_label),
      contextEvents: num(r.context_events),
      attributes: String(r.attributes),
    }));
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

  async events(f: EventFilter, opts: { after?: EventPosition; limit: number }): Promise<EventRow[]> {
    const p = new Params();
    const project = p.str(f.projectId);
    const narrow: string[] = [];
    const where: string[] = [
      `e.project_id = ${project}`,
      'e.category IS NOT NULL',
      // A context event is an agent event only when accepted (it has its one typed detail).
      `(e.category <> 'context' OR (e.context_kind IS NOT NULL AND e.context_detail IS NOT NULL))`,
    ];
    if (f.traceId !== undefined) {
      const t = p.str(f.traceId);
      narrow.push(`trace_id = ${t}`);
      where.push(`e.trace_id = ${t}`);
    }
    if (f.sessionKey !== undefined) {
      const k = p.str(f.sessionKey);
      narrow.push(`session_key = ${k}`);
      where.push(`r.session_key = ${k}`);
    }
    if (f.observationKey !== undefined) {
      const k = p.str(f.observationKey);
      narrow.push(`${ROOT_CANDIDATE} AND observation_key = ${k}`);
      where.push(`r.observation_key = ${k}`);
    }
    const window: string[] = [];
    if (f.sinceUs !== undefined) window.push(`ts_us >= ${p.int(f.sinceUs)}`);
    if (f.untilUs !== undefined) window.push(`ts_us <= ${p.int(f.untilUs)}`);
    if (window.length) {
      where.push(...window.map((w) => `e.${w}`));
      // Only traces with an event in the window can answer.
      narrow.push(`trace_id IN (SELECT trace_id FROM span_events WHERE project_id = ${project} AND ${window.join(' AND ')})`);
    }
    if (f.categories) where.push(`e.category ${inList(p, f.categories)}`);
    if (f.canonicalOperations) where.push(`s.canonical_operation ${inList(p, f.canonicalOperations)}`);
    if (f.contextSourceId !== undefined) where.push(`list_contains(e.context_source_ids, ${p.str(f.contextSourceId)})`);
    if (opts.after) {
      const a = opts.after;
      where.push(`(e.ts_us, e.trace_id, e.span_id, e.event_index) < (${p.int(a.tsUs)}, ${p.str(a.traceId)}, ${p.str(a.spanId)}, ${p.int(a.index)})`);
    }
    const sql = `
      WITH ${runCte(project, narrow)}
      SELECT e.trace_id, e.span_id, e.event_index, e.ts_us, e.name, e.category, e.context_kind, e.context_detail,
        s.canonical_operation, r.session_key, r.turn_id, r.observation_key
      FROM span_events e
      JOIN runs r ON r.trace_id = e.trace_id
      JOIN spans s ON s.project_id = e.project_id AND s.trace_id = e.trace_id AND s.span_id = e.span_id
      WHERE ${where.join(' AND ')}
      QUALIFY row_number() OVER (PARTITION BY e.trace_id, e.span_id, e.event_index ORDER BY s.ingested_at_us, s.start_us, e.ts_us) = 1
      ORDER BY e.ts_us DESC, e.trace_id DESC, e.span_id DESC, e.event_index DESC
      LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      traceId: String(r.trace_id),
      spanId: String(r.span_id),
      index: num(r.event_index),
      tsUs: num(r.ts_us),
      name: String(r.name),
      category: String(r.category),
      contextKind: strOrNull(r.context_kind),
      contextDetail: strOrNull(r.context_detail),
      canonicalOperation: String(r.canonical_operation),
      sessionKey: strOrNull(r.session_key),
      turnId: strOrNull(r.turn_id),
      observationKey: strOrNull(r.observation_key),
    }));
  }

  async identityKeys(projectId: string, opts: { after?: string; limit: number }): Promise<string[]> {
    const p = new Params();
    const after = opts.after !== undefined ? `AND observation_key > ${p.str(opts.after)}` : '';
    const sql = `
      SELECT DISTINCT observation_key FROM agent_sightings WHERE project_id = ${p.str(projectId)} ${after}
      ORDER BY observation_key LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => String(r.observation_key));
  }

  async sightings(projectId: string, observationKeys: string[]): Promise<SightingRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new Params();
    const sql = `
      SELECT observation_key, source, api_key_id, first_seen_us, last_seen_us, sighting_count FROM agent_sightings
      WHERE project_id = ${p.str(projectId)} AND observation_key ${inList(p, observationKeys)}
      ORDER BY observation_key, first_seen_us, source, api_key_id`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      observationKey: String(r.observation_key),
      source: String(r.source),
      apiKeyId: String(r.api_key_id),
      firstSeenUs: num(r.first_seen_us),
      lastSeenUs: num(r.last_seen_us),
      sightingCount: num(r.sighting_count),
    }));
  }

  async sightingEnvironments(projectId: string, observationKeys: string[], perKey: number): Promise<SightingEnvironmentRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new Params();
    const sql = `
      SELECT observation_key, environment, first_seen_us, last_seen_us FROM (
        SELECT *, row_number() OVER (PARTITION BY observation_key ORDER BY last_seen_us DESC, environment) AS rank
        FROM agent_sighting_environments
        WHERE project_id = ${p.str(projectId)} AND observation_key ${inList(p, observationKeys)})
      WHERE rank <= ${p.int(perKey)}
      ORDER BY observation_key, last_seen_us DESC, environment`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      observationKey: String(r.observation_key),
      environment: String(r.environment),
      firstSeenUs: num(r.first_seen_us),
      lastSeenUs: num(r.last_seen_us),
    }));
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
