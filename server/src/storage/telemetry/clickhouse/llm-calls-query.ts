/**
 * ClickHouse adapter of the model-call reads (domains/llm/calls-store.ts), with the observable behaviour of the
 * embedded one (duckdb/llm-calls-query.ts): the model calls of a project, inside an agent run or not, listed or
 * grouped by usage. A model call is what the agent reads count as one (docs/agent-model.md "Model calls";
 * domains/agent-runs/model.ts `modelCallIds`): a usage step (a span of a model operation, or one that reports
 * token counts) with no usage step below it, however deep.
 *
 * - The calls are read over the window on the span's start: the `spans` partitions (by start month) and the
 *   minmax index on `start_us` skip what lies outside it. Each span once: of its copies the first ingested
 *   (`LIMIT 1 BY`); spans of deleted traces (a `trace_tombstones` row) are left out.
 * - A candidate can only be a parent's totals when it has a child span. Only the traces where a candidate has
 *   one are read again (one range of the ordering key each: most model spans are leaves, and most traces are
 *   never read twice); there the walk up from every usage step runs over the trace's spans as arrays
 *   (`TOTALS`), and the usage steps it reaches are the totals, left out.
 * Every user value is a bound parameter.
 */
import { MODEL_OPERATIONS } from '../../../domains/agent-runs/model.js';
import type { LlmCallFilter, LlmCallPosition, LlmCallRow, LlmCallsStore, LlmUsageRow } from '../../../domains/llm/calls-store.js';
import { ChParams, LOCAL_SUBQUERIES, count, notTombstoned, num, numOrNull, strOrNull } from './agent-runs-sql.js';
import type { ChTelemetryDb } from './db.js';

const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const MODEL_OPS = MODEL_OPERATIONS.map(lit).join(', ');

/** A usage step, on the columns of the row. */
const USAGE_STEP = `(canonical_operation IN (${MODEL_OPS}) OR input_tokens IS NOT NULL OR output_tokens IS NOT NULL)`;

/**
 * Of one trace's spans as arrays (`ids`, `pars`: parent or '', `usage`: 1 for a usage step), the usage steps
 * that have a usage step below them: every ancestor of a usage step is marked, a level per fold step (each step
 * marks at least one span not marked before, or has nothing left to do, so the length of the trace bounds the
 * walk; a cycle of parents ends it too), and the usage steps among the marked are the totals.
 */
const TOTALS = `arrayFilter((i, u) -> u AND has(arrayConcat(walk.1, walk.2), i), ids, usage)`;
const WALK = `arrayFold(
      (acc, x) -> if(empty(acc.1), acc, tuple(
        arrayFilter(q -> q != '' AND NOT has(acc.2, q) AND NOT has(acc.1, q), arrayDistinct(arrayMap(f -> pars[indexOf(ids, f)], acc.1))),
        arrayConcat(acc.2, acc.1))),
      range(length(ids) + 1),
      tuple(arrayDistinct(arrayFilter((q, u) -> u AND q != '', pars, usage)), CAST([], 'Array(String)')))`;

const USAGE_COLUMNS = 'provider, model, input_tokens, output_tokens, reported_cost_nanos';

/**
 * The CTEs `cand` (the usage steps the filter selects, each once, with `columns`), `par` (the traces where one
 * of them has a child), `fam` (those traces' spans, each once, as arrays) and `tot` (the totals among them).
 * Reading from `cand` what is not in `tot` gives the model calls.
 */
