/**
 * Stored rows -> API objects (docs/agent-model.md). An unknown or unset value is absent, never null or
 * guessed; the raw attribute maps of spans and events are never returned (steps get the allow-list only,
 * events none at all).
 */
import type { Static } from '@sinclair/typebox';
import { isoMicros } from '../traces/query-rules.js';
import type { Cost, RunCostReason, StepCost } from './cost.js';
import {
  ATTR,
  CONTEXT_KINDS,
  MAX_CONTEXT_SOURCES,
  MEMORY_OPERATIONS,
  MEMORY_TRUST_LABELS,
  OUTCOMES,
  RUN_STATUSES,
  STEP_ATTRIBUTE_ALLOWLIST,
  TERMINAL_REASON,
  type EventCategory,
  type RunStatus,
} from './model.js';
import type { AgentEvent, Identity, Run, Step } from './schemas.js';
import { durationMs } from './request-rules.js';
import type { EventRow, RunRow, SightingRow, StepRow } from './store.js';

/** Copies the members whose value is not null/undefined. */
export function present<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: NonNullable<T[K]> } {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = v;
  return out as { [K in keyof T]?: NonNullable<T[K]> };
}

const isRunStatus = (v: string | null): v is RunStatus => v !== null && (RUN_STATUSES as readonly string[]).includes(v);

export type RunView = Static<typeof Run>;

export function runView(r: RunRow, cost: Cost<RunCostReason>): RunView {
  return {
    run_id: r.traceId,
    root_step_id: r.rootSpanId,
    ...present({
      agent_name: r.agentName,
      agent_id: r.agentId,
      observation_key: r.observationKey,
      service_name: r.serviceName,
      environment: r.environment,
      session_key: r.sessionKey,
      turn_id: r.turnId,
      status: isRunStatus(r.status) ? r.status : null,
      terminal_reason: r.terminalReason !== null && TERMINAL_REASON.test(r.terminalReason) ? r.terminalReason : null,
    }),
    started_at: isoMicros(r.startUs),
    ended_at: isoMicros(r.endUs),
    duration_ms: durationMs(r.startUs, r.endUs),
    step_count: r.stepCount,
    error_steps: r.errorSteps,
    tool_calls: r.toolCalls,
    model_calls: r.modelCalls,
    ...cost,
    // "absent when no marked step has an outcome" (spec 3: "otherwise no score").
    ...(r.safetyStepsWithOutcome > 0 ? { safety_error_steps: r.safetyErrorSteps } : {}),
  };
}

function allowedAttributes(s: StepRow): Record<string, string | number | boolean> {
  let raw: unknown;
  try {
    raw = JSON.parse(s.attributes);
  } catch {
    raw = {};
  }
  const out: Record<string, string | number | boolean> = {};
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const k of STEP_ATTRIBUTE_ALLOWLIST) {
      const v = (raw as Record<string, unknown>)[k];
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    }
  }
  // The stated status is always visible, also when the outcome stays unset (spec 2 "Step outcome").
  if (s.responseStatus !== null) out[ATTR.responseStatus] = s.responseStatus;
  return out;
}

const MEMORY_OPS = new Set(MEMORY_OPERATIONS);
const isTrustLabel = (v: string | null): v is (typeof MEMORY_TRUST_LABELS)[number] => v !== null && (MEMORY_TRUST_LABELS as readonly string[]).includes(v);

function memoryOf(s: StepRow) {
  if (!MEMORY_OPS.has(s.canonicalOperation)) return undefined;
  const m = present({
    item_id: s.memoryItemId,
    store: s.memoryStore,
    provenance: s.memoryProvenance,
    declared_trust_label: isTrustLabel(s.memoryTrustLabel) ? s.memoryTrustLabel : null,
  });
  return Object.keys(m).length ? m : undefined;
}

const isOutcome = (v: string | null): v is (typeof OUTCOMES)[number] => v !== null && (OUTCOMES as readonly string[]).includes(v);

const SPAN_STATUSES = ['unset', 'ok', 'error'] as const;

export function stepView(s: StepRow, cost: StepCost | undefined): Static<typeof Step> {
  const memory = memoryOf(s);
  return {
    step_id: s.spanId,
    ...present({ parent_step_id: s.parentSpanId }),
    name: s.name,
    canonical_operation: s.canonicalOperation,
    ...(isOutcome(s.outcome) ? { outcome: s.outcome } : {}),
    // Beside the outcome, never read as it: the OpenTelemetry span status as the instrumentation set it.
    span_status: SPAN_STATUSES.find((x) => x === s.statusCode) ?? 'unset',
    ...present({ span_status_message: s.statusMessage }),
    started_at: isoMicros(s.startUs),
    ended_at: isoMicros(s.endUs),
    duration_ms: durationMs(s.startUs, s.endUs),
    ...present({
      tool_name: s.toolName,
      model: s.model,
      provider: s.provider,
      input_tokens: s.inputTokens,
      output_tokens: s.outputTokens,
    }),
    ...(cost ?? {}),
    ...(s.safetyCheck ? { safety_check: true } : {}),
    attributes: allowedAttributes(s),
    instrumented: s.contextEvents > 0,
    ...(memory ? { memory } : {}),
  };
}

