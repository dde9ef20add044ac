/**
 * TEST ONLY: writes `spans`, `span_events` and `agent_sightings` rows directly, with the columns
 * ingestion would derive (docs/agent-model.md) filled from a few semantic fields, so the agent reads
 * can be tested without the OTLP trace ingest. Not imported by production code.
 */
import { BIGINT, BOOLEAN, INTEGER, LIST, listValue, VARCHAR, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { ATTR, canonicalOperation, MEMORY_TRUST_LABELS, outcomeOf, TERMINAL_REASON } from '../../../domains/agent-runs/model.js';
import { refreshSummaries } from './summaries-writer.js';
import type { TelemetryDb } from './open.js';

/** Microseconds since the epoch of an RFC 3339 time (whole milliseconds), plus `extraUs`. */
export function us(iso: string, extraUs = 0): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad time ${iso}`);
  return ms * 1000 + extraUs;
}

export interface SpanFixture {
  traceId: string;
  spanId: string;
  parentSpanId?: string | null;
  name?: string;
  /** `gen_ai.operation.name` */
  op?: string | null;
  startUs: number;
  /** Default: start + 1 ms. */
  endUs?: number;
  /** `gen_ai.response.status` */
  responseStatus?: string;
  agentName?: string;
  agentId?: string;
  serviceName?: string;
  environment?: string;
  sessionKey?: string;
  turnId?: string;
  runStatus?: string;
  terminalReason?: string;
  toolName?: string;
  requestModel?: string;
  responseModel?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  costNanos?: number;
  safetyCheck?: boolean;
  memory?: { itemId?: string; store?: string; provenance?: string; trustLabel?: string };
  /** Accepted context events of the span (makes it instrumented). */
  contextEvents?: number;
  /** Further span attributes (stored in the JSON map only). */
  attributes?: Record<string, unknown>;
  spanStatus?: 'unset' | 'ok' | 'error';
}

const SPAN_COLUMNS: [string, DuckDBType][] = [
  ['project_id', VARCHAR],
  ['trace_id', VARCHAR],
  ['span_id', VARCHAR],
  ['parent_span_id', VARCHAR],
  ['name', VARCHAR],
  ['kind', VARCHAR],
  ['start_us', BIGINT],
  ['end_us', BIGINT],
  ['status_code', VARCHAR],
  ['status_message', VARCHAR],
  ['service_name', VARCHAR],
  ['environment', VARCHAR],
  ['scope_name', VARCHAR],
  ['attributes', VARCHAR],
  ['resource_attributes', VARCHAR],
  ['operation_name', VARCHAR],
  ['canonical_operation', VARCHAR],
  ['response_status', VARCHAR],
  ['outcome', VARCHAR],
  ['agent_name', VARCHAR],
  ['agent_id', VARCHAR],
  ['observation_key', VARCHAR],
  ['session_key', VARCHAR],
  ['turn_id', VARCHAR],
  ['run_status', VARCHAR],
  ['terminal_reason', VARCHAR],
  ['tool_name', VARCHAR],
  ['model', VARCHAR],
  ['provider', VARCHAR],
  ['input_tokens', BIGINT],
  ['output_tokens', BIGINT],
  ['reported_cost_nanos', BIGINT],
  ['safety_check', BOOLEAN],
  ['memory_item_id', VARCHAR],
  ['memory_store', VARCHAR],
  ['memory_provenance', VARCHAR],
  ['memory_trust_label', VARCHAR],
  ['context_events', INTEGER],
  ['ingested_at_us', BIGINT],
];

const big = (v: number | undefined | null) => (v === undefined || v === null ? null : BigInt(v));

function spanValues(projectId: string, s: SpanFixture): DuckDBValue[] {
  const attrs: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => {
    if (v !== undefined && v !== null) attrs[k] = v;
  };
  set(ATTR.operationName, s.op);
  set(ATTR.responseStatus, s.responseStatus);
  set(ATTR.agentName, s.agentName);
  set(ATTR.agentId, s.agentId);
  set(ATTR.conversationId, s.sessionKey);
  set(ATTR.turnId, s.turnId);
  set(ATTR.runStatus, s.runStatus);
  set(ATTR.terminalReason, s.terminalReason);
  set(ATTR.toolName, s.toolName);
  set(ATTR.requestModel, s.requestModel);
  set(ATTR.responseModel, s.responseModel);
  set(ATTR.providerName, s.provider);
  set(ATTR.inputTokens, s.inputTokens);
  set(ATTR.outputTokens, s.outputTokens);
  set(ATTR.costNanos, s.costNanos);
  if (s.safetyCheck) set(ATTR.safetyCheck, true);
  set(ATTR.memoryItemId, s.memory?.itemId);
  set(ATTR.dataSourceId, s.memory?.store);
  set(ATTR.memoryProvenance, s.memory?.provenance);
  set(ATTR.memoryTrustLabel, s.memory?.trustLabel);
  Object.assign(attrs, s.attributes ?? {});
  const resource: Record<string, unknown> = {};
  if (s.serviceName) resource['service.name'] = s.serviceName;
  if (s.environment) resource['deployment.environment.name'] = s.environment;
  const observationKey = s.agentId ?? (s.agentName ? `${s.serviceName ?? 'unknown_service'}/${s.agentName}` : null);
  const trust = s.memory?.trustLabel && (MEMORY_TRUST_LABELS as readonly string[]).includes(s.memory.trustLabel) ? s.memory.trustLabel : null;
  return [
    projectId,
    s.traceId,
    s.spanId,
    s.parentSpanId ?? null,
    s.name ?? (s.op ? `${s.op} span` : 'span'),
    'internal',
    BigInt(s.startUs),
    BigInt(s.endUs ?? s.startUs + 1000),
    s.spanStatus ?? 'unset',
    null,
    s.serviceName ?? null,
    s.environment ?? null,
    'fixture',
    JSON.stringify(attrs),
    JSON.stringify(resource),
    s.op ?? null,
    canonicalOperation(s.op),
    s.responseStatus ?? null,
    outcomeOf(s.responseStatus),
    s.agentName ?? null,
    s.agentId ?? null,
    observationKey,
    s.sessionKey ?? null,
    s.turnId ?? null,
    s.runStatus ?? null,
    s.terminalReason && TERMINAL_REASON.test(s.terminalReason) ? s.terminalReason : null,
    s.toolName ?? null,
    s.responseModel ?? s.requestModel ?? null,
    s.provider ?? null,
    big(s.inputTokens),
    big(s.outputTokens),
    big(s.costNanos),
    s.safetyCheck === true,
    s.memory?.itemId ?? null,
    s.memory?.store ?? null,
    s.memory?.provenance ?? null,
    trust,
    s.contextEvents ?? 0,
    BigInt(s.startUs),
  ];
}

async function insertRows(db: TelemetryDb, table: string, columns: [string, DuckDBType][], rows: DuckDBValue[][]): Promise<void> {
  if (rows.length === 0) return;
  const sql = `INSERT INTO ${table} (${columns.map((c) => c[0]).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
  const types = columns.map((c) => c[1]);
  await db.read(async (c) => {
    const stmt = await c.prepare(sql);
    for (const r of rows) {
      stmt.bind(r, types);
      await stmt.run();
    }
  });
}

export async function insertSpans(db: TelemetryDb, projectId: string, spans: SpanFixture[]): Promise<void> {
  await insertRows(db, 'spans', SPAN_COLUMNS, spans.map((s) => spanValues(projectId, s)));
  await refreshSummaries(db, projectId, spans.map((s) => s.traceId));
}

export interface EventFixture {
  traceId: string;
  spanId: string;
  index: number;
  tsUs: number;
  name: string;
  /** The derived category; null for a plain span event. Default: the name's first segment when it is an agent category. */
  category?: string | null;
  contextKind?: string;
  contextDetail?: Record<string, unknown>;
  contextSourceIds?: string[];
  attributes?: Record<string, unknown>;
}

const EVENT_COLUMNS: [string, DuckDBType][] = [
  ['project_id', VARCHAR],
  ['trace_id', VARCHAR],
  ['span_id', VARCHAR],
  ['event_index', INTEGER],
  ['ts_us', BIGINT],
  ['name', VARCHAR],
  ['attributes', VARCHAR],
  ['category', VARCHAR],
  ['context_kind', VARCHAR],
  ['context_detail', VARCHAR],
  ['context_source_ids', LIST(VARCHAR)],
];

export async function insertEvents(db: TelemetryDb, projectId: string, events: EventFixture[]): Promise<void> {
  const rows = events.map((e): DuckDBValue[] => [
    projectId,
    e.traceId,
    e.spanId,
    e.index,
    BigInt(e.tsUs),
    e.name,
    JSON.stringify(e.attributes ?? { secret: 'raw attribute, never returned' }),
    e.category === undefined ? e.name.split('.')[0] : e.category,
    e.contextKind ?? null,
    e.contextDetail ? JSON.stringify(e.contextDetail) : null,
    e.contextSourceIds ? listValue(e.contextSourceIds) : null,
  ]);
  await insertRows(db, 'span_events', EVENT_COLUMNS, rows);
}

export interface SightingFixture {
  observationKey: string;
  source: 'api_key' | 'bearer_token' | 'dev_org_header';
  apiKeyId?: string;
  firstSeenUs: number;
  lastSeenUs: number;
  sightingCount: number;
}

const SIGHTING_COLUMNS: [string, DuckDBType][] = [
  ['project_id', VARCHAR],
  ['observation_key', VARCHAR],
  ['source', VARCHAR],
  ['api_key_id', VARCHAR],
  ['first_seen_us', BIGINT],
  ['last_seen_us', BIGINT],
  ['sighting_count', BIGINT],
];

export async function insertSightings(db: TelemetryDb, projectId: string, sightings: SightingFixture[]): Promise<void> {
  const rows = sightings.map((s): DuckDBValue[] => [
    projectId,
    s.observationKey,
    s.source,
    s.apiKeyId ?? '',
    BigInt(s.firstSeenUs),
    BigInt(s.lastSeenUs),
    BigInt(s.sightingCount),
  ]);
  await insertRows(db, 'agent_sightings', SIGHTING_COLUMNS, rows);
}

/** A 32-hex trace id / 16-hex span id from a small number (readable fixtures). */
export const traceId = (n: number) => n.toString(16).padStart(32, '0');
export const spanId = (n: number) => n.toString(16).padStart(16, '0');

/** `n` plain child steps of `parentSpanId` in one statement (for the step-tree ceiling). */
export async function insertManySteps(db: TelemetryDb, projectId: string, trace: string, parentSpanId: string, n: number, startUs: number): Promise<void> {
  await db.read(async (c) => {
    const stmt = await c.prepare(`
      INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_us, end_us, status_code, attributes,
        resource_attributes, canonical_operation, safety_check, context_events, ingested_at_us)
      SELECT $project, $trace, lpad(printf('%x', 1000000 + i), 16, '0'), $parent, 'step', 'internal', $start + i, $start + i + 1, 'unset', '{}',
        '{}', 'CANONICAL_OPERATION_UNKNOWN', false, 0, $start
      FROM range($n) t(i)`);
    stmt.bind({ project: projectId, trace, parent: parentSpanId, start: BigInt(startUs), n: BigInt(n) }, { project: VARCHAR, trace: VARCHAR, parent: VARCHAR, start: BIGINT, n: BIGINT });
    await stmt.run();
  });
  await refreshSummaries(db, projectId, [trace]);
}
