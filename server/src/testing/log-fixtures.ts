/**
 * Test-only, both engines: log records written through the engine's logs write port (what ingestion hands
 * over after decoding), so the log reads can be tested without the OTLP path; and the rows of a project as
 * stored, for checks of what is at rest. Specs as storage/telemetry/duckdb/trace-log-fixtures.ts (`LogSpec`):
 * times are ISO strings or microseconds; defaults: body 'hello', service 'api' (also the resource's
 * `service.name`), ingest time = the log time.
 */
import { randomUUID } from 'node:crypto';
import type { LogRow } from '../domains/logs/rows.js';
import type { TelemetryEngine } from '../storage/telemetry/engine.js';
import { us, type LogSpec } from '../storage/telemetry/duckdb/trace-log-fixtures.js';
import { chOf, duckOf } from './clickhouse.js';

export { newSpanId, newTraceId, SEV, us, type LogSpec } from '../storage/telemetry/duckdb/trace-log-fixtures.js';

function logRow(l: LogSpec, logId: string): LogRow {
  const service = l.service === undefined ? 'api' : l.service;
  return {
    logId,
    tsUs: us(l.at),
    observedUs: l.observedAt === undefined || l.observedAt === null ? null : us(l.observedAt),
    severityNumber: l.severityNumber ?? null,
    severityText: l.severityText ?? null,
    body: l.body === undefined ? 'hello' : l.body,
    bodyClass: l.bodyClass ?? null,
    traceId: l.traceId ?? null,
    spanId: l.spanId ?? null,
    serviceName: service,
    environment: l.environment ?? null,
    scopeName: l.scope ?? null,
    attributes: JSON.stringify(l.attributes ?? {}),
    resourceAttributes: JSON.stringify({ ...(service !== null ? { 'service.name': service } : {}), ...(l.resource ?? {}) }),
  };
}

/** Writes log records through `engine.logsWriter` (one write per project and ingest time); returns their ids in order. */
export async function insertLogs(engine: TelemetryEngine, specs: LogSpec[]): Promise<string[]> {
  const ids: string[] = [];
  const writes = new Map<string, { projectId: string; ingestedUs: number; rows: LogRow[] }>();
  for (const l of specs) {
    const logId = l.logId ?? randomUUID();
    ids.push(logId);
    const ingestedUs = l.ingestedAt !== undefined ? us(l.ingestedAt) : us(l.at);
    const key = JSON.stringify([l.projectId, ingestedUs]);
    let w = writes.get(key);
    if (!w) writes.set(key, (w = { projectId: l.projectId, ingestedUs, rows: [] }));
    w.rows.push(logRow(l, logId));
  }
  await Promise.all([...writes.values()].map((w) => engine.logsWriter.write(w.projectId, w.rows, w.ingestedUs)));
  return ids;
}

/** A stored `logs` row, as far as checks of what is at rest need it. */
export interface LogAtRest {
  logId: string;
  body: string | null;
  bodyClass: string | null;
  severityNumber: number | null;
  attributes: string;
}

/** Every stored log row of the project (no order), read from the engine's store itself. */
export async function logsAtRest(engine: TelemetryEngine, projectId: string): Promise<LogAtRest[]> {
  const d = duckOf(engine);
  if (d) {
    const rows = await d.read(async (c) =>
      (await c.runAndReadAll('SELECT log_id, body, body_class, severity_number, attributes FROM logs WHERE project_id = $p', { p: projectId })).getRows(),
    );
    return rows.map((r) => ({
      logId: r[0] as string,
      body: r[1] as string | null,
      bodyClass: r[2] as string | null,
      severityNumber: r[3] === null ? null : Number(r[3]),
      attributes: r[4] as string,
    }));
  }
  const ch = chOf(engine)!;
  const rows = await ch.client.query<Record<string, unknown>>(
    'SELECT log_id, body, body_class, severity_number, attributes FROM logs WHERE project_id = {p:String}',
    { p: projectId },
  );
  return rows.map((r) => ({
    logId: String(r.log_id),
    body: r.body === null ? null : String(r.body),
    bodyClass: r.body_class === null ? null : String(r.body_class),
    severityNumber: r.severity_number === null ? null : Number(r.severity_number),
    attributes: String(r.attributes),
  }));
}
