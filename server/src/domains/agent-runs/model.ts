/**
 * The closed enumerations and attribute names of the agent model (docs/agent-model.md). Ingestion
 * derives stored columns with them; reads validate filters against them.
 */

/** The well-known `gen_ai.operation.name` values that map to a canonical operation. */
export const GEN_AI_OPERATIONS = [
  'chat',
  'create_agent',
  'create_memory',
  'create_memory_store',
  'delete_memory',
  'delete_memory_store',
  'embeddings',
  'execute_tool',
  'fetch_response',
  'generate_content',
  'invoke_agent',
  'invoke_workflow',
  'plan',
  'retrieval',
  'search_memory',
  'text_completion',
  'update_memory',
  'upsert_memory',
] as const;

export const CANONICAL_PREFIX = 'CANONICAL_OPERATION_';
export const CANONICAL_UNKNOWN = 'CANONICAL_OPERATION_UNKNOWN';
export const CANONICAL_OPERATIONS: readonly string[] = [CANONICAL_UNKNOWN, ...GEN_AI_OPERATIONS.map((o) => CANONICAL_PREFIX + o.toUpperCase())];

/**
 * One string per canonical operation, made once: every span of an operation carries the same string, so the
 * summaries' sets and comparisons and the column writer's dictionary hash it once (a string built per span
 * is hashed and compared again by each).
 */
const CANONICAL_OF = new Map<string, string>(GEN_AI_OPERATIONS.map((o, i) => [o, CANONICAL_OPERATIONS[i + 1]]));

/** `gen_ai.operation.name` -> CANONICAL_OPERATION_*; anything else (or none) is _UNKNOWN. */
export function canonicalOperation(operationName: string | null | undefined): string {
  return (operationName && CANONICAL_OF.get(operationName)) || CANONICAL_UNKNOWN;
}

export const OP = {
  invokeAgent: 'CANONICAL_OPERATION_INVOKE_AGENT',
  invokeWorkflow: 'CANONICAL_OPERATION_INVOKE_WORKFLOW',
  executeTool: 'CANONICAL_OPERATION_EXECUTE_TOOL',
} as const;

/**
 * May this span be the root of a run (docs/agent-model.md "Run")? An agent span, or a workflow (chain)
 * span at the top of its trace (no parent). A trace with an agent span is rooted at one of its agent
 * spans; a top workflow span roots the run only when the trace holds no agent span (decided at read time).
 */
export function isRunRootCandidate(canonicalOperation: string, hasParent: boolean): boolean {
  return canonicalOperation === OP.invokeAgent || (canonicalOperation === OP.invokeWorkflow && !hasParent);
}

/** Model calls: the operations that call a model (they carry usage and cost). */
export const MODEL_OPERATIONS: readonly string[] = ['chat', 'text_completion', 'generate_content', 'embeddings'].map((o) => CANONICAL_PREFIX + o.toUpperCase());

const MODEL_OPERATION_SET = new Set(MODEL_OPERATIONS);

/** What `modelCallIds` reads of a step. */
export interface UsageStep {
  spanId: string;
  parentSpanId: string | null;
  canonicalOperation: string;
  inputTokens: number | null;
  outputTokens: number | null;
}

/**
 * The model calls among the steps of one trace (docs/agent-model.md "Model calls"). A usage step is one of
 * a model operation or that reports token counts; a model call is a usage step with no usage step below it.
 * A parent that reports the totals of its children (the AI SDK's call span, a framework's model span
 * around the client library's own) is not a call, so nothing is counted or priced twice.
 * The same rule as the SQL of `modelCallsCte` (storage/telemetry/duckdb/agent-runs-sql.ts).
 */
