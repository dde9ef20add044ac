/**
 * Writes ingested log records to ClickHouse with group commit, as duckdb/logs-writer.ts does on DuckDB: a
 * request hands over its rows and waits; one flush at a time inserts everything queued since the last one
 * in ONE synchronous insert (one part), and answers every waiter only after the insert returned, so a 2xx
 * built on it means stored. When an insert of several requests fails, each request is inserted again on its
 * own, so only a request that cannot be stored is refused. No timer: the batch grows with the load while an
 * insert runs.
 */
import type { LogRow, LogsSink } from '../../../domains/logs/rows.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import type { ChTelemetryDb } from './db.js';

interface Pending {
  rows: object[];
  resolve(): void;
  reject(e: unknown): void;
}

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
  private queue: Pending[] = [];
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly db: ChTelemetryDb) {}

  /** Resolves once the rows are stored; rejects when the insert failed or the writer is stopped. */
  write(projectId: string, rows: LogRow[], ingestedAtUs: number): Promise<void> {
    if (this.stopped) return Promise.reject(new WriterStoppedError('logs'));
    if (rows.length === 0) return Promise.resolve();
    const chRows = rows.map((r) => chLogRow(projectId, ingestedAtUs, r));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ rows: chRows, resolve, reject });
      this.running ??= this.loop();
    });
  }

  /** Waits until everything handed over so far is stored (or failed). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Refuses new writes, then stores what is queued. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.flush();
  }

  private insert(batch: Pending[]): Promise<void> {
    return this.db.client.insert('logs', batch.length === 1 ? batch[0].rows : batch.flatMap((p) => p.rows));
  }

  private async loop(): Promise<void> {
    // Let the requests of the current tick join the first batch.
    await new Promise<void>((r) => setImmediate(r));
    for (;;) {
      // Checked and cleared with no await in between.
      if (this.queue.length === 0) {
        this.running = null;
        return;
      }
      const batch = this.queue;
      this.queue = [];
      try {
        await this.insert(batch);
        for (const p of batch) p.resolve();
      } catch (e) {
        if (batch.length === 1) {
          batch[0].reject(e);
          continue;
        }
        // One request's rows must not fail its neighbours: insert each alone.
        for (const p of batch) {
          try {
            await this.insert([p]);
            p.resolve();
          } catch (e2) {
            p.reject(e2);
          }
        }
      }
    }
  }
}
