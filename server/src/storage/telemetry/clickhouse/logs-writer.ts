/**
 * Writes ingested log records to ClickHouse with group commit (batcher.ts), as duckdb/logs-writer.ts does on
 * DuckDB: everything queued since the last flush goes in ONE synchronous insert (one part), and a request is
 * answered only after the insert returned, so a 2xx built on it means stored.
 */
import type { LogRow, LogsSink } from '../../../domains/logs/rows.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import { Batcher } from './batcher.js';
import type { ChTelemetryDb } from './db.js';

/** One `logs` row as inserted (JSONEachRow). */
function chLogRow(projectId: string, ingestedAtUs: number, r: LogRow): object {
  return {
    project_id: projectId,
    log_id: r.logId,
    ts_us: r.tsUs,
    observed_us: r.observedUs,
    severity_number: r.severityNumber,
    severity_text: r.severityText,
    body: r.body,
    trace_id: r.traceId,
    span_id: r.spanId,
    service_name: r.serviceName,
    environment: r.environment,
    scope_name: r.scopeName,
    attributes: r.attributes,
    resource_attributes: r.resourceAttributes,
    ingested_at_us: ingestedAtUs,
    body_class: r.bodyClass,
  };
}

export class ChLogsWriter implements LogsSink {
  private readonly batcher: Batcher<object[]>;

  constructor(private readonly db: ChTelemetryDb) {
    this.batcher = new Batcher<object[]>('logs', (items) => this.db.client.insert('logs', items.length === 1 ? items[0] : items.flat()));
  }

  /** Resolves once the rows are stored; rejects when the insert failed or the writer is stopped. */
  write(projectId: string, rows: LogRow[], ingestedAtUs: number): Promise<void> {
    if (this.batcher.isStopped) return Promise.reject(new WriterStoppedError('logs'));
    if (rows.length === 0) return Promise.resolve();
    return this.batcher.write(rows.map((r) => chLogRow(projectId, ingestedAtUs, r)));
  }

  /** Waits until everything handed over so far is stored (or failed). */
  flush(): Promise<void> {
    return this.batcher.flush();
  }

  /** Refuses new writes, then stores what is queued. Idempotent. */
  stop(): Promise<void> {
    return this.batcher.stop();
  }
}
