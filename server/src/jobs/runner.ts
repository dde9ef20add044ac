/**
 * The runner: claims due jobs of the registered kinds, runs their handlers under a lease it keeps
 * renewing, and records the outcome (done, retry with backoff, failed). The poll loop is started
 * by main.ts and stopped when the app closes. See docs/jobs.md.
 */
import type { IdGenerator } from '../lib/clock.js';
import type { JobClock } from './clock.js';
import { retryDelaySeconds, type JobRegistry, type Registered } from './registry.js';
import type { JobSettings } from './settings.js';
import type { JobUnit } from './store.js';
import { silentLogger, type JobFence, type JobLogger, type JobRecord } from './types.js';

/** last_error keeps at most this many characters of a failure's message. */
export const MAX_ERROR_LENGTH = 1000;

/** A failure's message for last_error: one line, no control characters, bounded; never a stack. */
export function errorText(err: unknown): string {
  const raw = err instanceof Error ? `${err.name}: ${err.message}` : typeof err === 'string' ? err : 'non-Error thrown';
  const line = raw.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim() || 'error without a message';
  return line.length > MAX_ERROR_LENGTH ? `${line.slice(0, MAX_ERROR_LENGTH - 1)}…` : line;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Counters, for operators' logs and for tests that wait on the loop. */
export interface RunnerStats {
  /** Rounds of the poll loop. */
  polls: number;
  claimed: number;
  done: number;
  retried: number;
  failed: number;
  /** Runs whose lease another runner took (or a shutdown gave back) before they ended. */
  lost: number;
}

interface Running {
  job: JobRecord;
  fence: JobFence;
  abort: AbortController;
  settled: Promise<void>;
}

type Outcome = { ok: true } | { ok: false; error: string };

export class JobRunner {
  readonly stats: RunnerStats = { polls: 0, claimed: 0, done: 0, retried: 0, failed: 0, lost: 0 };
  private readonly running = new Map<string, Running>();
  private log: JobLogger = silentLogger;
  private loopDone?: Promise<void>;
  private stopping?: Promise<void>;
  private halt = false;
  private wakeRequested = false;
  private interruptIdle?: () => void;
  private schedulesWritten = false;

  constructor(
    private readonly store: JobUnit,
    private readonly registry: JobRegistry,
    private readonly clock: JobClock,
    private readonly ids: IdGenerator,
    private readonly settings: JobSettings,
    /** This runner's name in `locked_by` (host:pid:random by default). */
    readonly id: string,
  ) {}

  get started(): boolean {
    return this.loopDone !== undefined;
  }

  /** Starts the poll loop (no-op when disabled by SVC_JOBS_ENABLED=false or already started). */
  start(log?: JobLogger): void {
    if (log) this.log = log;
    if (!this.settings.enabled || this.loopDone) return;
    this.halt = false;
    this.stopping = undefined;
    this.loopDone = this.loop();
  }

  /**
   * Stops claiming, waits up to the grace period for running jobs, then aborts the rest and gives
   * their leases back so another runner picks them up at once. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /** Asks an idle loop to look for due jobs now (a job was just enqueued). */
  wake(): void {
    this.wakeRequested = true;
    this.interruptIdle?.();
  }

  /**
   * Claims and runs due jobs one after the other until none is due (or `limit` ran); returns how
   * many ran. For tests and one-off use; the loop does the same in the background.
   */
  async runDue(limit = 1000): Promise<number> {
    await this.writeSchedules();
    let n = 0;
    while (n < limit) {
      const job = await this.claimOne();
      if (!job) break;
      await this.execute(job);
      n++;
    }
    return n;
  }

  /** Writes the schedule of every recurring kind (no-op for those already scheduled). */
  async writeSchedules(): Promise<void> {
    if (this.schedulesWritten) return;
    const at = this.clock.now().toISOString();
    for (const r of this.registry.recurring())
      await this.store.jobs.insert(
        { id: this.ids.uuid(), kind: r.kind, key: r.kind, payload: 'null', runAt: at, maxAttempts: this.maxAttempts(r), everySeconds: r.everySeconds!, createdAt: at },
        'schedule',
      );
    this.schedulesWritten = true;
  }

  maxAttempts(r: Registered): number {
    return r.maxAttempts ?? this.settings.maxAttempts;
  }

  private async loop(): Promise<void> {
    while (!this.halt) {
      this.stats.polls++;
      try {
        await this.writeSchedules();
      } catch (err) {
        this.log.error({ err: errorText(err) }, 'jobs: could not write the recurring schedules; trying again at the next poll');
      }
      // What was enqueued before this round is seen by its claims; a wake during the round makes another.
      this.wakeRequested = false;
      while (!this.halt && this.running.size < this.settings.concurrency) {
        const job = await this.claimOne();
        if (!job) break;
        this.launch(job);
      }
      if (this.halt) break;
      await this.idle();
    }
  }

  private async idle(): Promise<void> {
    if (this.wakeRequested) {
      this.wakeRequested = false;
      return;
    }
    const ac = new AbortController();
    this.interruptIdle = () => ac.abort();
    try {
      await this.clock.sleep(this.settings.pollIntervalMs, ac.signal);
    } finally {
      this.interruptIdle = undefined;
      this.wakeRequested = false;
    }
  }

  private launch(job: JobRecord): void {
    // execute never rejects; the slot frees when it settles, and the loop looks again at once.
    void this.execute(job).finally(() => this.wake());
  }

  private async claimOne(): Promise<JobRecord | undefined> {
    const now = this.clock.now().getTime();
    try {
      const job = await this.store.jobs.claim({
        kinds: this.registry.names(),
        now: iso(now),
        lockedBy: this.id,
        lockedUntil: iso(now + this.settings.leaseSeconds * 1000),
      });
      if (job) this.stats.claimed++;
      return job;
    } catch (err) {
      this.log.error({ err: errorText(err) }, 'jobs: claim failed; trying again at the next poll');
      return undefined;
    }
  }

  /** Runs one claimed job to its recorded outcome; never rejects. */
  private execute(job: JobRecord): Promise<void> {
    const fence: JobFence = { id: job.id, lockedBy: this.id, attempts: job.attempts };
    const abort = new AbortController();
    const entry = { job, fence, abort } as Running;
    entry.settled = this.executeClaimed(job, fence, abort)
      .catch((err) => this.log.error({ job_id: job.id, kind: job.kind, err: errorText(err) }, 'jobs: could not record the outcome; the lease will run out and the job run again'))
      .finally(() => this.running.delete(job.id));
    this.running.set(job.id, entry);
    return entry.settled;
  }

  private async executeClaimed(job: JobRecord, fence: JobFence, abort: AbortController): Promise<void> {
    const reg = this.registry.require(job.kind);
    // Claimed again after its lease ran out on the last attempt allowed: the runner died in it each time.
    if (job.attempts > job.maxAttempts) return this.end(job, fence, 'failed', job.lastError ?? 'the lease ran out on every attempt');
    const outcome = await this.runHandler(reg, job, abort);
    if (abort.signal.aborted && abort.signal.reason === 'lease lost') {
      this.stats.lost++;
      this.log.warn({ job_id: job.id, kind: job.kind }, 'jobs: lost the lease while running; the outcome is not recorded');
      return;
    }
    if (outcome.ok) return this.end(job, fence, 'done', null);
    if (job.attempts >= job.maxAttempts) return this.end(job, fence, 'failed', outcome.error);
    const now = this.clock.now().getTime();
    const delay = retryDelaySeconds(job.attempts, reg.backoffBaseSeconds);
    if (await this.store.jobs.retry(fence, iso(now + delay * 1000), outcome.error, iso(now))) {
      this.stats.retried++;
      this.log.warn({ job_id: job.id, kind: job.kind, attempt: job.attempts, retry_in_s: delay, err: outcome.error }, 'jobs: attempt failed; will retry');
    } else this.lostLease(job);
  }

  /** The handler's outcome, with the lease renewed meanwhile; a throw or a timeout is a failure. */
  private async runHandler(reg: Registered, job: JobRecord, abort: AbortController): Promise<Outcome> {
    const stopTimers = new AbortController();
    const heartbeat = this.keepLease(job, abort, stopTimers.signal);
    const timeoutMs = reg.timeoutSeconds * 1000;
    const timedOut = this.clock.sleep(timeoutMs, stopTimers.signal).then((): Outcome => {
      if (stopTimers.signal.aborted) return { ok: true }; // the race is over already
      abort.abort('timeout');
      return { ok: false, error: `timed out after ${reg.timeoutSeconds} s` };
    });
    const ran = Promise.resolve()
      .then(() => reg.handler({ payload: job.payload, job, signal: abort.signal, now: () => this.clock.now() }))
      .then(
        (): Outcome => ({ ok: true }),
        (err): Outcome => ({ ok: false, error: errorText(err) }),
      );
    try {
      return await Promise.race([ran, timedOut]);
    } finally {
      stopTimers.abort();
      await heartbeat;
    }
  }

  /** Renews the lease every third of it until `done`; aborts the run when the lease is gone. */
  private async keepLease(job: JobRecord, abort: AbortController, done: AbortSignal): Promise<void> {
    const leaseMs = this.settings.leaseSeconds * 1000;
    const fence: JobFence = { id: job.id, lockedBy: this.id, attempts: job.attempts };
    while (!done.aborted) {
      await this.clock.sleep(leaseMs / 3, done);
      if (done.aborted) return;
      const now = this.clock.now().getTime();
      try {
        if (!(await this.store.jobs.extendLease(fence, iso(now + leaseMs), iso(now)))) {
          abort.abort('lease lost');
          return;
        }
      } catch (err) {
        // The store is unreachable: keep running and try again; if the lease runs out meanwhile,
        // the next renewal finds it taken and aborts the run.
        this.log.warn({ job_id: job.id, err: errorText(err) }, 'jobs: could not renew a lease');
      }
    }
  }

  /** Ends the job and, in the same transaction, writes its next occurrence (recurring, or asked again mid-run). */
  private async end(job: JobRecord, fence: JobFence, status: 'done' | 'failed', error: string | null): Promise<void> {
    const at = this.clock.now().getTime();
    const ended = await this.store.transaction(async (tx) => {
      const row = await tx.jobs.finish(fence, status, iso(at), error);
      if (!row) return false;
      if (row.everySeconds !== null || row.rerunRequested) {
        const runAt = row.rerunRequested ? at : at + row.everySeconds! * 1000;
        await tx.jobs.insert(
          { id: this.ids.uuid(), kind: row.kind, key: row.key, payload: JSON.stringify(row.payload), runAt: iso(runAt), maxAttempts: row.maxAttempts, everySeconds: row.everySeconds, createdAt: iso(at) },
          'ignore',
        );
      }
      return true;
    });
    if (!ended) return this.lostLease(job);
    if (status === 'done') this.stats.done++;
    else {
      this.stats.failed++;
      this.log.error({ job_id: job.id, kind: job.kind, attempts: job.attempts, err: error }, 'jobs: job failed for good');
    }
  }

  private lostLease(job: JobRecord): void {
    this.stats.lost++;
    this.log.warn({ job_id: job.id, kind: job.kind }, 'jobs: the lease was gone when the run ended; the outcome is not recorded');
  }

  private async shutdown(): Promise<void> {
    this.halt = true;
    this.interruptIdle?.();
    await this.loopDone;
    const left = [...this.running.values()];
    if (left.length > 0) {
      const grace = new AbortController();
      const allSettled = Promise.all(left.map((r) => r.settled)).then(() => grace.abort());
      await Promise.race([allSettled, this.clock.sleep(this.settings.shutdownGraceSeconds * 1000, grace.signal)]);
      grace.abort();
    }
    for (const r of this.running.values()) {
      r.abort.abort('shutdown');
      try {
        if (await this.store.jobs.release(r.fence, this.clock.now().toISOString()))
          this.log.warn({ job_id: r.job.id, kind: r.job.kind }, 'jobs: shutting down; gave the lease of a running job back');
      } catch (err) {
        this.log.error({ job_id: r.job.id, err: errorText(err) }, 'jobs: could not give a lease back; it runs out by itself');
      }
    }
    this.loopDone = undefined;
  }
}