function callsCte(p: ChParams, f: LlmCallFilter, columns: string, extra: string[] = []): string {
  const project = p.str(f.projectId);
  const where = [`project_id = ${project}`, USAGE_STEP, `start_us >= ${p.int(f.sinceUs)}`, `start_us <= ${p.int(f.untilUs)}`, ...extra];
  if (f.model !== undefined) where.push(`model = ${p.str(f.model)}`);
  if (f.provider !== undefined) where.push(`provider = ${p.str(f.provider)}`);
  if (f.serviceName !== undefined) where.push(`service_name = ${p.str(f.serviceName)}`);
  where.push(notTombstoned(project));
  // Copies of one span share these columns, so the conditions pick every copy or none.
  const cols = [...new Set(['trace_id', 'span_id', ...columns.split(',').map((c) => c.trim())])].join(', ');
  return `
    cand AS (
      SELECT ${cols} FROM spans WHERE ${where.join(' AND ')}
      ORDER BY ingested_at_us, start_us LIMIT 1 BY trace_id, span_id
    ),
    par AS (
      SELECT DISTINCT trace_id FROM spans
      WHERE project_id = ${project} AND trace_id IN (SELECT trace_id FROM cand)
        AND (trace_id, ifNull(parent_span_id, '')) IN (SELECT trace_id, span_id FROM cand)
    ),
    fam AS (
      SELECT trace_id, groupArray(span_id) AS ids, groupArray(ifNull(parent_span_id, '')) AS pars, groupArray(toUInt8(${USAGE_STEP})) AS usage
      FROM (
        SELECT trace_id, span_id, parent_span_id, canonical_operation, input_tokens, output_tokens FROM spans
        WHERE project_id = ${project} AND trace_id IN (SELECT trace_id FROM par)
        ORDER BY ingested_at_us, start_us LIMIT 1 BY trace_id, span_id)
      GROUP BY trace_id
    ),
    tot AS (
      SELECT trace_id, span_id FROM (SELECT trace_id, ${WALK} AS walk, ${TOTALS} AS totals FROM fam) ARRAY JOIN totals AS span_id
    )`;
}

const NOT_TOTALS = '(trace_id, span_id) NOT IN (SELECT trace_id, span_id FROM tot)';

const usageOf = (r: Record<string, unknown>) => ({
  provider: strOrNull(r.provider),
  model: strOrNull(r.model),
  inputTokens: numOrNull(r.input_tokens),
  outputTokens: numOrNull(r.output_tokens),
  reportedCostNanos: numOrNull(r.reported_cost_nanos),
});

export class ChLlmCallsQuery implements LlmCallsStore {
  constructor(private readonly db: ChTelemetryDb) {}

  async calls(f: LlmCallFilter, opts: { after?: LlmCallPosition; limit: number }): Promise<LlmCallRow[]> {
    const p = new ChParams();
    const after = opts.after
      ? [`(start_us, span_id, trace_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.spanId)}, ${p.str(opts.after.traceId)})`]
      : [];
    const columns = `trace_id, span_id, start_us, end_us, canonical_operation, service_name, status_code, ${USAGE_COLUMNS}`;
    const sql = `
      WITH ${callsCte(p, f, columns, after)}
      SELECT ${columns} FROM cand WHERE ${NOT_TOTALS}
      ORDER BY start_us DESC, span_id DESC, trace_id DESC
      LIMIT ${count(opts.limit)} ${LOCAL_SUBQUERIES}`;
    const rows = await this.db.client.query(sql, p.values);
    return rows.map((r) => ({
      traceId: String(r.trace_id),
      spanId: String(r.span_id),
      startUs: num(r.start_us),
      endUs: num(r.end_us),
      canonicalOperation: String(r.canonical_operation),
      serviceName: strOrNull(r.service_name),
      statusCode: String(r.status_code),
      ...usageOf(r),
    }));
  }

  async usage(f: LlmCallFilter): Promise<LlmUsageRow[]> {
    const p = new ChParams();
    const sql = `
      WITH ${callsCte(p, f, USAGE_COLUMNS)}
      SELECT ${USAGE_COLUMNS}, count() AS calls FROM cand WHERE ${NOT_TOTALS}
      GROUP BY ${USAGE_COLUMNS} ${LOCAL_SUBQUERIES}`;
    const rows = await this.db.client.query(sql, p.values);
    return rows.map((r) => ({ ...usageOf(r), calls: num(r.calls) }));
  }
}
