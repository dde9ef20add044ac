/** The background job runner's vocabulary (see docs/jobs.md). */

/**
 * pending: waiting for its `run_at` (a first run or a retry); running: a runner holds its lease;
 * done: the handler returned; failed: every attempt failed (the last error is kept).
 */
export type JobStatus = 'pending' | 'running' | 'done' | 'failed';

/** The statuses a (kind, key) can have at most one job in. */
export const LIVE_STATUSES: readonly JobStatus[] = ['pending', 'running'];

export interface JobRecord {
  id: string;
  /** The registered handler's name. */
  kind: string;
  /** Deduplication key: at most one pending-or-running job per (kind, key); null: no deduplication. */
  key: string | null;
  /** The handler's input, as it was enqueued (plain JSON). */
  payload: unknown;
  status: JobStatus;
  /** Due time; for a running job, the time it was due when claimed. */
  runAt: string;
  /** Claims so far, this one included (a claim counts even if the runner dies before it ends). */
  attempts: number;
  maxAttempts: number;
  /** Recurring jobs: the next occurrence is due this many seconds after this one ends. */
  everySeconds: number | null;
  /** Someone enqueued the same (kind, key) while this one was running: it runs once more when it ends. */
  rerunRequested: boolean;
  /** The runner holding the lease (running jobs only). */
  lockedBy: string | null;
  /** The lease's end: past it, another runner may claim the job again. */
  lockedUntil: string | null;
  /** The last failure's message, bounded (see MAX_ERROR_LENGTH); kept after a later success. */
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  /** When it became done or failed. */
  finishedAt: string | null;
}

/** What identifies one claim of a job: writes after the claim only apply while it still holds. */
export interface JobFence {
  id: string;
  lockedBy: string;
  attempts: number;
}

/** A job as written by enqueue/schedule (and by the runner for a next occurrence). */
export interface NewJob {
  id: string;
  kind: string;
  key: string | null;
  /** JSON text. */
  payload: string;
  runAt: string;
  maxAttempts: number;
  everySeconds: number | null;
  createdAt: string;
}

/** What one run of a handler is given. */
export interface JobRun<P = unknown> {
  payload: P;
  job: JobRecord;
  /**
   * Aborted when the run should stop early: the lease was lost (another runner may now have the
   * job), the run outlived its timeout, or the process is shutting down past its grace period.
   */
  signal: AbortSignal;
  /** The runner's clock (tests move it by hand). */
  now(): Date;
}

export type JobHandler<P = unknown> = (run: JobRun<P>) => Promise<void>;

export interface RegisterOptions {
  /**
   * Makes the kind recurring: the runner writes its schedule (key = the kind) when it starts, and
   * each occurrence's end writes the next one, due this many seconds later.
   */
  everySeconds?: number;
  /** Attempts before the job is `failed` (default: the configured SVC_JOBS_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** A run still going after this long is aborted and counted as a failed attempt (default 900 s). */
  timeoutSeconds?: number;
  /** First retry delay; each later one doubles, up to an hour (default 30 s). */
  backoffBaseSeconds?: number;
}

export interface EnqueueOptions {
  /** Deduplication key (see JobRecord.key). */
  key?: string;
  /** Due time (default: now). */
  runAt?: Date;
  maxAttempts?: number;
}

export interface ScheduleOptions {
  /** Default: the kind itself (one schedule per kind). */
  key?: string;
  payload?: unknown;
  /** The first occurrence's due time (default: now). */
  firstRunAt?: Date;
}

/** The subset of pino's logger the runner writes to. */
export interface JobLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLogger: JobLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
