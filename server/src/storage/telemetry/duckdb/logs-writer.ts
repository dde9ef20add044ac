/** Writes ingested log records with group commit (rows-writer.ts): a request is answered after its rows committed. */
import type { DuckDBDataChunk } from '@duckdb/node-api';
import type { LogRow, LogsSink } from '../../../domains/logs/rows.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import type { TelemetryDb } from './open.js';
import { GroupCommitWriter, appendChunks, rowChunks, tableLayout, type ColumnGetters, type TableLayout } from './rows-writer.js';

interface Pending {
  chunks: DuckDBDataChunk[];
}

const logColumns = (projectId: string, ingestedAtUs: number): ColumnGetters<LogRow> => ({
  project_id: () => projectId,
  log_id: (r) => r.logId,
  ts_us: (r) => r.tsUs,
  observed_us: (r) => r.observedUs,
  severity_number: (r) => r.severityNumber,
  severity_text: (r) => r.severityText,
  body: (r) => r.body,
  body_class: (r) => r.bodyClass,
  trace_id: (r) => r.traceId,
  span_id: (r) => r.spanId,
  service_name: (r) => r.serviceName,
  environment: (r) => r.environment,
  scope_name: (r) => r.scopeName,
  attributes: (r) => r.attributes,
  resource_attributes: (r) => r.resourceAttributes,
  ingested_at_us: () => ingestedAtUs,
});

export class LogsWriter implements LogsSink {
  private readonly gc: GroupCommitWriter<Pending>;
  private layout: Promise<TableLayout> | null = null;

  constructor(private readonly db: TelemetryDb) {
    this.gc = new GroupCommitWriter<Pending>(db, 'logs', (c, batch) => appendChunks(c, 'logs', batch.flatMap((p) => p.chunks)));
  }

  /** Resolves once the rows are committed; rejects when the commit failed or the writer is stopped. */
  async write(projectId: string, rows: LogRow[], ingestedAtUs: number): Promise<void> {
    if (this.gc.isStopped) throw new WriterStoppedError('logs');
    this.layout ??= tableLayout(this.db, 'logs');
    const layout = await this.layout.catch((e) => {
      this.layout = null;
      throw e;
    });
    return this.gc.write({ chunks: rowChunks(layout, logColumns(projectId, ingestedAtUs), rows) });
  }

  flush(): Promise<void> {
    return this.gc.flush();
  }

  /** Refuses new writes, then commits what is queued. Idempotent. */
  stop(): Promise<void> {
    return this.gc.stop();
  }
}
