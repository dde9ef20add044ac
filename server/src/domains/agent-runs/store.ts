/**
 * Storage port of the agent reads: runs, steps, sessions, turns, agent events and agent sightings,
 * aggregated at read time from the `spans`, `span_events` and `agent_sightings` rows that ingestion
 * derived per span (docs/agent-model.md). Times are microseconds since the Unix epoch (UTC).
 *
 * The adapter computes what needs every span of a trace (the run's root, the session and turn
 * fallbacks, the derived status, the step counts); the service applies the remaining rules (cost,
 * terminal reason, views). Rows of another project are never read: every method takes the project.
 *
 * A span stored more than once (OTLP clients retry an export after a timeout, and each delivery is
 * stored) is read once: rows are told apart by (trace id, span id), the first ingested copy is the one
 * read, and span events by (trace id, span id, position). Runs, steps, counts, costs and events are the
 * same after a retried export as after a single one.
 */
import type { CallTotals } from './call-totals.js';
import type { SpanRow } from '../traces/store.js';

/** One run: its root span's columns and the counts over the trace's other spans. */
export interface RunRow {
  traceId: string;
  rootSpanId: string;
  agentName: string | null;
  agentId: string | null;
  observationKey: string | null;
  serviceName: string | null;
  environment: string | null;
  /** Root's, else the first span of the trace (by start, then span id) that has one. */
  sessionKey: string | null;
  turnId: string | null;
  /** Derived: the root's run status when it is one of RUN_STATUSES, else its completed/failed/cancelled response status. */
  status: string | null;
  terminalReason: string | null;
  startUs: number;
  endUs: number;
  /** Counts over the spans of the trace other than the root. */
  stepCount: number;
  errorSteps: number;
  toolCalls: number;
  modelCalls: number;
  /** Steps marked `svc.safety.check` that carry an outcome, and those of them with OUTCOME_ERROR. */
  safetyStepsWithOutcome: number;
  safetyErrorSteps: number;
  /**
   * The run's model calls grouped by equal usage, when the store read them with the run (a store keeping
   * summaries does); absent: ask `modelUsage`.
   */
  usage?: Omit<ModelUsageRow, 'traceId'>[];
}

/** Model steps of a run with the same usage, counted (the cost is per step, so equal steps cost the same). */
export interface ModelUsageRow extends Pick<AgentSpanColumns, 'provider' | 'model' | 'inputTokens' | 'outputTokens' | 'reportedCostNanos'> {
  traceId: string;
  steps: number;
}

export interface RunFilter {
  projectId: string;
  /** OR within. */
  statuses?: string[];
  sessionKeys?: string[];
  turnIds?: string[];
  observationKey?: string;
  traceIds?: string[];
  /** Closed window on the run's start. */
  sinceUs?: number;
  untilUs?: number;
}

/** Runs are ordered by (start desc, trace id desc); `after` is the last row of the previous page. */
export interface RunPosition {
  startUs: number;
  traceId: string;
}

/**
 * The agent-model columns of one stored span, as ingestion derives them from the span alone
 * (docs/agent-model.md; ingest/otlp/agent-derive.ts) and the reads aggregate them. The one definition of
 * this shape: the span row the writer stores and the rows these reads return are built from it.
 */
export interface AgentSpanColumns {
  /** `gen_ai.operation.name` as sent. */
  operationName: string | null;
  /** CANONICAL_OPERATION_*, _UNKNOWN when nothing maps. */
  canonicalOperation: string;
  responseStatus: string | null;
  /** OUTCOME_OK | OUTCOME_ERROR | OUTCOME_CANCELLED, null when unset. */
  outcome: string | null;
  agentName: string | null;
  agentId: string | null;
  observationKey: string | null;
  sessionKey: string | null;
  turnId: string | null;
  runStatus: string | null;
  terminalReason: string | null;
  toolName: string | null;
  model: string | null;
  provider: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  reportedCostNanos: number | null;
  safetyCheck: boolean;
  memoryItemId: string | null;
  memoryStore: string | null;
  memoryProvenance: string | null;
  memoryTrustLabel: string | null;
  /** Accepted context events of the span (the step is instrumented when > 0). */
  contextEvents: number;
}

/**
 * One step: the span's own columns and its agent-model columns. `attributes` is the span's attribute map
 * as stored (JSON text); the service returns only the allow-list.
 */
export type StepRow = Pick<SpanRow, 'spanId' | 'parentSpanId' | 'name' | 'startUs' | 'endUs' | 'attributes' | 'statusCode' | 'statusMessage'> &
  Pick<
    AgentSpanColumns,
    | 'canonicalOperation'
    | 'responseStatus'
    | 'outcome'
    | 'toolName'
    | 'model'
    | 'provider'
    | 'inputTokens'
    | 'outputTokens'
    | 'reportedCostNanos'
    | 'safetyCheck'
    | 'memoryItemId'
    | 'memoryStore'
    | 'memoryProvenance'
    | 'memoryTrustLabel'
    | 'contextEvents'
  >;

export interface SessionRow {
  sessionKey: string;
  runCount: number;
  /** Distinct turn ids of its runs; 0 when no run carries one. */
  turnCount: number;
  startUs: number;
  endUs: number;
  /** Its runs' model calls summed by model, when the store keeps them (priced when read: call-totals.ts). */
  callTotals?: CallTotals;
}

