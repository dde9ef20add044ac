/**
 * Run and trace summaries (kept at ingest, read by every list): a pure function of the set of spans of one
 * trace, so that the summary is the same whatever order the spans arrived in, across however many
 * requests, with the root first, last or never, and with retried copies (docs/agent-model.md "Run").
 *
 * A trace's state is its spans, each once: of the copies of a span (same span id) the first ingested is
 * the one read (ties: the earlier start), as every raw-span read does. `summarizeTrace` and `summarizeRun`
 * are the rules the lists answer with; the writer of each engine keeps their rows up to date in the
 * transaction that stores the spans (storage/telemetry/*\/summaries*.ts).
 */
import { MODEL_OPERATIONS, OP, RUN_STATUSES, isRunRootCandidate } from './model.js';
import type { TraceSummaryRow } from '../traces/store.js';
import type { AgentSpanColumns, ModelUsageRow, RunRow } from './store.js';

/** What the summaries read of one stored span (its agent-model columns and a few of its own). */
export interface SpanDigest
  extends Pick<
    AgentSpanColumns,
    | 'canonicalOperation'
    | 'responseStatus'
    | 'outcome'
    | 'agentName'
    | 'agentId'
    | 'observationKey'
    | 'sessionKey'
    | 'turnId'
    | 'runStatus'
    | 'terminalReason'
    | 'model'
    | 'provider'
    | 'inputTokens'
    | 'outputTokens'
    | 'reportedCostNanos'
    | 'safetyCheck'
  > {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  serviceName: string | null;
  environment: string | null;
  statusCode: string;
  startUs: number;
  endUs: number;
  ingestedAtUs: number;
}

/** The spans of one trace, each once (first ingested copy), and the ingest times of every copy stored. */
export class TraceState {
  readonly spans: Map<string, SpanDigest>;
  /** Ingest times (µs) of the first and last copy stored: a detail read looks only there. */
  firstIngestedUs: number;
  lastIngestedUs: number;

  constructor(from?: TraceState) {
    this.spans = new Map(from?.spans);
    this.firstIngestedUs = from?.firstIngestedUs ?? Number.POSITIVE_INFINITY;
    this.lastIngestedUs = from?.lastIngestedUs ?? Number.NEGATIVE_INFINITY;
  }

  /** Adds a stored copy of a span; the first ingested copy (then the earlier start) stays the one read. */
  add(d: SpanDigest): void {
    if (d.ingestedAtUs < this.firstIngestedUs) this.firstIngestedUs = d.ingestedAtUs;
    if (d.ingestedAtUs > this.lastIngestedUs) this.lastIngestedUs = d.ingestedAtUs;
    const had = this.spans.get(d.spanId);
    if (had && (had.ingestedAtUs < d.ingestedAtUs || (had.ingestedAtUs === d.ingestedAtUs && had.startUs <= d.startUs))) return;
    this.spans.set(d.spanId, d);
  }
}

/** One row of the trace list, and where the trace's copies were ingested. */
export interface TraceSummary extends TraceSummaryRow {
  firstIngestedUs: number;
  lastIngestedUs: number;
}

/** One run as the lists read it, with its model calls grouped by equal usage (priced when read). */
export interface RunSummary extends RunRow {
  usage: NonNullable<RunRow['usage']>;
  /** `usage` as stored: JSON [[provider, model, input, output, reported cost, calls], ...] in `usage` order. */
  usageText: string;
}