export function modelCallIds(steps: readonly UsageStep[]): Set<string> {
  const usage = steps.filter((s) => MODEL_OPERATION_SET.has(s.canonicalOperation) || s.inputTokens !== null || s.outputTokens !== null);
  const parentOf = new Map(steps.map((s) => [s.spanId, s.parentSpanId]));
  const above = new Set<string>(); // every step that has a usage step below it
  for (const u of usage) {
    for (let p = u.parentSpanId; p !== null && p !== undefined && !above.has(p); p = parentOf.get(p) ?? null) above.add(p);
  }
  return new Set(usage.filter((s) => !above.has(s.spanId)).map((s) => s.spanId));
}

/** Memory operations (they count in `counts.memory_ops`). */
export const MEMORY_OPERATIONS: readonly string[] = [
  'create_memory',
  'create_memory_store',
  'delete_memory',
  'delete_memory_store',
  'search_memory',
  'update_memory',
  'upsert_memory',
].map((o) => CANONICAL_PREFIX + o.toUpperCase());

export const OUTCOMES = ['OUTCOME_OK', 'OUTCOME_ERROR', 'OUTCOME_CANCELLED'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Spec 2 "Step outcome": only these stated statuses set an outcome; the span status never does. */
const OUTCOME_OF_STATUS: Record<string, Outcome> = { completed: 'OUTCOME_OK', failed: 'OUTCOME_ERROR', cancelled: 'OUTCOME_CANCELLED' };

export function outcomeOf(responseStatus: string | null | undefined): Outcome | null {
  return responseStatus ? (OUTCOME_OF_STATUS[responseStatus] ?? null) : null;
}

/** The SDK's agent-run statuses, as sent on the wire (spec 3, `end(status, terminalReason:)`). */
export const RUN_STATUSES = ['completed', 'failed', 'timed_out', 'cancelled', 'max_steps'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TERMINAL_REASON = /^[a-z][a-z0-9_]{0,63}$/;

/** Spec 2 "Step-level agent event": the 13 categories. */
export const EVENT_CATEGORIES = [
  'model',
  'agent',
  'workflow',
  'planning',
  'tool',
  'mcp',
  'retrieval',
  'memory',
  'safety',
  'evaluation',
  'context',
  'application',
  'a2a',
] as const;
export type EventCategory = (typeof EVENT_CATEGORIES)[number];

export const CONTEXT_KINDS = ['assembly', 'compaction', 'cache'] as const;
export type ContextKind = (typeof CONTEXT_KINDS)[number];

export const MEMORY_TRUST_LABELS = ['MEMORY_TRUST_LABEL_TRUSTED', 'MEMORY_TRUST_LABEL_SUSPECT', 'MEMORY_TRUST_LABEL_QUARANTINED'] as const;

/** At most this many sources of an assembly detail are kept; more sets `sources_truncated`. */
export const MAX_CONTEXT_SOURCES = 100;

/** The attributes read (docs/agent-model.md). */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  responseStatus: 'gen_ai.response.status',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  turnId: 'svc.turn.id',
  runStatus: 'svc.agent.run.status',
  terminalReason: 'svc.agent.run.terminal_reason',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  providerName: 'gen_ai.provider.name',
  system: 'gen_ai.system',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  costNanos: 'svc.cost.nanos',
  safetyCheck: 'svc.safety.check',
  memoryItemId: 'svc.memory.item.id',
  dataSourceId: 'gen_ai.data_source.id',
  memoryProvenance: 'svc.memory.item.provenance',
  memoryTrustLabel: 'svc.memory.trust_label',
  eventCategory: 'svc.event.category',
  contextKind: 'svc.context.kind',
} as const;

/** The step attributes a read may return (never prompts, completions or tool arguments). */
export const STEP_ATTRIBUTE_ALLOWLIST: readonly string[] = [
  'gen_ai.response.status',
  'gen_ai.operation.name',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'gen_ai.provider.name',
  'gen_ai.tool.name',
  'gen_ai.tool.call.id',
  'gen_ai.agent.name',
  'gen_ai.agent.id',
  'gen_ai.data_source.id',
];
