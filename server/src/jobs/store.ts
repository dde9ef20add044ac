/** Storage port of the job runner; the adapter is server/src/storage/control/jobs-store.ts. */
import type { JobFence, JobRecord, JobStatus, NewJob } from './types.js';

/**
 * What `insert` does when a pending or running job of the same (kind, key) exists:
 * - enqueue: keeps it; a pending one becomes due at the earlier of the two times, a running one
 *   is marked to run once more when it ends (so work asked for mid-run is not lost);
 * - schedule: keeps it and gives it the new interval, payload and attempt limit;
 * - ignore: keeps it untouched (a recurring job's next occurrence).
 */
export type OnLiveDuplicate = 'enqueue' | 'schedule' | 'ignore';

export interface JobStore {
  /** Writes a job unless a live one of the same (kind, key) exists; returns the id that stands. */
  insert(job: NewJob, onLive: OnLiveDuplicate): Promise<{ id: string; created: boolean }>;
  /**
   * Claims the job of one of `kinds` that is due first (`run_at` order): a pending job due by
   * `now`, or a running one whose lease ended by `now` (its runner died). Sets the lease and counts
   * the attempt. Two runners never claim the same job (PostgreSQL: FOR UPDATE SKIP LOCKED).
   */
  claim(opts: { kinds: readonly string[]; now: string; lockedBy: string; lockedUntil: string }): Promise<JobRecord | undefined>;
  /** Moves the lease's end; false when the claim no longer holds. */
  extendLease(fence: JobFence, lockedUntil: string, at: string): Promise<boolean>;
  /** Back to pending, due at `runAt`, with the error kept; false when the claim no longer holds. */
  retry(fence: JobFence, runAt: string, error: string, at: string): Promise<boolean>;
  /** Ends the job (done or failed); returns the ended row, or undefined when the claim no longer holds. */
  finish(fence: JobFence, status: Extract<JobStatus, 'done' | 'failed'>, at: string, error: string | null): Promise<JobRecord | undefined>;
  /** Gives the job back unrun (shutdown): pending again, this attempt not counted. */
  release(fence: JobFence, at: string): Promise<boolean>;
  find(id: string): Promise<JobRecord | undefined>;
  /** Oldest due first; for operators and tests. */
  list(opts: { kind?: string; statuses?: readonly JobStatus[]; limit: number }): Promise<JobRecord[]>;
  /** Deletes done jobs that ended before `doneBefore` and failed ones that ended before `failedBefore`. */
  purgeFinished(doneBefore: string, failedBefore: string): Promise<number>;
}

/** The job store, and a way to run several of its writes as one transaction. */
export interface JobStores {
  jobs: JobStore;
}
export interface JobUnit extends JobStores {
  transaction<T>(fn: (tx: JobStores) => Promise<T>): Promise<T>;
}