const codePointLess = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Trace root: a parentless span first, then the earliest start, then the smallest span id. */
export function summarizeTrace(traceId: string, state: TraceState): TraceSummary | null {
  let root: SpanDigest | undefined;
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let errors = 0;
  let rootMissing = true;
  const services = new Set<string>();
  for (const s of state.spans.values()) {
    if (s.startUs < start) start = s.startUs;
    if (s.endUs > end) end = s.endUs;
    if (s.statusCode === 'error') errors++;
    if (s.serviceName !== null) services.add(s.serviceName);
    if (s.parentSpanId === null) rootMissing = false;
    if (!root || rootBefore(s, root)) root = s;
  }
  if (!root) return null;
  return {
    traceId,
    startUs: start,
    endUs: end,
    spanCount: state.spans.size,
    errorCount: errors,
    services: [...services].sort(codePointLess),
    rootSpanId: root.spanId,
    rootName: root.name,
    rootService: root.serviceName,
    rootMissing,
    firstIngestedUs: state.firstIngestedUs,
    lastIngestedUs: state.lastIngestedUs,
  };
}

function rootBefore(a: SpanDigest, b: SpanDigest): boolean {
  const ap = a.parentSpanId !== null;
  const bp = b.parentSpanId !== null;
  if (ap !== bp) return !ap;
  if (a.startUs !== b.startUs) return a.startUs < b.startUs;
  return a.spanId < b.spanId;
}

const STATED = new Set<string>(RUN_STATUSES);
const RESPONSE_STATUSES = new Set(['completed', 'failed', 'cancelled']);
const MODEL_OPS = new Set(MODEL_OPERATIONS);

/** The run's status from its root (docs/agent-model.md "Run", `status`). */
export function runStatusOf(root: Pick<SpanDigest, 'runStatus' | 'responseStatus'>): string | null {
  if (root.runStatus !== null && STATED.has(root.runStatus)) return root.runStatus;
  if (root.responseStatus !== null && RESPONSE_STATUSES.has(root.responseStatus)) return root.responseStatus;
  return null;
}

/** Earlier by (start, span id). */
const firstBy = (a: SpanDigest, b: SpanDigest | undefined) => !b || a.startUs < b.startUs || (a.startUs === b.startUs && a.spanId < b.spanId);

