/**
 * The SQL pieces of the agent reads (agent-runs-query.ts): bound parameters, the run CTEs (root choice,
 * session and turn fallbacks, spans read once) and the run filter conditions. The rules they encode are
 * described at the top of agent-runs-query.ts and in docs/agent-model.md.
 */
import { BIGINT, LIST, listValue, VARCHAR, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { MODEL_OPERATIONS, OP, RUN_STATUSES } from '../../../domains/agent-runs/model.js';
import type { RunFilter, RunRow } from '../../../domains/agent-runs/store.js';
import { readAll } from './statements.js';
import { num } from '../row-mappers.js';


/** A code constant as an SQL literal (never user text). */
export const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
export const litList = (xs: readonly string[]) => xs.map(lit).join(', ');

export const INVOKE_AGENT = lit(OP.invokeAgent);
/**
 * The spans that may root a run (model.ts `isRunRootCandidate`): agent spans, and workflow spans at the
 * top of their trace. Of a trace's candidates the root is an agent span when there is one.
 */
export const ROOT_CANDIDATE = `(canonical_operation = ${INVOKE_AGENT} OR (canonical_operation = ${lit(OP.invokeWorkflow)} AND parent_span_id IS NULL))`;
export const MODEL_OPS = litList(MODEL_OPERATIONS);
export const STATED_RUN_STATUSES = litList(RUN_STATUSES);
/** The response statuses that stand in for an absent run status (docs/agent-model.md "Run", `status`). */
export const RESPONSE_RUN_STATUSES = litList(['completed', 'failed', 'cancelled']);

/** Bound parameters with generated names; each value is bound once and referenced by its name. */
export class Params {
  readonly values: Record<string, DuckDBValue> = {};
  readonly types: Record<string, DuckDBType> = {};
  private n = 0;
  private add(v: DuckDBValue, t: DuckDBType): string {
    const k = `p${this.n++}`;
    this.values[k] = v;
    this.types[k] = t;
    return `$${k}`;
  }
  str(v: string) {
    return this.add(v, VARCHAR);
  }
  int(v: number) {
    return this.add(BigInt(Math.trunc(v)), BIGINT);
  }
  strs(v: readonly string[]) {
    return this.add(listValue([...v]), LIST(VARCHAR));
  }
}

export async function query(c: DuckDBConnection, sql: string, p: Params): Promise<Record<string, unknown>[]> {
  const reader = await readAll(c, sql, p.values, p.types);
  // The values as DuckDB gives them (strings, bigints, numbers, booleans, null: every column read here is of
  // such a type), by column: several times faster than getRowObjectsJS on the pages of thousands of runs.
  const names = reader.columnNames();
  const columns = reader.getColumns();
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < reader.currentRowCount; i++) {
    const row: Record<string, unknown> = {};
    for (let j = 0; j < names.length; j++) row[names[j]] = columns[j][i];
    rows.push(row);
  }
  return rows;
}

export { num, numOrNull, strOrNull } from '../row-mappers.js';

/** `IN (SELECT unnest($list))` for a bound list. */
export const inList = (p: Params, xs: readonly string[]) => `IN (SELECT unnest(${p.strs(xs)}))`;

/**
 * The spans of the traces that `traces` (a condition on `trace_id`) selects, each once: of the copies of a
 * span (same trace and span id) the first ingested, as the trace read does; `columns` are those returned.
 */
export function spansOnce(project: string, traces: string, columns: string): string {
  // Copies are rare: only the spans stored more than once go through the window.
  return `(WITH so_all AS MATERIALIZED (SELECT ${columns}, trace_id AS so_trace, span_id AS so_span, ingested_at_us AS so_copy, start_us AS so_start
      FROM spans WHERE project_id = ${project} AND ${traces}),
    so_twice AS (SELECT so_trace, so_span FROM so_all GROUP BY so_trace, so_span HAVING count(*) > 1)
    SELECT ${columns} FROM so_all ANTI JOIN so_twice USING (so_trace, so_span)
    UNION ALL
    SELECT ${columns} FROM (SELECT * FROM so_all SEMI JOIN so_twice USING (so_trace, so_span)
      QUALIFY row_number() OVER (PARTITION BY so_trace, so_span ORDER BY so_copy, so_start) = 1))`;
}

