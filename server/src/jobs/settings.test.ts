/** SVC_JOBS_*: sensible defaults, and any value out of range refused at start with a message naming it. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';

describe('job runner settings', () => {
  it('defaults: enabled, poll every second, 60 s leases, 5 attempts, 2 jobs at once, 10 s shutdown grace', () => {
    expect(loadConfig({}).jobs).toEqual({ enabled: true, pollIntervalMs: 1000, leaseSeconds: 60, maxAttempts: 5, concurrency: 2, shutdownGraceSeconds: 10 });
  });

  it('each variable is read', () => {
    const env = {
      SVC_JOBS_ENABLED: 'false',
      SVC_JOBS_POLL_INTERVAL_MS: '250',
      SVC_JOBS_LEASE_SECONDS: '300',
      SVC_JOBS_MAX_ATTEMPTS: '8',
      SVC_JOBS_CONCURRENCY: '4',
      SVC_JOBS_SHUTDOWN_GRACE_SECONDS: '0',
    };
    expect(loadConfig(env).jobs).toEqual({ enabled: false, pollIntervalMs: 250, leaseSeconds: 300, maxAttempts: 8, concurrency: 4, shutdownGraceSeconds: 0 });
  });

  it.each([
    ['SVC_JOBS_POLL_INTERVAL_MS', ['49', '600001', '1.5', '-1', 'fast', '1e3']],
    ['SVC_JOBS_LEASE_SECONDS', ['4', '3601', 'x']],
    ['SVC_JOBS_MAX_ATTEMPTS', ['0', '101', ' 5']],
    ['SVC_JOBS_CONCURRENCY', ['0', '33']],
    ['SVC_JOBS_SHUTDOWN_GRACE_SECONDS', ['-1', '601']],
    ['SVC_JOBS_ENABLED', ['yes', '1', 'TRUE']],
  ])('%s: an invalid value is refused at start with a message naming the variable', (name, bad) => {
    for (const v of bad) expect(() => loadConfig({ [name]: v }), v).toThrow(new RegExp(`^${name} must be`));
  });
});