const nullsFirst = <T>(a: T | null, b: T | null, cmp: (a: T, b: T) => number) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : cmp(a, b));
const byNumber = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** Usage groups in one order: provider, model (code points), input, output tokens, reported cost; nulls first. */
function usageBefore(a: Omit<ModelUsageRow, 'traceId'>, b: Omit<ModelUsageRow, 'traceId'>): number {
  return (
    nullsFirst(a.provider, b.provider, codePointLess) ||
    nullsFirst(a.model, b.model, codePointLess) ||
    nullsFirst(a.inputTokens, b.inputTokens, byNumber) ||
    nullsFirst(a.outputTokens, b.outputTokens, byNumber) ||
    nullsFirst(a.reportedCostNanos, b.reportedCostNanos, byNumber)
  );
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const jsonStr = (v: string | null) => (v === null ? 'null' : NEEDS_ESCAPE.test(v) ? JSON.stringify(v) : `"${v}"`);
const jsonNum = (v: number | null) => (v === null || !Number.isFinite(v) ? 'null' : `${v}`);

/** `usage` as stored: JSON.stringify(usage.map((u) => [provider, model, input, output, reported cost, calls])), built directly. */
function usageText(usage: readonly Omit<ModelUsageRow, 'traceId'>[]): string {
  let out = '[';
  for (let i = 0; i < usage.length; i++) {
    const u = usage[i];
    out += `${i ? ',' : ''}[${jsonStr(u.provider)},${jsonStr(u.model)},${jsonNum(u.inputTokens)},${jsonNum(u.outputTokens)},${jsonNum(u.reportedCostNanos)},${u.steps}]`;
  }
  return out + ']';
}

/**
 * The run of a trace, or null when no span may root one. The root is the earliest-starting agent span
 * whose parent is not another agent span of the trace (ties: the smallest span id); when every agent span
 * has such a parent, the earliest of them; a trace without an agent span is rooted at its top workflow
 * span. Its session key and turn id are the root's, else the first span's (by start, then span id) that
 * has one. Counts are over every span, the root too. Model calls are found as `modelCallIds` finds them
 * (a usage step with no usage step below it), over the trace's spans as they are held.
 */
export function summarizeRun(traceId: string, state: TraceState): RunSummary | null {
  const spans = state.spans;
  let root: SpanDigest | undefined;
  // The root's rank: (workflow, nested) lower first.
  let rootWorkflow = 0;
  let rootNested = 0;
  let firstSession: SpanDigest | undefined;
  let firstTurn: SpanDigest | undefined;
  let errorSteps = 0;
  let toolCalls = 0;
  let safetyOutcomes = 0;
  let safetyErrors = 0;
  let usageSteps: SpanDigest[] | null = null;
  for (const s of spans.values()) {
    const op = s.canonicalOperation;
    if (isRunRootCandidate(op, s.parentSpanId !== null)) {
      const agent = op === OP.invokeAgent;
      const workflow = agent ? 0 : 1;
      const nested = agent && s.parentSpanId !== null && spans.get(s.parentSpanId)?.canonicalOperation === OP.invokeAgent ? 1 : 0;
      if (!root || workflow < rootWorkflow || (workflow === rootWorkflow && (nested < rootNested || (nested === rootNested && firstBy(s, root))))) {
        root = s;
        rootWorkflow = workflow;
        rootNested = nested;
      }
    }
    if (s.sessionKey !== null && firstBy(s, firstSession)) firstSession = s;
    if (s.turnId !== null && firstBy(s, firstTurn)) firstTurn = s;
    if (s.outcome === 'OUTCOME_ERROR') errorSteps++;
    if (op === OP.executeTool) toolCalls++;
    if (s.safetyCheck && s.outcome !== null) {
      safetyOutcomes++;
      if (s.outcome === 'OUTCOME_ERROR') safetyErrors++;
    }
    if (MODEL_OPS.has(op) || s.inputTokens !== null || s.outputTokens !== null) (usageSteps ??= []).push(s);
  }
  if (!root) return null;
  // Every span with a usage step below it is not a call (modelCallIds' rule, walking the parents held here).
  let above: Set<string> | null = null;
  if (usageSteps) {
    above = new Set();
    for (const u of usageSteps) {
      for (let p = u.parentSpanId; p !== null && !above.has(p); p = spans.get(p)?.parentSpanId ?? null) above.add(p);
    }
  }
  // Calls grouped by equal usage (a run names a few: compared field by field), in one order whatever order
  // the spans came in (usageBefore).
  const usage: Omit<ModelUsageRow, 'traceId'>[] = [];
  let modelCalls = 0;
  for (const u of usageSteps ?? []) {
    if (above!.has(u.spanId)) continue;
    modelCalls++;
    const g = usage.find((g) => g.model === u.model && g.provider === u.provider && g.inputTokens === u.inputTokens && g.outputTokens === u.outputTokens && g.reportedCostNanos === u.reportedCostNanos);
    if (g) g.steps++;
    else usage.push({ provider: u.provider, model: u.model, inputTokens: u.inputTokens, outputTokens: u.outputTokens, reportedCostNanos: u.reportedCostNanos, steps: 1 });
  }
  if (usage.length > 1) usage.sort(usageBefore);
  return {
    traceId,
    rootSpanId: root.spanId,
    agentName: root.agentName,
    agentId: root.agentId,
    observationKey: root.observationKey,
    serviceName: root.serviceName,
    environment: root.environment,
    sessionKey: root.sessionKey ?? firstSession?.sessionKey ?? null,
    turnId: root.turnId ?? firstTurn?.turnId ?? null,
    status: runStatusOf(root),
    terminalReason: root.terminalReason,
    startUs: root.startUs,
    endUs: root.endUs,
    stepCount: spans.size,
    errorSteps,
    toolCalls,
    modelCalls,
    safetyStepsWithOutcome: safetyOutcomes,
    safetyErrorSteps: safetyErrors,
    usage,
    usageText: usageText(usage),
  };
}