export interface SessionFilter {
  projectId: string;
  sessionKeys?: string[];
  /** Closed window on the session's start (its first run's start). */
  sinceUs?: number;
  untilUs?: number;
  /**
   * Retention (docs/retention.md): runs that started before this are part of no session; a session is made of
   * its other runs (counts, turns, start, end), and a session with none is not answered.
   */
  notBeforeUs?: number;
}

/** Sessions and turns are ordered by (start desc, key desc). */
export interface KeyPosition {
  startUs: number;
  key: string;
}

export interface TurnRow {
  turnId: string;
  runCount: number;
  startUs: number;
  endUs: number;
}

export interface EventFilter {
  projectId: string;
  traceId?: string;
  sessionKey?: string;
  observationKey?: string;
  /** Closed window on the event's time. */
  sinceUs?: number;
  untilUs?: number;
  /** OR within each, AND across. */
  categories?: string[];
  canonicalOperations?: string[];
  contextSourceId?: string;
}

/** Events are ordered newest first by (time, trace id, span id, index), all descending. */
export interface EventPosition {
  tsUs: number;
  traceId: string;
  spanId: string;
  index: number;
}

export interface EventRow {
  traceId: string;
  spanId: string;
  index: number;
  tsUs: number;
  name: string;
  category: string;
  contextKind: string | null;
  /** JSON of the typed detail (context events). */
  contextDetail: string | null;
  canonicalOperation: string;
  /** Of the event's run. */
  sessionKey: string | null;
  turnId: string | null;
  observationKey: string | null;
}

export interface SightingRow {
  observationKey: string;
  source: string;
  /** '' unless source = api_key. */
  apiKeyId: string;
  firstSeenUs: number;
  lastSeenUs: number;
  /**
   * Deliveries of run-root candidate spans (agent spans, top workflow spans) of the key by the credential: a span the client sent again (a
   * retried export) counts again. Telling a retry from a new sighting would need a lookup of every
   * received invoke_agent span among the stored ones in each ingest commit (the spans table has no
   * index), and spans dropped by sampling are counted without being stored at all; the runs, which
   * count each span once, are the count of distinct runs.
   */
  sightingCount: number;
}

/** Where an observation key was seen: one deployment environment its sightings named. */
export interface SightingEnvironmentRow {
  observationKey: string;
  environment: string;
  firstSeenUs: number;
  /** Refreshed at most once a minute by each writer (exact to that). */
  lastSeenUs: number;
}

/** A session's model steps and their fingerprint (`AgentRunsStore.sessionUsage`). */
export interface SessionUsage {
  fingerprint: string;
  calls: Omit<ModelUsageRow, 'traceId'>[];
}

export interface AgentRunsStore {
  /** Runs matching the filter, newest first, after the position; at most `limit` (all when absent). */
  runs(filter: RunFilter, opts: { after?: RunPosition; limit?: number }): Promise<RunRow[]>;
  /**
   * The positions of the runs after `after` (by start, then trace id, ascending) that started before
   * `beforeUs`, oldest first, at most `limit`: the evaluation sampling job's scan.
   */
  runStarts(projectId: string, opts: { after: RunPosition; beforeUs: number; limit: number }): Promise<RunPosition[]>;
  /** Model steps of these runs (grouped by equal usage). */
  modelUsage(projectId: string, traceIds: string[]): Promise<ModelUsageRow[]>;
  /**
   * The model steps of every run of these sessions (grouped by equal usage within each run), by session, with
   * the fingerprint of those steps read in the same statement; runs started before `notBeforeUs` left out. A
   * session whose runs made no model call is absent.
   */
  sessionUsage(projectId: string, sessionKeys: string[], notBeforeUs?: number): Promise<Map<string, SessionUsage>>;
  /**
   * Only the fingerprints of `sessionUsage` (its steps are not read): equal fingerprints, equal steps (the
   * number of runs with model calls and a 64-bit hash sum over each run's id and usage).
   */
  sessionUsageFingerprints(projectId: string, sessionKeys: string[], notBeforeUs?: number): Promise<Map<string, string>>;
  /** Every span of the trace, by start then span id. */
  steps(projectId: string, traceId: string): Promise<StepRow[]>;
  sessions(filter: SessionFilter, opts: { after?: KeyPosition; limit?: number }): Promise<SessionRow[]>;
  /** Turns of one session (runs grouped by turn id; runs without one belong to no turn; runs started before `notBeforeUs` left out). */
  turns(projectId: string, sessionKey: string, opts: { after?: KeyPosition; limit: number; notBeforeUs?: number }): Promise<TurnRow[]>;
  events(filter: EventFilter, opts: { after?: EventPosition; limit: number }): Promise<EventRow[]>;
  /** Distinct observation keys with a sighting, in code point order, after `after`. */
  identityKeys(projectId: string, opts: { after?: string; limit: number }): Promise<string[]>;
  /** The sightings of these keys. */
  sightings(projectId: string, observationKeys: string[]): Promise<SightingRow[]>;
  /**
   * The environments the sightings of these keys named: per key its `perKey` most recently seen (by
   * last_seen_us descending, then environment in code point order), in that order, keys in code point order.
   */
  sightingEnvironments(projectId: string, observationKeys: string[], perKey: number): Promise<SightingEnvironmentRow[]>;
  /** Runs started since `sinceUs`, per observation key of the run root: count, by status, last start. */
  runHealth(projectId: string, observationKeys: string[], sinceUs: number): Promise<RunHealthRow[]>;
}

export interface RunHealthRow {
  observationKey: string;
  runs: number;
  /** Runs by stated status; runs stating none are in `runs` only. */
  byStatus: Record<string, number>;
  lastStartUs: number;
}