/** The root span's columns a run reads (one struct, chosen by arg_min: a span stored twice is one root). */
export const ROOT_COLUMNS = [
  'span_id',
  'agent_name',
  'agent_id',
  'observation_key',
  'service_name',
  'environment',
  'session_key',
  'turn_id',
  'run_status',
  'response_status',
  'terminal_reason',
  'start_us',
  'end_us',
];

/**
 * A condition on `trace_id`: the traces that, for each condition of `narrow`, have a span matching it (empty:
 * every trace). Each condition may hold on another span: a run's session key and turn id may come from two
 * spans (the fallbacks).
 */
export function narrowScope(project: string, narrow: string[]): string {
  return narrow.map((n) => `trace_id IN (SELECT trace_id FROM spans WHERE project_id = ${project} AND ${n})`).join(' AND ');
}

/**
 * The CTEs `<name>_ag` and `<name>` (one row per run of the traces `scope` selects: trace id and the root's
 * start only): the earliest start among the agent spans not nested in another, else among all agent spans,
 * else the top workflow span (the root's order, without reading the root's other columns).
 */
export function rootStartsCte(project: string, scope: string, name: string): string {
  return `
    ${name}_ag AS (
      SELECT trace_id, parent_span_id, span_id, start_us, canonical_operation = ${INVOKE_AGENT} AS agent FROM spans
      WHERE project_id = ${project} AND ${ROOT_CANDIDATE} ${scope ? `AND ${scope}` : ''}
    ),
    ${name} AS (
      SELECT a.trace_id,
        coalesce(min(a.start_us) FILTER (WHERE a.agent AND parent.span_id IS NULL), min(a.start_us) FILTER (WHERE a.agent), min(a.start_us)) AS start_us
      FROM ${name}_ag a LEFT JOIN ${name}_ag parent ON parent.trace_id = a.trace_id AND parent.span_id = a.parent_span_id AND parent.agent
      GROUP BY a.trace_id
    )`;
}

/**
 * The CTEs `<name>_ag` (the root candidates) and `<name>` (one row per run of the traces `scope` (a condition on `trace_id`, or
 * empty) selects: `r`, a struct of the root span's `columns`). Reading only the columns a query needs keeps
 * the scan and the arg_min narrow.
 */
export function rootRowsCte(project: string, scope: string, columns: readonly string[], name: string): string {
  const read = [...new Set(['span_id', 'start_us', ...columns])];
  return `
    ${name}_ag AS (
      SELECT trace_id, parent_span_id, ingested_at_us, canonical_operation = ${INVOKE_AGENT} AS agent, ${read.join(', ')} FROM spans
      WHERE project_id = ${project} AND ${ROOT_CANDIDATE} ${scope ? `AND ${scope}` : ''}
    ),
    ${name} AS (
      SELECT a.trace_id,
        arg_min({${columns.map((c) => `'${c}': a.${c}`).join(', ')}},
                {'workflow': NOT a.agent, 'nested': parent.span_id IS NOT NULL, 'start': a.start_us, 'span': a.span_id, 'copy': a.ingested_at_us}) AS r
      FROM ${name}_ag a LEFT JOIN ${name}_ag parent ON parent.trace_id = a.trace_id AND parent.span_id = a.parent_span_id AND parent.agent
      GROUP BY a.trace_id
    )`;
}

/** The status of a run from its root's struct `r` (docs/agent-model.md "Run", `status`). */
export const STATUS_OF_ROOT = `CASE WHEN r.run_status IN (${STATED_RUN_STATUSES}) THEN r.run_status
             WHEN r.response_status IN (${RESPONSE_RUN_STATUSES}) THEN r.response_status END`;

