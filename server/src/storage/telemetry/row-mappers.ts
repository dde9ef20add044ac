/**
 * Rows of the telemetry tables as the domains read them, the same for both engines: the column lists the
 * adapters select and the mappers from a row of named columns (DuckDB gives 64-bit integers as bigints,
 * ClickHouse as strings: both are numbers below 2^53 here).
 */
import type { ModelUsageRow, RunHealthRow, RunRow, StepRow } from '../../domains/agent-runs/store.js';
import type { SpanDigest } from '../../domains/agent-runs/summary.js';

export const num = (v: unknown): number => Number(v);
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
export const bool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 'true';

/** The `run_summaries` columns a run row reads (`toRunRow`). */
export const RUN_COLUMNS =
  'trace_id, root_span_id, agent_name, agent_id, observation_key, service_name, environment, session_key, turn_id, status, terminal_reason, start_us, end_us, step_count, error_steps, tool_calls, model_calls, safety_outcomes, safety_errors';

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

/** The `spans` columns a summary digest reads (domains/agent-runs/summary.ts `SpanDigest`). */
export const DIGEST_COLUMNS =
  'trace_id, span_id, parent_span_id, name, service_name, environment, status_code, start_us, end_us, ingested_at_us, canonical_operation, response_status, outcome, agent_name, agent_id, observation_key, session_key, turn_id, run_status, terminal_reason, model, provider, input_tokens, output_tokens, reported_cost_nanos, safety_check';


/** What the summaries keep of a stored span, from a row read with DIGEST_COLUMNS. */
export function digestOfRecord(r: Record<string, unknown>): SpanDigest & { traceId: string } {
  return {
    traceId: String(r.trace_id),
    spanId: String(r.span_id),
    parentSpanId: strOrNull(r.parent_span_id),
    name: String(r.name),
    serviceName: strOrNull(r.service_name),
    environment: strOrNull(r.environment),
    statusCode: String(r.status_code),
    startUs: Number(r.start_us),
    endUs: Number(r.end_us),
    ingestedAtUs: Number(r.ingested_at_us),
    canonicalOperation: String(r.canonical_operation),
    responseStatus: strOrNull(r.response_status),
    outcome: strOrNull(r.outcome),
    agentName: strOrNull(r.agent_name),
    agentId: strOrNull(r.agent_id),
    observationKey: strOrNull(r.observation_key),
    sessionKey: strOrNull(r.session_key),
    turnId: strOrNull(r.turn_id),
    runStatus: strOrNull(r.run_status),
    terminalReason: strOrNull(r.terminal_reason),
    model: strOrNull(r.model),
    provider: strOrNull(r.provider),
    inputTokens: numOrNull(r.input_tokens),
    outputTokens: numOrNull(r.output_tokens),
    reportedCostNanos: numOrNull(r.reported_cost_nanos),
    safetyCheck: bool(r.safety_check),
  };
}

