/**
 * Which spans are model calls, in SQL (docs/agent-model.md "Model calls"; model.ts `modelCallIds` is the
 * same rule over the steps of one trace): a usage step is a span of a model operation or one that reports
 * token counts; a model call is a usage step with no usage step below it. The run reads count and price
 * them (agent-runs-query.ts), the model-call reads list them (llm-calls-query.ts).
 */
import { MODEL_OPS, numOrNull, spansOnce, strOrNull } from './agent-runs-sql.js';

/** A usage step, on the columns of the row (or of `alias`). */
export function usageStep(alias?: string): string {
  const c = (col: string) => (alias ? `${alias}.${col}` : col);
  return `(${c('canonical_operation')} IN (${MODEL_OPS}) OR ${c('input_tokens')} IS NOT NULL OR ${c('output_tokens')} IS NOT NULL)`;
}

/**
 * An aggregate over the spans of one trace (rows of `alias`): does a usage step of the trace have a child?
 * Only then can a parent's totals hide among its usage steps; elsewhere every usage step is a model call,
 * which the reads count without the walk of `totalsCte`.
 */
export function nestedUsage(alias: string): string {
  return `list_has_any(list(${alias}.span_id) FILTER (WHERE ${usageStep(alias)}), list(${alias}.parent_span_id))`;
}

/** The columns `modelCalls` reads of each span. */
export const MODEL_CALL_COLUMNS = 'trace_id, span_id, parent_span_id, canonical_operation, input_tokens, output_tokens';

/**
 * A subquery of the model calls `(trace_id, span_id)` among the spans of `from` (a CTE with the
 * `MODEL_CALL_COLUMNS`, each span once; model.ts `modelCallIds` is the same rule over one trace's steps).
 * A usage step is one of a model operation or that reports token counts; a model call is a usage step
 * with no usage step below it (a parent that reports its children's totals is not a call). Only usage
 * steps that have children are walked down (most model spans are leaves); `UNION` ends a walk on a cycle.
 * The recursion stays inside the subquery: a `WITH RECURSIVE` around the whole read slows its other parts.
 */
export function modelCalls(from: string): string {
  return `(WITH RECURSIVE
    mc_u AS MATERIALIZED (SELECT trace_id, span_id, parent_span_id, ${usageStep()} AS usage FROM ${from}),
    mc_down(trace_id, top, span_id) AS (
      SELECT c.trace_id, c.parent_span_id, c.span_id
      FROM mc_u c SEMI JOIN mc_u t ON t.trace_id = c.trace_id AND t.span_id = c.parent_span_id AND t.usage
      UNION
      SELECT c.trace_id, d.top, c.span_id FROM mc_down d JOIN mc_u c ON c.trace_id = d.trace_id AND c.parent_span_id = d.span_id
    ),
    mc_totals AS (
      SELECT DISTINCT d.trace_id, d.top AS span_id FROM mc_down d SEMI JOIN mc_u x ON x.trace_id = d.trace_id AND x.span_id = d.span_id AND x.usage
    )
    SELECT u.trace_id, u.span_id FROM (SELECT trace_id, span_id FROM mc_u WHERE usage) u ANTI JOIN mc_totals USING (trace_id, span_id))`;
}

/**
 * The usage steps among `cand` (a CTE of spans, each once, with `trace_id`, `span_id`) that report totals of
 * usage steps below them, as the CTEs `<name>_cpar`, `<name>_fam`, `<name>_*` and `<name>`: only the traces
 * where a candidate has children are read again (most model spans are leaves), and `totalsCte` decides there.
 */
export function totalsAmong(project: string, cand: string, name = 'tot'): string {
  return `
    ${name}_cpar AS (
      SELECT DISTINCT c.trace_id FROM ${cand} c
      SEMI JOIN spans s ON s.project_id = ${project} AND s.trace_id = c.trace_id AND s.parent_span_id = c.span_id
    ),
    ${name}_fam AS MATERIALIZED (${spansOnce(project, `trace_id IN (SELECT trace_id FROM ${name}_cpar)`, MODEL_CALL_COLUMNS)}),
    ${totalsCte(`${name}_fam`, name)}`;
}

/**
 * The CTEs `<name>_par`, `<name>_in` and `<name>`: the usage steps of `from` (a CTE holding every span of its
 * traces, each once, with the `MODEL_CALL_COLUMNS`) that have a usage step below them, the totals that are
 * no model call. The walk (`modelCalls`) runs only over the traces where a usage step has a child: in most
 * traces every usage step is a leaf, and the walk gets no rows.
 */
export function totalsCte(from: string, name = 'tot'): string {
  return `
    ${name}_par AS (
      SELECT DISTINCT c.trace_id FROM (SELECT trace_id, span_id FROM ${from} WHERE ${usageStep()}) c
      SEMI JOIN ${from} s ON s.trace_id = c.trace_id AND s.parent_span_id = c.span_id
    ),
    ${name}_in AS MATERIALIZED (SELECT * FROM ${from} WHERE trace_id IN (SELECT trace_id FROM ${name}_par)),
    ${name} AS (
      SELECT trace_id, span_id FROM ${name}_in WHERE ${usageStep()}
      EXCEPT SELECT trace_id, span_id FROM ${modelCalls(`${name}_in`)}
    )`;
}

/** The usage columns of a row read with `provider, model, input_tokens, output_tokens, reported_cost_nanos`. */
export const usageOf = (r: Record<string, unknown>) => ({
  provider: strOrNull(r.provider),
  model: strOrNull(r.model),
  inputTokens: numOrNull(r.input_tokens),
  outputTokens: numOrNull(r.output_tokens),
  reportedCostNanos: numOrNull(r.reported_cost_nanos),
});
