/** The runner's settings, read from the environment by config.ts (names and bounds: JOB_SETTING_VARS). */
export interface JobSettings {
  /** SVC_JOBS_ENABLED: false keeps this node from running jobs (it can still enqueue them). */
  enabled: boolean;
  /** SVC_JOBS_POLL_INTERVAL_MS: how often an idle runner looks for due jobs. */
  pollIntervalMs: number;
  /** SVC_JOBS_LEASE_SECONDS: a claim's lease; renewed every third of it while the handler runs. */
  leaseSeconds: number;
  /** SVC_JOBS_MAX_ATTEMPTS: attempts before a job is failed, unless its kind says otherwise. */
  maxAttempts: number;
  /** SVC_JOBS_CONCURRENCY: jobs one node runs at once. */
  concurrency: number;
  /** SVC_JOBS_SHUTDOWN_GRACE_SECONDS: how long a shutdown waits for running jobs before giving their leases back. */
  shutdownGraceSeconds: number;
}

/** Environment variable, default, minimum, maximum of each numeric setting. */
export const JOB_SETTING_VARS = {
  pollIntervalMs: ['SVC_JOBS_POLL_INTERVAL_MS', 1000, 50, 600_000],
  leaseSeconds: ['SVC_JOBS_LEASE_SECONDS', 60, 5, 3600],
  maxAttempts: ['SVC_JOBS_MAX_ATTEMPTS', 5, 1, 100],
  concurrency: ['SVC_JOBS_CONCURRENCY', 2, 1, 32],
  shutdownGraceSeconds: ['SVC_JOBS_SHUTDOWN_GRACE_SECONDS', 10, 0, 600],
} as const;

export const DEFAULT_JOB_SETTINGS: JobSettings = {
  enabled: true,
  pollIntervalMs: JOB_SETTING_VARS.pollIntervalMs[1],
  leaseSeconds: JOB_SETTING_VARS.leaseSeconds[1],
  maxAttempts: JOB_SETTING_VARS.maxAttempts[1],
  concurrency: JOB_SETTING_VARS.concurrency[1],
  shutdownGraceSeconds: JOB_SETTING_VARS.shutdownGraceSeconds[1],
};
