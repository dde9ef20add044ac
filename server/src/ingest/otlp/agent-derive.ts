/**
 * The agent model derived from ONE span (docs/agent-model.md): pure functions, no I/O. Ingestion stores
 * what they return as columns of `spans` and `span_events`; runs, sessions and turns are aggregated from
 * those columns at read time.
 *
 * Attribute values (decisions the model document leaves open):
 * - Text members (names, ids, statuses) take a string, int, double or bool value as text; arrays, maps and
 *   bytes count as absent, and so does the empty string (an empty `gen_ai.agent.id` is no identity).
 * - Counts (`gen_ai.usage.*`, `svc.cost.nanos`) take an int, or a double holding an integer, that is >= 0 and
 *   exact in a double (< 2^53); anything else is absent. Strings of digits are not counts.
 * - `svc.safety.check` is a bool; only `true` marks the step.
 * - A repeated attribute key keeps its last value (as in the stored JSON object).
 */
import {
  ATTR,
  CONTEXT_KINDS,
  EVENT_CATEGORIES,
  MAX_CONTEXT_SOURCES,
  MEMORY_OPERATIONS,
  MEMORY_TRUST_LABELS,
  RUN_STATUSES,
  TERMINAL_REASON,
  canonicalOperation,
  outcomeOf,
  type ContextKind,
  type EventCategory,
  type Outcome,
} from '../../domains/agent-runs/model.js';
import type { AgentSpanColumns } from '../../domains/agent-runs/store.js';
import type { AnyValue, KeyValue } from './decode.js';
import { CONVENTION_KEYS, normalizeConventions } from './conventions.js';
import { int64ToNumber } from './values.js';

/** The agent-model columns of one span (all but its context-event count, known once its events are read). */
export interface SpanDerivation extends Omit<AgentSpanColumns, 'outcome' | 'contextEvents'> {
  outcome: Outcome | null;
}

const RUN_STATUS_SET = new Set<string>(RUN_STATUSES);
const TRUST_LABELS = new Set<string>(MEMORY_TRUST_LABELS);
const MEMORY_OPS = new Set<string>(MEMORY_OPERATIONS);
const CATEGORIES = new Set<string>(EVENT_CATEGORIES);
const KINDS = new Set<string>(CONTEXT_KINDS);

// ---- attribute values

/** A scalar value as text; null for arrays, maps, bytes, no value and the empty string. */
export function textOf(v: AnyValue | null | undefined): string | null {
  if (!v) return null;
  let s: string | null = null;
  if (v.stringValue !== null && v.stringValue !== undefined) s = v.stringValue;
  else if (v.intValue !== null && v.intValue !== undefined) s = intText(v);
  else if (v.doubleValue !== null && v.doubleValue !== undefined) s = String(v.doubleValue);
  else if (v.boolValue !== null && v.boolValue !== undefined) s = v.boolValue ? 'true' : 'false';
  return s === '' ? null : s;
}

function intText(v: AnyValue): string {
  const n = int64ToNumber(v.intValue);
  if (Number.isSafeInteger(n)) return String(n);
  const l = v.intValue as { low: number; high: number; unsigned?: boolean } | string | number;
  if (typeof l !== 'object') return String(l);
  const high = l.unsigned ? l.high >>> 0 : l.high | 0;
  return ((BigInt(high) << 32n) | BigInt(l.low >>> 0)).toString();
}

