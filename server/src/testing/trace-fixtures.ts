/**
 * Test-only, both engines: spans (and their events) written straight into the telemetry store with the
 * columns ingestion derives left at their plain-span defaults, and their summaries brought up to date, so the
 * trace reads can be tested without the OTLP path. DuckDB: storage/telemetry/duckdb/trace-log-fixtures.ts;
 * ClickHouse: the same rows through the ClickHouse writer's row shapes.
 */
import type { SpanRow } from '../domains/traces/rows.js';
import type { TelemetryEngine } from '../storage/telemetry/engine.js';
import { eventRecord, spanRecord } from '../storage/telemetry/clickhouse/spans-writer.js';
import { refreshChSummaries } from '../storage/telemetry/clickhouse/summaries.js';
import * as duck from '../storage/telemetry/duckdb/trace-log-fixtures.js';
import { chOf, duckOf } from './clickhouse.js';

export { newSpanId, newTraceId, us, type SpanSpec } from '../storage/telemetry/duckdb/trace-log-fixtures.js';

function spanRow(s: duck.SpanSpec, spanId: string): SpanRow {
  const start = duck.us(s.start);
  const end = s.end !== undefined ? duck.us(s.end) : start + Math.round((s.durationMs ?? 1) * 1000);
  const service = s.service === undefined ? 'api' : s.service;
  return {
    traceId: s.traceId,
    spanId,
    parentSpanId: s.parentSpanId ?? null,
    name: s.name ?? 'op',
    kind: s.kind ?? 'internal',
    startUs: start,
    endUs: end,
    statusCode: s.status ?? 'unset',
    statusMessage: s.statusMessage ?? null,
    serviceName: service,
    environment: s.environment ?? null,
    scopeName: s.scope ?? null,
    attributes: JSON.stringify(s.attributes ?? {}),
    resourceAttributes: JSON.stringify({ ...(service !== null ? { 'service.name': service } : {}), ...(s.resource ?? {}) }),
    operationName: null,
    canonicalOperation: 'CANONICAL_OPERATION_UNKNOWN',
    responseStatus: null,
    outcome: null,
    agentName: null,
    agentId: null,
    observationKey: null,
    sessionKey: null,
    turnId: null,
    runStatus: null,
    terminalReason: null,
    toolName: null,
    model: null,
    provider: null,
    inputTokens: null,
    outputTokens: null,
    reportedCostNanos: null,
    safetyCheck: false,
    memoryItemId: null,
    memoryStore: null,
    memoryProvenance: null,
    memoryTrustLabel: null,
    contextEvents: 0,
  };
}

/** Inserts spans (and their events); returns the span ids. */
export async function insertSpans(engine: TelemetryEngine, specs: duck.SpanSpec[]): Promise<string[]> {
  const d = duckOf(engine);
  if (d) return duck.insertSpans(d, specs);
  const ch = chOf(engine)!;
  const ids: string[] = [];
  const spans: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  const touched = new Map<string, Set<string>>();
  for (const s of specs) {
    const spanId = s.spanId ?? duck.newSpanId();
    ids.push(spanId);
    const row = spanRow(s, spanId);
    const ingested = s.ingestedAt !== undefined ? duck.us(s.ingestedAt) : row.startUs;
    spans.push(spanRecord(s.projectId, row, ingested));
    for (const [i, e] of (s.events ?? []).entries())
      events.push(
        eventRecord(
          s.projectId,
          { traceId: s.traceId, spanId, index: i, tsUs: duck.us(e.at), name: e.name, attributes: JSON.stringify(e.attributes ?? {}), category: null, contextKind: null, contextDetail: null, contextSourceIds: null },
        ),
      );
    let t = touched.get(s.projectId);
    if (!t) touched.set(s.projectId, (t = new Set()));
    t.add(s.traceId);
  }
  await ch.client.insert('spans', spans);
  await ch.client.insert('span_events', events);
  await refreshChSummaries(ch, touched);
  return ids;
}

/** A trace of `n` spans (a chain when `chain`, else all children of the first). */
export async function insertBigTrace(engine: TelemetryEngine, projectId: string, traceId: string, n: number, startIso: string, chain = false): Promise<void> {
  const d = duckOf(engine);
  if (d) return duck.insertBigTrace(d, projectId, traceId, n, startIso, chain);
  const ch = chOf(engine)!;
  const start = duck.us(startIso);
  await ch.client.command(
    `INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_us, end_us, status_code, service_name,
       attributes, resource_attributes, canonical_operation, safety_check, context_events, ingested_at_us)
     SELECT {project:String}, {trace:String}, lower(leftPad(hex(number + 1), 16, '0')),
       if(number = 0, NULL, lower(leftPad(hex(${chain ? 'number' : '1'}), 16, '0'))),
       concat('op', toString(number)), 'internal', {start:Int64} + number, {start:Int64} + number + 10, 'unset', 'big', '{}', '{"service.name":"big"}',
       'CANONICAL_OPERATION_UNKNOWN', false, 0, {start:Int64}
     FROM numbers({n:UInt64})`,
    { project: projectId, trace: traceId, start, n: Math.floor(n) },
  );
  await refreshChSummaries(ch, new Map([[projectId, new Set([traceId])]]));
}
