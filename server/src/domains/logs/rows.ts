/** The rows an OTLP logs request becomes, as ingestion hands them to the telemetry store, and the store's write port. Engine-neutral. */
import type { LogRow as StoredLogRow } from './store.js';

/** One `logs` row as ingestion builds it: the stored row without what the store derives (rank, ingest time). */
export type LogRow = Omit<StoredLogRow, 'severityRank' | 'ingestedUs'>;

/** Where ingested log records go: a 2xx is built on `write` having resolved (the rows are stored). */
export interface LogsSink {
  /** Resolves once the rows are stored; rejects when they could not be or the writer is stopped (WriterStoppedError). */
  write(projectId: string, rows: LogRow[], ingestedAtUs: number): Promise<void>;
  /** Waits until everything handed over so far is stored (or failed). */
  flush(): Promise<void>;
  /** Refuses new writes, then stores what is queued. Idempotent. */
  stop(): Promise<void>;
}
