/**
 * TEST ONLY: the agent fixtures (storage/telemetry/duckdb/agent-fixtures.ts) on whichever engine the test app
 * runs: `spans`, `span_events` and `agent_sightings` rows written directly, with the columns ingestion would
 * derive filled from a few semantic fields, then the touched traces' summaries refreshed. On DuckDB this is
 * the DuckDB fixtures themselves; on ClickHouse (SVC_TEST_TELEMETRY=clickhouse, testing/clickhouse.ts) the same
 * rows go to the ClickHouse tables and `refreshChSummaries` summarizes them, as the spans writer does.
 *
 * Every function takes the test app (or its telemetry engine) where the DuckDB fixture takes the DuckDB store.
 */
import { ATTR, canonicalOperation, MEMORY_TRUST_LABELS, outcomeOf, TERMINAL_REASON } from '../domains/agent-runs/model.js';
import * as duck from '../storage/telemetry/duckdb/agent-fixtures.js';
import type { SpanFixture, EventFixture, SightingFixture } from '../storage/telemetry/duckdb/agent-fixtures.js';
import type { TelemetryDb } from '../storage/telemetry/duckdb/open.js';
import type { ChTelemetryDb } from '../storage/telemetry/clickhouse/db.js';
import { refreshChSummaries } from '../storage/telemetry/clickhouse/summaries.js';
import type { TelemetryEngine } from '../storage/telemetry/engine.js';
import { chOf, duckOf } from './clickhouse.js';

export { us, traceId, spanId, type SpanFixture, type EventFixture, type SightingFixture } from '../storage/telemetry/duckdb/agent-fixtures.js';

/** Where fixtures go: a test app (its telemetry engine) or an engine. */
export type FixtureTarget = { ctx: { telemetry: TelemetryEngine } } | TelemetryEngine;

type Store = { kind: 'duckdb'; db: TelemetryDb } | { kind: 'clickhouse'; db: ChTelemetryDb };

function storeOf(target: FixtureTarget): Store {
  const engine = 'ctx' in target ? target.ctx.telemetry : target;
  const ch = chOf(engine);
  if (ch) return { kind: 'clickhouse', db: ch };
  const db = duckOf(engine);
  if (!db) throw new Error(`agent fixtures: no store of the ${engine.kind} engine`);
  return { kind: 'duckdb', db };
}

/** The ClickHouse `spans` row of a fixture: the columns duckdb/agent-fixtures.ts writes, the same values. */
function chSpan(projectId: string, s: SpanFixture): Record<string, unknown> {
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
  return {
    project_id: projectId,
    trace_id: s.traceId,
    span_id: s.spanId,
    parent_span_id: s.parentSpanId ?? null,
    name: s.name ?? (s.op ? `${s.op} span` : 'span'),
    kind: 'internal',
    start_us: s.startUs,
    end_us: s.endUs ?? s.startUs + 1000,
    status_code: s.spanStatus ?? 'unset',
    status_message: null,
    service_name: s.serviceName ?? null,
    environment: s.environment ?? null,
    scope_name: 'fixture',
    attributes: JSON.stringify(attrs),
    resource_attributes: JSON.stringify(resource),
    operation_name: s.op ?? null,
    canonical_operation: canonicalOperation(s.op),
    response_status: s.responseStatus ?? null,
    outcome: outcomeOf(s.responseStatus),
    agent_name: s.agentName ?? null,
    agent_id: s.agentId ?? null,
    observation_key: observationKey,
    session_key: s.sessionKey ?? null,
    turn_id: s.turnId ?? null,
    run_status: s.runStatus ?? null,
    terminal_reason: s.terminalReason && TERMINAL_REASON.test(s.terminalReason) ? s.terminalReason : null,
    tool_name: s.toolName ?? null,
    model: s.responseModel ?? s.requestModel ?? null,
    provider: s.provider ?? null,
    input_tokens: s.inputTokens ?? null,
    output_tokens: s.outputTokens ?? null,
    reported_cost_nanos: s.costNanos ?? null,
    safety_check: s.safetyCheck === true,
    memory_item_id: s.memory?.itemId ?? null,
    memory_store: s.memory?.store ?? null,
    memory_provenance: s.memory?.provenance ?? null,
    memory_trust_label: trust,
    context_events: s.contextEvents ?? 0,
    ingested_at_us: s.startUs,
  };
}

async function refreshCh(db: ChTelemetryDb, projectId: string, traceIds: Iterable<string>): Promise<void> {
  await refreshChSummaries(db, new Map([[projectId, new Set(traceIds)]]));
}

export async function insertSpans(target: FixtureTarget, projectId: string, spans: SpanFixture[]): Promise<void> {
  const store = storeOf(target);
  if (store.kind === 'duckdb') return duck.insertSpans(store.db, projectId, spans);
  await store.db.client.insert('spans', spans.map((s) => chSpan(projectId, s)));
  await refreshCh(store.db, projectId, spans.map((s) => s.traceId));
}

export async function insertEvents(target: FixtureTarget, projectId: string, events: EventFixture[]): Promise<void> {
  const store = storeOf(target);
  if (store.kind === 'duckdb') return duck.insertEvents(store.db, projectId, events);
  await store.db.client.insert(
    'span_events',
    events.map((e) => ({
      project_id: projectId,
      trace_id: e.traceId,
      span_id: e.spanId,
      event_index: e.index,
      ts_us: e.tsUs,
      name: e.name,
      attributes: JSON.stringify(e.attributes ?? { secret: 'raw attribute, never returned' }),
      category: e.category === undefined ? e.name.split('.')[0] : e.category,
      context_kind: e.contextKind ?? null,
      context_detail: e.contextDetail ? JSON.stringify(e.contextDetail) : null,
      context_source_ids: e.contextSourceIds ?? [],
    })),
  );
}

export async function insertSightings(target: FixtureTarget, projectId: string, sightings: SightingFixture[]): Promise<void> {
  const store = storeOf(target);
  if (store.kind === 'duckdb') return duck.insertSightings(store.db, projectId, sightings);
  await store.db.client.insert(
    'agent_sightings',
    sightings.map((s) => ({
      project_id: projectId,
      observation_key: s.observationKey,
      source: s.source,
      api_key_id: s.apiKeyId ?? '',
      first_seen_us: s.firstSeenUs,
      last_seen_us: s.lastSeenUs,
      sighting_count: s.sightingCount,
    })),
  );
}

/** `n` plain child steps of `parentSpanId` in one statement (for the step-tree ceiling). */
export async function insertManySteps(target: FixtureTarget, projectId: string, trace: string, parentSpanId: string, n: number, startUs: number): Promise<void> {
  const store = storeOf(target);
  if (store.kind === 'duckdb') return duck.insertManySteps(store.db, projectId, trace, parentSpanId, n, startUs);
  await store.db.client.command(
    `INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_us, end_us, status_code, attributes,
       resource_attributes, canonical_operation, safety_check, context_events, ingested_at_us)
     SELECT {project:String}, {trace:String}, leftPad(lower(hex(1000000 + number)), 16, '0'), {parent:String}, 'step', 'internal',
       {start:Int64} + number, {start:Int64} + number + 1, 'unset', '{}', '{}', 'CANONICAL_OPERATION_UNKNOWN', false, 0, {start:Int64}
     FROM numbers({n:UInt64})`,
    { project: projectId, trace, parent: parentSpanId, start: startUs, n },
  );
  await refreshCh(store.db, projectId, [trace]);
}
