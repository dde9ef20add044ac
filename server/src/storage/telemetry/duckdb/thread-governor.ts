/**
 * DuckDB's worker threads follow the load of the embedded store.
 *
 * One statement at a time (a person opening a dashboard) is fastest with every core: a scan of 10M metric points
 * takes about half as long on two threads as on one. Many statements at once (the server under concurrent
 * clients) are not: each statement's parallel tasks then only contend with the others and with the event loop,
 * which is the server's narrowest resource, and a checkpoint compressing on every thread starved it for seconds
 * (`npm run bench -- --load`: about 10 % fewer requests per second and read p99 2-2.5 s against under 1 s).
 * So DuckDB runs on one thread while two or more statements are in flight (reads and writers' commits) or a
 * checkpoint runs, and on the configured threads again after six periods in a row (3 s) with at most one
 * statement in flight. Narrowing happens at once, widening after a quiet period, so the setting does not flap.
 * `SET GLOBAL threads` takes well under a millisecond and applies to the statements started after it.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/** Quiet periods in a row before DuckDB gets its threads back. */
const QUIET_TICKS = 6;

export class ThreadGovernor {
  private inFlight = 0;
  /** Most statements in flight at once since the last tick. */
  private peak = 0;
  private checkpointing = false;
  /** Periods in a row with at most one statement in flight and no checkpoint. */
  private quietTicks = QUIET_TICKS;
  private current: number;
  private applying: Promise<void> = Promise.resolve();
  private conn: Promise<DuckDBConnection> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly instance: DuckDBInstance,
    /** The threads when the store is quiet (the configured setting, or one per core). */
    private readonly max: number,
    private readonly onError: (e: unknown) => void = () => undefined,
    private readonly everyMs = 500,
  ) {
    this.current = max;
  }

  /** The threads DuckDB was last set to. */
  get threads(): number {
    return this.current;
  }

  /** Resolves once the last change is applied in DuckDB. */
  applied(): Promise<void> {
    return this.applying;
  }

  start(): void {
    if (this.max <= 1 || this.timer) return;
    this.timer = setInterval(() => this.tick(), this.everyMs);
    this.timer.unref();
  }

  /** Runs `fn` as one statement in flight. */
  async busy<T>(fn: () => Promise<T>): Promise<T> {
    this.enter();
    try {
      return await fn();
    } finally {
      this.inFlight--;
    }
  }

  /** While a checkpoint runs: one thread. Resolves once the setting is applied. */
  checkpoint(on: boolean): Promise<void> {
    this.checkpointing = on;
    if (on) return this.set(1);
    this.tick();
    return this.applying;
  }

  private enter(): void {
    this.inFlight++;
    if (this.inFlight > this.peak) this.peak = this.inFlight;
    if (this.inFlight >= 2 && this.current > 1) void this.set(1);
  }

  private tick(): void {
    this.quietTicks = this.peak >= 2 || this.checkpointing ? 0 : this.quietTicks + 1;
    this.peak = this.inFlight;
    const want = this.quietTicks >= QUIET_TICKS ? this.max : 1;
    if (want !== this.current) void this.set(want);
  }

  private set(threads: number): Promise<void> {
    if (this.max <= 1 || this.stopped || threads === this.current) return this.applying;
    this.current = threads;
    this.applying = this.applying.then(async () => {
      try {
        this.conn ??= this.instance.connect();
        // The latest wish wins: a queued change that was overtaken applies the current one.
        await (await this.conn).run(`SET GLOBAL threads = ${this.current}`);
      } catch (e) {
        this.onError(e);
      }
    });
    return this.applying;
  }

  /** Stops following the load and leaves DuckDB on its configured threads. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.set(this.max);
    this.stopped = true;
    await this.applying;
    const c = this.conn;
    this.conn = null;
    if (c) (await c.catch(() => null))?.closeSync();
  }
}
