/**
 * Test-only: writes spans, span events and log records straight into the DuckDB tables (schema.ts), so the
 * trace and log reads can be tested without the OTLP ingestion path. Times are ISO strings or microseconds.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { BIGINT, INTEGER, VARCHAR } from '@duckdb/node-api';
import { refreshSummaries } from './summaries-writer.js';
import type { TelemetryDb } from './open.js';

export type At = string | number;

/** Microseconds since the epoch of an ISO time (sub-millisecond digits kept) or of a number (taken as µs). */
export function us(at: At): number {
  if (typeof at === 'number') return at;
  const m = /\.(\d{4,6})Z$/i.exec(at);
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) throw new Error(`bad time ${at}`);
  return ms * 1000 + (m ? Number(m[1].padEnd(6, '0').slice(3, 6)) : 0);
}

export const hexId = (bytes: number) => randomBytes(bytes).toString('hex');
export const newTraceId = () => hexId(16);
export const newSpanId = () => hexId(8);

export interface SpanSpec {
  projectId: string;
  traceId: string;
  spanId?: string;
  parentSpanId?: string | null;
  name?: string;
  kind?: string;
  start: At;
  /** End time, or `durationMs` after the start. */
  end?: At;
  durationMs?: number;
  status?: 'unset' | 'ok' | 'error';
  statusMessage?: string | null;
  service?: string | null;
  environment?: string | null;
  scope?: string | null;
  attributes?: Record<string, unknown>;
  resource?: Record<string, unknown>;
  ingestedAt?: At;
  events?: { name: string; at: At; attributes?: Record<string, unknown> }[];
}

/** Inserts spans (and their events); returns the span ids. */
export async function insertSpans(db: TelemetryDb, specs: SpanSpec[]): Promise<string[]> {
  const ids: string[] = [];
  for (const s of specs) {
    const spanId = s.spanId ?? newSpanId();
    ids.push(spanId);
    const start = us(s.start);
    const end = s.end !== undefined ? us(s.end) : start + Math.round((s.durationMs ?? 1) * 1000);
    const service = s.service === undefined ? 'api' : s.service;
    await db.writer.run(
      `INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_us, end_us, status_code, status_message,
         service_name, environment, scope_name, attributes, resource_attributes, canonical_operation, safety_check, context_events, ingested_at_us)
       VALUES ($project, $trace, $span, $parent, $name, $kind, $start, $end, $status, $message, $service, $env, $scope, $attrs, $res,
         'CANONICAL_OPERATION_UNKNOWN', false, 0, $ingested)`,
      {
        project: s.projectId,
        trace: s.traceId,
        span: spanId,
        parent: s.parentSpanId ?? null,
        name: s.name ?? 'op',
        kind: s.kind ?? 'internal',
        start: BigInt(start),
        end: BigInt(end),
        status: s.status ?? 'unset',
        message: s.statusMessage ?? null,
        service,
        env: s.environment ?? null,
        scope: s.scope ?? null,
        attrs: JSON.stringify(s.attributes ?? {}),
        res: JSON.stringify({ ...(service !== null ? { 'service.name': service } : {}), ...(s.resource ?? {}) }),
        ingested: BigInt(s.ingestedAt !== undefined ? us(s.ingestedAt) : start),
      },
      { parent: VARCHAR, message: VARCHAR, service: VARCHAR, env: VARCHAR, scope: VARCHAR, start: BIGINT, end: BIGINT, ingested: BIGINT },
    );
    for (const [i, e] of (s.events ?? []).entries()) {
      await db.writer.run(
        `INSERT INTO span_events (project_id, trace_id, span_id, event_index, ts_us, name, attributes)
         VALUES ($project, $trace, $span, $i, $ts, $name, $attrs)`,
        { project: s.projectId, trace: s.traceId, span: spanId, i, ts: BigInt(us(e.at)), name: e.name, attrs: JSON.stringify(e.attributes ?? {}) },
        { i: INTEGER, ts: BIGINT },
      );
    }
  }
  for (const projectId of new Set(specs.map((s) => s.projectId)))
    await refreshSummaries(db, projectId, specs.filter((s) => s.projectId === projectId).map((s) => s.traceId));
  return ids;
}