/** A non-negative integer (int, or a double holding one) exact in a double; null otherwise. */
export function countOf(v: AnyValue | null | undefined): number | null {
  if (!v) return null;
  let n: number;
  if (v.intValue !== null && v.intValue !== undefined) n = int64ToNumber(v.intValue);
  else if (v.doubleValue !== null && v.doubleValue !== undefined) n = v.doubleValue;
  else return null;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** A non-negative finite number (int or double); null otherwise. */
function amountOf(v: AnyValue | null | undefined): number | null {
  if (!v) return null;
  let n: number;
  if (v.intValue !== null && v.intValue !== undefined) n = int64ToNumber(v.intValue);
  else if (v.doubleValue !== null && v.doubleValue !== undefined) n = v.doubleValue;
  else return null;
  return Number.isFinite(n) && n >= 0 ? n : null;
}

// ---- spans

/**
 * The agent-model columns of one span. `serviceName` is the resource's `service.name` (null when absent).
 * Run status and terminal reason are taken from any span that states them (the reads use the root's).
 * Memory columns are filled on memory steps only; elsewhere `gen_ai.data_source.id` stays an attribute.
 */
export function deriveSpan(attributes: readonly KeyValue[], serviceName: string | null): SpanDerivation {
  const a: Partial<Record<string, AnyValue | null | undefined>> = {};
  let foreign = false;
  for (const kv of attributes) {
    if (WANTED.has(kv.key)) a[kv.key] = kv.value;
    else if (CONVENTION_KEYS.has(kv.key)) {
      a[kv.key] = kv.value;
      foreign = true;
    }
  }
  // Other instrumentation conventions fill the GenAI keys the span did not send (conventions.ts).
  if (foreign) normalizeConventions(a);
  const operationName = textOf(a[ATTR.operationName]);
  const canonical = canonicalOperation(operationName);
  const responseStatus = textOf(a[ATTR.responseStatus]);
  const agentName = textOf(a[ATTR.agentName]);
  const agentId = textOf(a[ATTR.agentId]);
  const runStatus = textOf(a[ATTR.runStatus]);
  const terminalReason = textOf(a[ATTR.terminalReason]);
  const memory = MEMORY_OPS.has(canonical);
  const trustLabel = memory ? textOf(a[ATTR.memoryTrustLabel]) : null;
  return {
    operationName,
    canonicalOperation: canonical,
    responseStatus,
    outcome: outcomeOf(responseStatus), // never from the span status
    agentName,
    agentId,
    observationKey: observationKey(agentId, agentName, serviceName),
    sessionKey: textOf(a[ATTR.conversationId]),
    turnId: textOf(a[ATTR.turnId]),
    runStatus: runStatus !== null && RUN_STATUS_SET.has(runStatus) ? runStatus : null,
    terminalReason: terminalReason !== null && TERMINAL_REASON.test(terminalReason) ? terminalReason : null,
    toolName: textOf(a[ATTR.toolName]),
    model: textOf(a[ATTR.responseModel]) ?? textOf(a[ATTR.requestModel]),
    provider: textOf(a[ATTR.providerName]) ?? textOf(a[ATTR.system]),
    inputTokens: countOf(a[ATTR.inputTokens]),
    outputTokens: countOf(a[ATTR.outputTokens]),
    reportedCostNanos: countOf(a[ATTR.costNanos]),
    safetyCheck: a[ATTR.safetyCheck]?.boolValue === true,
    memoryItemId: memory ? textOf(a[ATTR.memoryItemId]) : null,
    memoryStore: memory ? textOf(a[ATTR.dataSourceId]) : null,
    memoryProvenance: memory ? textOf(a[ATTR.memoryProvenance]) : null,
    memoryTrustLabel: trustLabel !== null && TRUST_LABELS.has(trustLabel) ? trustLabel : null,
  };
}

const WANTED = new Set<string>(Object.values(ATTR));

/** `gen_ai.agent.id`, else `<service.name>/<gen_ai.agent.name>` (`unknown_service` without a name, or an empty one), else none. */
export function observationKey(agentId: string | null, agentName: string | null, serviceName: string | null): string | null {
  if (agentId !== null) return agentId;
  if (agentName !== null) return `${serviceName || 'unknown_service'}/${agentName}`;
  return null;
}

// ---- span events

export interface ContextDetail {
  kind: ContextKind;
  /** The typed detail as returned (the members of `context.<kind>`), members in the documented order. */
  detail: Record<string, unknown>;
  /** Assembly source ids (the kept ones) or compaction removed source ids; empty for cache. */
  sourceIds: string[];
}

export interface EventDerivation {
  /** One of the 13 categories; null for a plain span event (also a context event that was not accepted). */
  category: EventCategory | null;
  /** The detail of an accepted context event. */
  context: ContextDetail | null;
  /** Why a context event was not accepted (it is then stored as a plain span event). */
  notAccepted: string | null;
}

const PLAIN: EventDerivation = { category: null, context: null, notAccepted: null };

/** The category and, for a context event, its one typed detail. */
export function deriveEvent(name: string, attributes: readonly KeyValue[]): EventDerivation {
  let stated: AnyValue | null | undefined;
  let statedKind: AnyValue | null | undefined;
  let hasContextAttr = false;
  for (const kv of attributes) {
    if (kv.key === ATTR.eventCategory) stated = kv.value;
    else if (kv.key === ATTR.contextKind) statedKind = kv.value;
    else if (kv.key.startsWith('svc.context.')) hasContextAttr = true;
  }
  const dot = name.indexOf('.');
  const category = stated !== undefined ? textOf(stated) : dot < 0 ? name : name.slice(0, dot);
  if (category === null || !CATEGORIES.has(category)) return PLAIN;
  if (category !== 'context') return { category: category as EventCategory, context: null, notAccepted: null };

  const nameKind = dot < 0 ? null : name.slice(dot + 1).split('.', 1)[0];
  const kind = statedKind !== undefined ? textOf(statedKind) : nameKind;
  if (kind === null || !KINDS.has(kind)) return notAccepted(`unknown context kind ${JSON.stringify(kind ?? '')}`);
  const a = new Map<string, AnyValue | null | undefined>();
  const kindsSeen = new Set<string>([kind]);
  if (hasContextAttr) {
    for (const kv of attributes) {
      if (!kv.key.startsWith('svc.context.') || kv.key === ATTR.contextKind) continue;
      const rest = kv.key.slice('svc.context.'.length);
      const k = rest.split('.', 1)[0];
      if (!KINDS.has(k) || rest.length === k.length) continue; // attributes of no known kind are ignored
      kindsSeen.add(k);
      a.set(rest.slice(k.length + 1), kv.value);
    }
  }
  if (kindsSeen.size > 1) return notAccepted(`a context event of kind ${kind} carries attributes of ${[...kindsSeen].filter((k) => k !== kind).join(' and ')} too`);
  try {
    const built = kind === 'assembly' ? assembly(a) : kind === 'compaction' ? compaction(a) : cache(a);
    return { category: 'context', context: { kind: kind as ContextKind, ...built }, notAccepted: null };
  } catch (e) {
    if (e instanceof BadMember) return notAccepted(`svc.context.${kind}.${e.member} ${e.reason}`);
    throw e;
  }
}

const notAccepted = (reason: string): EventDerivation => ({ category: null, context: null, notAccepted: reason });

class BadMember {
  constructor(
    readonly member: string,
    readonly reason: string,
  ) {}
}

type Members = Map<string, AnyValue | null | undefined>;
type Built = { detail: Record<string, unknown>; sourceIds: string[] };

/** Sets `detail[key]` from the member when it was sent; a member of the wrong type refuses the event. */
function put(detail: Record<string, unknown>, a: Members, key: string, type: 'count' | 'amount' | 'text' | 'bool'): void {
  if (!a.has(key)) return;
  const v = a.get(key);
  let out: unknown = null;
  if (type === 'count') out = countOf(v);
  else if (type === 'amount') out = amountOf(v);
  else if (type === 'bool') out = v?.boolValue ?? null;
  else out = v?.stringValue ?? null;
  if (out === null)
    throw new BadMember(key, type === 'count' ? 'is not a non-negative integer' : type === 'amount' ? 'is not a non-negative number' : type === 'bool' ? 'is not a bool' : 'is not a string');
  detail[key] = out;
}

/** An array member's elements with `pick`; null when the member was not sent. */
function list<T>(a: Members, key: string, pick: (v: AnyValue) => T | null, what: string): T[] | null {
  if (!a.has(key)) return null;
  const arr = a.get(key)?.arrayValue;
  if (!arr) throw new BadMember(key, `is not an array of ${what}`);
  return (arr.values ?? []).map((v) => {
    const x = v ? pick(v) : null;
    if (x === null) throw new BadMember(key, `is not an array of ${what}`);
    return x;
  });
}

const str = (v: AnyValue) => (v.stringValue !== null && v.stringValue !== undefined ? v.stringValue : null);

function assembly(a: Members): Built {
  const detail: Record<string, unknown> = {};
  put(detail, a, 'budget_tokens', 'count');
  put(detail, a, 'assembled_tokens', 'count');
  put(detail, a, 'overflow', 'bool');
  put(detail, a, 'digest', 'text');
  const ids = list(a, 'source_ids', str, 'strings') ?? [];
  const kinds = list(a, 'source_kinds', str, 'strings');
  const tokens = list(a, 'source_tokens', countOf, 'non-negative integers');
  if (kinds && kinds.length !== ids.length) throw new BadMember('source_kinds', `has ${kinds.length} entries for ${ids.length} source_ids`);
  if (tokens && tokens.length !== ids.length) throw new BadMember('source_tokens', `has ${tokens.length} entries for ${ids.length} source_ids`);
  const kept = Math.min(ids.length, MAX_CONTEXT_SOURCES);
  const sources: Record<string, unknown>[] = [];
  for (let i = 0; i < kept; i++) {
    const s: Record<string, unknown> = { id: ids[i] };
    if (kinds && kinds[i] !== '') s.kind = kinds[i]; // an empty kind in the parallel array is "not stated"
    if (tokens) s.tokens = tokens[i];
    sources.push(s);
  }
  detail.sources = sources;
  if (ids.length > kept) detail.sources_truncated = true;
  return { detail, sourceIds: ids.slice(0, kept) };
}

function compaction(a: Members): Built {
  const detail: Record<string, unknown> = {};
  put(detail, a, 'trigger', 'text');
  put(detail, a, 'strategy', 'text');
  put(detail, a, 'before_count', 'count');
  put(detail, a, 'after_count', 'count');
  put(detail, a, 'before_digest', 'text');
  put(detail, a, 'after_digest', 'text');
  const removed = list(a, 'removed_source_ids', str, 'strings');
  if (removed) detail.removed_source_ids = removed;
  const before = detail.before_count as number | undefined;
  const after = detail.after_count as number | undefined;
  if (before !== undefined && after !== undefined && before > 0) detail.ratio = after / before; // server-derived
  return { detail, sourceIds: removed ?? [] };
}

const CACHE_OUTCOMES = new Set(['hit', 'miss', 'write']);

function cache(a: Members): Built {
  const detail: Record<string, unknown> = {};
  put(detail, a, 'provider', 'text');
  put(detail, a, 'key_digest', 'text');
  put(detail, a, 'outcome', 'text');
  if (detail.outcome !== undefined && !CACHE_OUTCOMES.has(detail.outcome as string)) throw new BadMember('outcome', 'is not hit, miss or write');
  put(detail, a, 'reused_tokens', 'count');
  put(detail, a, 'latency_saved_ms', 'amount');
  put(detail, a, 'cost_saved_nanos', 'count');
  return { detail, sourceIds: [] };
}
