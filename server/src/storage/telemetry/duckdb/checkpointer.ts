/**
 * Checkpoints of the embedded telemetry store, on the store's own schedule instead of inside a writer's COMMIT.
 *
 * DuckDB folds its write-ahead log into the data file (a checkpoint: new rows compressed into row groups) inside
 * the COMMIT that takes the log past `checkpoint_threshold`, and compresses with every DuckDB thread. Under
 * concurrent load that took both cores for a few seconds every ~20 s of ingest: the event loop and the reads
 * were starved with it (read p99 2-2.5 s against 0.8-1 s between checkpoints, measured with
 * `npm run bench -- --load`). Here a check every second starts a checkpoint from a connection of its own once
 * the log passes `walBytes`, with DuckDB on one thread for its duration (thread-governor.ts; other statements
 * run on one thread meanwhile too). Writers' commits still wait for the checkpoint, as before;
 * reads do not. DuckDB's own threshold stays as a backstop (set above this one by open.ts), should these fail.
 * Durability is unchanged: every commit is in the log before it is acknowledged.
 */
import fs from 'node:fs';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { ThreadGovernor } from './thread-governor.js';

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
      await this.governor.checkpoint(true);
      try {
        await c.run('CHECKPOINT');
        this.done++;
      } finally {
        await this.governor.checkpoint(false);
      }
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