/** A trace of `n` spans in one statement (a chain when `chain`, else all children of the first). */
export async function insertBigTrace(db: TelemetryDb, projectId: string, traceId: string, n: number, startIso: string, chain = false): Promise<void> {
  const start = us(startIso);
  await db.writer.run(
    `INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_us, end_us, status_code, service_name,
       attributes, resource_attributes, canonical_operation, safety_check, context_events, ingested_at_us)
     SELECT $project, $trace, printf('%016x', i + 1), CASE WHEN i = 0 THEN NULL ELSE printf('%016x', ${chain ? 'i' : '1'}) END,
       'op' || i, 'internal', $start + i, $start + i + 10, 'unset', 'big', '{}', '{"service.name":"big"}',
       'CANONICAL_OPERATION_UNKNOWN', false, 0, $start
     FROM range(${Math.floor(n)}) t(i)`,
    { project: projectId, trace: traceId, start: BigInt(start) },
    { start: BIGINT },
  );
  await refreshSummaries(db, projectId, [traceId]);
}

export interface LogSpec {
  projectId: string;
  logId?: string;
  at: At;
  observedAt?: At | null;
  severityNumber?: number | null;
  severityText?: string | null;
  body?: string | null;
  /** The content class of a GenAI event body (null: an ordinary body). */
  bodyClass?: string | null;
  traceId?: string | null;
  spanId?: string | null;
  service?: string | null;
  environment?: string | null;
  scope?: string | null;
  attributes?: Record<string, unknown>;
  resource?: Record<string, unknown>;
  /** Default: the log time. */
  ingestedAt?: At;
}

/** Inserts log records; returns their ids. */
export async function insertLogs(db: TelemetryDb, specs: LogSpec[]): Promise<string[]> {
  const ids: string[] = [];
  for (const l of specs) {
    const logId = l.logId ?? randomUUID();
    ids.push(logId);
    const service = l.service === undefined ? 'api' : l.service;
    await db.writer.run(
      `INSERT INTO logs (project_id, log_id, ts_us, observed_us, severity_number, severity_text, body, trace_id, span_id, service_name,
         environment, scope_name, attributes, resource_attributes, ingested_at_us, body_class)
       VALUES ($project, $id, $ts, $observed, $sevn, $sevt, $body, $trace, $span, $service, $env, $scope, $attrs, $res, $ingested, $bodyclass)`,
      {
        project: l.projectId,
        id: logId,
        ts: BigInt(us(l.at)),
        observed: l.observedAt === undefined || l.observedAt === null ? null : BigInt(us(l.observedAt)),
        sevn: l.severityNumber ?? null,
        sevt: l.severityText ?? null,
        body: l.body === undefined ? 'hello' : l.body,
        trace: l.traceId ?? null,
        span: l.spanId ?? null,
        service,
        env: l.environment ?? null,
        scope: l.scope ?? null,
        attrs: JSON.stringify(l.attributes ?? {}),
        res: JSON.stringify({ ...(service !== null ? { 'service.name': service } : {}), ...(l.resource ?? {}) }),
        ingested: BigInt(l.ingestedAt !== undefined ? us(l.ingestedAt) : us(l.at)),
        bodyclass: l.bodyClass ?? null,
      },
      {
        ts: BIGINT,
        observed: BIGINT,
        sevn: INTEGER,
        sevt: VARCHAR,
        body: VARCHAR,
        trace: VARCHAR,
        span: VARCHAR,
        service: VARCHAR,
        env: VARCHAR,
        scope: VARCHAR,
        ingested: BIGINT,
        bodyclass: VARCHAR,
      },
    );
  }
  return ids;
}

/** Severity numbers of the OTel ranges' first step (TRACE=1, DEBUG=5, INFO=9, WARN=13, ERROR=17, FATAL=21). */
export const SEV = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 } as const;