/**
 * The CTE `<name>` (default `roots`; one row per run: its root span's columns, its own session key and turn
 * id as `own_session`, `own_turn`, and the derived status), with its helpers `<name>_ag`, `<name>_rows`.
 * `narrow` are conditions on the `spans` columns: a trace takes part only when one of its spans matches all
 * of them; `scope`, when given, is a condition on `trace_id` used instead.
 */
export function rootsCte(project: string, narrow: string[], name = 'roots', scope?: string): string {
  return `${rootRowsCte(project, scope ?? narrowScope(project, narrow), ROOT_COLUMNS, `${name}_rows`)},
    ${name} AS (
      SELECT trace_id, r.span_id AS root_span_id, r.agent_name, r.agent_id, r.observation_key, r.service_name, r.environment,
        r.session_key AS own_session, r.turn_id AS own_turn, ${STATUS_OF_ROOT} AS status,
        r.terminal_reason, r.start_us, r.end_us
      FROM ${name}_rows
    )`;
}

/**
 * `<name>`: the rows of `from` (a CTE with the `roots` columns) with the session key and turn id fallbacks
 * applied: the root's own, else the first span of the trace (by start, then span id) that has one.
 * Only the traces of `from` are read for the fallbacks.
 */
export function withFallbacks(name: string, from: string, project: string): string {
  return `
    ${name}_firsts AS (
      SELECT x.trace_id,
        arg_min(x.session_key, {'start': x.start_us, 'span': x.span_id, 'copy': x.ingested_at_us}) FILTER (WHERE x.session_key IS NOT NULL) AS session_key,
        arg_min(x.turn_id, {'start': x.start_us, 'span': x.span_id, 'copy': x.ingested_at_us}) FILTER (WHERE x.turn_id IS NOT NULL) AS turn_id
      FROM spans x
      WHERE x.project_id = ${project} AND x.trace_id IN (SELECT trace_id FROM ${from} WHERE own_session IS NULL OR own_turn IS NULL)
        AND (x.session_key IS NOT NULL OR x.turn_id IS NOT NULL)
      GROUP BY x.trace_id
    ),
    ${name} AS (
      SELECT f0.*,
        coalesce(f0.own_session, f1.session_key) AS session_key,
        coalesce(f0.own_turn, f1.turn_id) AS turn_id
      FROM ${from} f0 LEFT JOIN ${name}_firsts f1 ON f1.trace_id = f0.trace_id
    )`;
}

/** Every run of the narrowed traces, with its fallbacks (`runs`). */
export function runCte(project: string, narrow: string[]): string {
  return `${rootsCte(project, narrow)},${withFallbacks('runs', 'roots', project)}`;
}

/** Narrowing conditions and final conditions of a run filter. */
export function runConditions(p: Params, f: RunFilter): { narrow: string[]; where: string[] } {
  const narrow: string[] = [];
  const where: string[] = [];
  if (f.traceIds) {
    const l = inList(p, f.traceIds);
    narrow.push(`trace_id ${l}`);
    where.push(`trace_id ${l}`);
  }
  if (f.sessionKeys) {
    const l = inList(p, f.sessionKeys);
    narrow.push(`session_key ${l}`);
    where.push(`session_key ${l}`);
  }
  if (f.turnIds) {
    const l = inList(p, f.turnIds);
    narrow.push(`turn_id ${l}`);
    where.push(`turn_id ${l}`);
  }
  if (f.observationKey !== undefined) {
    const k = p.str(f.observationKey);
    narrow.push(`${ROOT_CANDIDATE} AND observation_key = ${k}`);
    where.push(`observation_key = ${k}`);
  }
  if (f.sinceUs !== undefined || f.untilUs !== undefined) {
    const conds: string[] = [];
    if (f.sinceUs !== undefined) conds.push(`start_us >= ${p.int(f.sinceUs)}`);
    if (f.untilUs !== undefined) conds.push(`start_us <= ${p.int(f.untilUs)}`);
    narrow.push(`${ROOT_CANDIDATE} AND ${conds.join(' AND ')}`);
    where.push(...conds);
  }
  if (f.statuses) where.push(`status ${inList(p, f.statuses)}`);
  return { narrow, where };
}

export { toRunRow } from '../row-mappers.js';
