/**
 * The SQL pieces of the ClickHouse agent reads (agent-runs-query.ts): bound `{name:Type}` parameters, the
 * conditions every read shares (tombstoned traces left out), and the row conversions. 64-bit integers come
 * back as JSON strings (client.ts): times and counts are below 2^53 and read as numbers.
 */
import type { ModelUsageRow, RunFilter, RunHealthRow, RunRow, StepRow } from '../../../domains/agent-runs/store.js';

/** Bound parameters with generated names: each value is sent apart from the SQL and referenced by its name. */
export class ChParams {
  readonly values: Record<string, unknown> = {};
  private n = 0;
  private add(v: unknown, type: string): string {
    const k = `p${this.n++}`;
    this.values[k] = v;
    return `{${k}:${type}}`;
  }
  str(v: string): string {
    return this.add(v, 'String');
  }
  int(v: number): string {
    return this.add(Math.trunc(v), 'Int64');
  }
  strs(v: readonly string[]): string {
    return this.add([...v], 'Array(String)');
  }
}

/** A row count spliced into LIMIT (a number the code computed, never text). */
export const count = (n: number): string => String(Math.max(0, Math.trunc(n)));

/**
 * Where a subquery of a distributed table runs (cluster mode): every table is sharded by project and every
 * read is of one project, so the subqueries and joins read the shard's local tables. No effect on one server.
 */
export const LOCAL_SUBQUERIES = `SETTINGS distributed_product_mode = 'local'`;

/** `trace_id` is no deleted trace of the project (`project` is the bound project). */
export const notTombstoned = (project: string, column = 'trace_id'): string =>
  `${column} NOT IN (SELECT trace_id FROM trace_tombstones WHERE project_id = ${project})`;

export const num = (v: unknown): number => Number(v);
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 'true';

/** The `run_summaries` columns a run row reads (`toRunRow`). */
export const RUN_COLUMNS =
  'trace_id, root_span_id, agent_name, agent_id, observation_key, service_name, environment, session_key, turn_id, status, terminal_reason, start_us, end_us, step_count, error_steps, tool_calls, model_calls, safety_outcomes, safety_errors';

/** The conditions of a run filter on `run_summaries` columns (read with FINAL). */
export function runWhere(p: ChParams, f: RunFilter): string[] {
  const project = p.str(f.projectId);
  const where = [`project_id = ${project}`];
  if (f.traceIds) where.push(`trace_id IN ${p.strs(f.traceIds)}`);
  if (f.sessionKeys) where.push(`session_key IN ${p.strs(f.sessionKeys)}`);
  if (f.turnIds) where.push(`turn_id IN ${p.strs(f.turnIds)}`);
  if (f.observationKey !== undefined) where.push(`observation_key = ${p.str(f.observationKey)}`);
  if (f.sinceUs !== undefined) where.push(`start_us >= ${p.int(f.sinceUs)}`);
  if (f.untilUs !== undefined) where.push(`start_us <= ${p.int(f.untilUs)}`);
  if (f.statuses) where.push(`status IN ${p.strs(f.statuses)}`);
  where.push(notTombstoned(project));
  return where;
}

export function toRunRow(r: Record<string, unknown>): RunRow {
  return {
    traceId: String(r.trace_id),
    rootSpanId: String(r.root_span_id),
    agentName: strOrNull(r.agent_name),
    agentId: strOrNull(r.agent_id),
    observationKey: strOrNull(r.observation_key),
    serviceName: strOrNull(r.service_name),
    environment: strOrNull(r.environment),
    sessionKey: strOrNull(r.session_key),
    turnId: strOrNull(r.turn_id),
    status: strOrNull(r.status),
    terminalReason: strOrNull(r.terminal_reason),
    startUs: num(r.start_us),
    endUs: num(r.end_us),
    stepCount: num(r.step_count),
    errorSteps: num(r.error_steps),
    toolCalls: num(r.tool_calls),
    modelCalls: num(r.model_calls),
    safetyStepsWithOutcome: num(r.safety_outcomes),
    safetyErrorSteps: num(r.safety_errors),
  };
}

/** One usage group as stored in `run_summaries.usage` (summaries.ts): [provider, model, input tokens, output tokens, reported cost, calls]. */
export type UsageTuple = [string | null, string | null, number | null, number | null, number | null, number];

export const usageRow = ([provider, model, inputTokens, outputTokens, reportedCostNanos, steps]: UsageTuple): Omit<ModelUsageRow, 'traceId'> => ({
  provider,
  model,
  inputTokens,
  outputTokens,
  reportedCostNanos,
  steps,
});

/** A run summary's `usage` JSON as usage rows. */
export function usageOf(json: string): Omit<ModelUsageRow, 'traceId'>[] {
  return json === '[]' || json === '' ? [] : (JSON.parse(json) as UsageTuple[]).map(usageRow);
}

/** The `spans` columns a step reads (`toStepRow`). */
export const STEP_COLUMNS = `span_id, parent_span_id, name, status_code, status_message, canonical_operation, response_status, outcome, start_us, end_us, tool_name, model, provider,
  input_tokens, output_tokens, reported_cost_nanos, safety_check, memory_item_id, memory_store, memory_provenance, memory_trust_label, context_events, attributes`;

export function toStepRow(r: Record<string, unknown>): StepRow {
  return {
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
    safetyCheck: bool(r.safety_check),
    memoryItemId: strOrNull(r.memory_item_id),
    memoryStore: strOrNull(r.memory_store),
    memoryProvenance: strOrNull(r.memory_provenance),
    memoryTrustLabel: strOrNull(r.memory_trust_label),
    contextEvents: num(r.context_events),
    attributes: String(r.attributes),
  };
}

/** Health rows from `(observation_key, status, n, last_start)` rows, one per key. */
export function healthOf(rows: Record<string, unknown>[]): RunHealthRow[] {
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