// ---- context details (docs/agent-model.md "Step-level agent events")

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const nbr = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

function assembly(d: Json) {
  const sources = Array.isArray(d.sources) ? d.sources : [];
  const kept = sources
    .filter((x): x is Json => !!x && typeof x === 'object' && typeof (x as Json).id === 'string')
    .map((x) => ({ id: x.id as string, ...present({ kind: str(x.kind), tokens: nbr(x.tokens) }) }));
  const truncated = bool(d.sources_truncated) === true || kept.length > MAX_CONTEXT_SOURCES;
  return {
    ...present({ budget_tokens: nbr(d.budget_tokens), assembled_tokens: nbr(d.assembled_tokens), overflow: bool(d.overflow), digest: str(d.digest) }),
    sources: kept.slice(0, MAX_CONTEXT_SOURCES),
    ...(truncated ? { sources_truncated: true as const } : {}),
  };
}

function compaction(d: Json) {
  const before = nbr(d.before_count);
  const after = nbr(d.after_count);
  return present({
    trigger: str(d.trigger),
    strategy: str(d.strategy),
    before_count: before,
    after_count: after,
    before_digest: str(d.before_digest),
    after_digest: str(d.after_digest),
    removed_source_ids: strs(d.removed_source_ids),
    // Server-derived: absent unless both counts are present and before > 0.
    ratio: before !== undefined && after !== undefined && before > 0 ? after / before : undefined,
  });
}

const CACHE_OUTCOMES = ['hit', 'miss', 'write'];

function cache(d: Json) {
  const outcome = str(d.outcome);
  return present({
    provider: str(d.provider),
    key_digest: str(d.key_digest),
    outcome: outcome !== undefined && CACHE_OUTCOMES.includes(outcome) ? outcome : undefined,
    reused_tokens: nbr(d.reused_tokens),
    latency_saved_ms: nbr(d.latency_saved_ms),
    cost_saved_nanos: nbr(d.cost_saved_nanos),
  });
}

type ContextView = NonNullable<Static<typeof AgentEvent>['context']>;

/** Exactly one typed detail, only its documented members; undefined when the stored detail is unreadable. */
export function contextView(kind: string | null, detail: string | null): ContextView | undefined {
  if (kind === null || detail === null || !(CONTEXT_KINDS as readonly string[]).includes(kind)) return undefined;
  let d: unknown;
  try {
    d = JSON.parse(detail);
  } catch {
    return undefined;
  }
  if (!d || typeof d !== 'object' || Array.isArray(d)) return undefined;
  // Tolerate a detail stored wrapped under its kind ({"assembly": {...}}).
  const inner = (d as Json)[kind];
  const body = (inner && typeof inner === 'object' && !Array.isArray(inner) ? inner : d) as Json;
  if (kind === 'assembly') return { kind, assembly: assembly(body) };
  if (kind === 'compaction') return { kind, compaction: compaction(body) };
  return { kind: 'cache', cache: cache(body) as ContextView['cache'] };
}

export function eventView(e: EventRow): Static<typeof AgentEvent> {
  const context = e.category === 'context' ? contextView(e.contextKind, e.contextDetail) : undefined;
  return {
    event_id: `${e.spanId}:${e.index}`,
    run_id: e.traceId,
    span_id: e.spanId,
    ...present({ session_key: e.sessionKey, turn_id: e.turnId, observation_key: e.observationKey }),
    canonical_operation: e.canonicalOperation,
    category: e.category as EventCategory,
    name: e.name,
    occurred_at: isoMicros(e.tsUs),
    ...(context ? { context } : {}),
  };
}

export function groupTimes(startUs: number, endUs: number) {
  return { started_at: isoMicros(startUs), ended_at: isoMicros(endUs), duration_ms: Math.max(0, durationMs(startUs, endUs)) };
}

export function identityView(observationKey: string, rows: SightingRow[]): Static<typeof Identity> {
  const credentials = rows.map((r) => ({
    source: r.source as 'api_key' | 'bearer_token' | 'dev_org_header',
    ...(r.source === 'api_key' ? { api_key_id: r.apiKeyId } : {}),
    first_seen: isoMicros(r.firstSeenUs),
    last_seen: isoMicros(r.lastSeenUs),
    sighting_count: r.sightingCount,
  }));
  const seen = rows.length
    ? {
        first_seen: isoMicros(Math.min(...rows.map((r) => r.firstSeenUs))),
        last_seen: isoMicros(Math.max(...rows.map((r) => r.lastSeenUs))),
      }
    : {};
  return {
    observation_key: observationKey,
    availability: 'answered' as const,
    credentials,
    ...seen,
    sighting_count: rows.reduce((n, r) => n + r.sightingCount, 0),
  };
}
