/**
 * The embedded telemetry store: one DuckDB file in the data dir (or in memory for tests).
 * One connection is reserved for the writer (group commit); reads take a connection from a small pool,
 * so a slow query never blocks ingestion.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { TELEMETRY_SCHEMA } from './schema.js';
import { addLogBodyClass, addSessionCallTotals, lacksColumn } from './schema-upgrades.js';
import { backfillSummaries } from './summaries-backfill.js';
import { Checkpointer, WriteGate } from './checkpointer.js';
import { ThreadGovernor } from './thread-governor.js';

/** The write-ahead log size at which the store checkpoints (checkpointer.ts). */
export const CHECKPOINT_WAL_BYTES = 256 * 1024 * 1024;

export interface TelemetryDb {
  instance: DuckDBInstance;
  /** The writer's own connection; only the writer uses it. */
  writer: DuckDBConnection;
  /** Runs `fn` with a reader connection. */
  read<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` (a writer's transaction) as a statement in flight (DuckDB's threads follow them: thread-governor.ts),
   * never while a checkpoint runs (checkpointer.ts `WriteGate`): every transaction that appends goes through it.
   */
  busy<T>(fn: () => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openTelemetryDb(opts: {
  dataDir?: string;
  memory?: boolean;
  readers?: number;
  threads?: number;
  memoryLimit?: string;
  /** Progress lines of one-time upgrades. */
  log?: (line: string) => void;
}): Promise<TelemetryDb> {
  let file = ':memory:';
  if (!opts.memory) {
    if (!opts.dataDir) throw new Error('dataDir is required for a file-backed telemetry store');
    fs.mkdirSync(opts.dataDir, { recursive: true });
    file = path.join(opts.dataDir, 'telemetry.duckdb');
  }
  // threads 0 (or absent): DuckDB's default, one per core. Set at open, so every connection runs with them.
  const options: Record<string, string> = {};
  if (opts.threads) options.threads = String(opts.threads);
  if (opts.memoryLimit) options.memory_limit = opts.memoryLimit;
  const instance = await DuckDBInstance.create(file, options);
  const writer = await instance.connect();
  // DuckDB checkpoints inside a COMMIT once the WAL passes the threshold (16 MB by default), which
  // stalled ingest commits for 0.5-2 s every few seconds under span load. A larger WAL costs a longer
  // replay after a crash, nothing in durability (every commit is still in the WAL before its 2xx).
  // A file-backed store checkpoints on its own schedule at CHECKPOINT_WAL_BYTES (checkpointer.ts); DuckDB's
  // threshold, above it, is the backstop.
  await writer.run(`SET checkpoint_threshold = '${file === ':memory:' ? '256MB' : '1GB'}'`);
  const threads = Number((await writer.runAndReadAll("SELECT current_setting('threads')")).getRows()[0][0]);
  if (await lacksColumn(writer, 'logs', 'body_class')) await addLogBodyClass(writer);
  const sessionsLackTotals = await lacksColumn(writer, 'session_summaries', 'call_totals');
  // A file written before the trace indexes existed gets them here, once (about 0.7 s per million spans).
  const unindexed = await writer.runAndReadAll(
    "SELECT count(*) FROM duckdb_tables() t WHERE t.table_name = 'spans' AND NOT EXISTS (SELECT 1 FROM duckdb_indexes() i WHERE i.index_name = 'spans_trace')",
  );
  if (Number(unindexed.getRows()[0][0]) > 0) {
    const [[spans]] = (await writer.runAndReadAll('SELECT count(*) FROM spans')).getRows();
    if (Number(spans) > 0) opts.log?.(`telemetry: indexing the trace ids of ${Number(spans).toLocaleString('en-US')} stored spans (once)`);
  }
  for (const stmt of TELEMETRY_SCHEMA) await writer.run(stmt);
  const source = await instance.connect();
  try {
    await backfillSummaries(writer, source, opts.log);
  } finally {
    source.closeSync();
  }
  if (sessionsLackTotals) {
    opts.log?.('telemetry: summing the model calls of every stored session (once)');
    await addSessionCallTotals(writer);
  }
  // Reads and writers' transactions are the statements DuckDB's threads follow (thread-governor.ts).
  const governor = new ThreadGovernor(instance, threads, (e) => opts.log?.(`telemetry threads could not be set: ${String(e)}`));
  governor.start();
  const idle: DuckDBConnection[] = [];
  const waiting: ((c: DuckDBConnection) => void)[] = [];
  for (let i = 0; i < (opts.readers ?? 4); i++) idle.push(await instance.connect());
  const all = [writer, ...idle];
  let closed = false;

  async function read<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    if (closed) throw new Error('telemetry store is closed');
    const c = idle.pop() ?? (await new Promise<DuckDBConnection>((resolve) => waiting.push(resolve)));
    try {
      return await governor.busy(() => fn(c));
    } finally {
      const next = waiting.shift();
      if (next) next(c);
      else idle.push(c);
    }
  }

  const gate = new WriteGate();
  const checkpointer =
    file === ':memory:' ? null : new Checkpointer(instance, `${file}.wal`, CHECKPOINT_WAL_BYTES, governor, gate, (e) => opts.log?.(`telemetry checkpoint failed (tried again in a second): ${String(e)}`));
  checkpointer?.start();

  return {
    instance,
    writer,
    read,
    busy: (fn) => gate.shared(() => governor.busy(fn)),
    ping: () => read(async (c) => void (await c.run('SELECT 1'))),
    async close() {
      if (closed) return;
      closed = true;
      await checkpointer?.stop();
      await governor.stop();
      // Fold the WAL into the file so the next start opens quickly.
      await writer.run('CHECKPOINT').catch(() => undefined);
      for (const c of all) c.closeSync();
      instance.closeSync();
    },
  };
}
