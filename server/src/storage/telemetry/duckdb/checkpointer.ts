/**
 * Checkpoints of the embedded telemetry store, on the store's own schedule instead of inside a writer's COMMIT.
 *
 * DuckDB folds its write-ahead log into the data file (a checkpoint: new rows compressed into row groups) inside
 * the COMMIT that takes the log past `checkpoint_threshold`, and compresses with every DuckDB thread. Under
 * concurrent load that took both cores for a few seconds every ~20 s of ingest: the event loop and the reads
 * were starved with it (read p99 2-2.5 s against 0.8-1 s between checkpoints, measured with
 * `npm run bench -- --load`). Here a check every second starts a checkpoint from a connection of its own once
 * the log passes `walBytes`, with DuckDB on one thread for its duration (thread-governor.ts; other statements
 * run on one thread meanwhile too).
 *
 * Writers never meet a running checkpoint inside their transaction (`WriteGate`): an appender's flush is
 * synchronous, and one that waited for DuckDB's checkpoint lock froze the event loop for the checkpoint's
 * whole duration (single flushes of 2 s, seen under `npm run bench -- --only=spans`), so no request was
 * decoded or answered meanwhile. A checkpoint now starts once the writers' transactions in flight have ended,
 * and transactions that begin during it wait for it asynchronously. Reads do not wait. DuckDB's own threshold stays as a backstop (set above this one by open.ts), should these fail.
 * Durability is unchanged: every commit is in the log before it is acknowledged.
 */
import fs from 'node:fs';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { ThreadGovernor } from './thread-governor.js';

/**
 * Writers' transactions (shared) and checkpoints (exclusive): a checkpoint waits for the transactions in flight
 * to end and holds back new ones until it is done. Transactions never wait for each other.
 */
export class WriteGate {
  private active = 0;
  private exclusive: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  /** Runs a writer's transaction, after any checkpoint that is running or waiting. */
  async shared<T>(fn: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    this.active++;
    try {
      return await fn();
    } finally {
      if (--this.active === 0 && this.drained) this.drained();
    }
  }

  /** Runs `fn` with no writer's transaction in flight (one caller at a time: the checkpointer). */
  async only<T>(fn: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    let release!: () => void;
    this.exclusive = new Promise<void>((r) => (release = r));
    try {
      if (this.active > 0) await new Promise<void>((r) => (this.drained = r));
      this.drained = null;
      return await fn();
    } finally {
      this.exclusive = null;
      release();
    }
  }
}

export class Checkpointer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private conn: Promise<DuckDBConnection> | null = null;
  /** Checkpoints done (for tests and logs). */
  done = 0;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly walPath: string,
    private readonly walBytes: number,
    /** Sets DuckDB to one thread for the checkpoint's duration. */
    private readonly governor: Pick<ThreadGovernor, 'checkpoint'>,
    /** Keeps writers' transactions and the checkpoint apart. */
    private readonly gate: WriteGate,
    private readonly onError: (e: unknown) => void,
    private readonly everyMs = 1_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.everyMs);
    this.timer.unref();
  }

  /** Starts a checkpoint when the log has grown past the threshold and none is running; resolves when it ends. */
  check(): Promise<void> {
    if (this.running) return this.running;
    let size: number;
    try {
      size = fs.statSync(this.walPath).size;
    } catch {
      return Promise.resolve(); // no log: nothing to fold
    }
    if (size < this.walBytes) return Promise.resolve();
    this.running = this.checkpoint().finally(() => (this.running = null));
    return this.running;
  }

  private async checkpoint(): Promise<void> {
    try {
      this.conn ??= this.instance.connect();
      const c = await this.conn;
      await this.gate.only(async () => {
        await this.governor.checkpoint(true);
        try {
          await c.run('CHECKPOINT');
          this.done++;
        } finally {
          await this.governor.checkpoint(false);
        }
      });
    } catch (e) {
      this.onError(e); // tried again at the next check; DuckDB's own threshold is the backstop
    }
  }

  /** Stops checking and waits for a running checkpoint (the store's close checkpoints once more). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    const c = this.conn;
    this.conn = null;
    if (c) (await c.catch(() => null))?.closeSync();
  }
}
