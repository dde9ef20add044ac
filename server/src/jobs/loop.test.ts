/** The runner's poll loop, driven by the test clock: no real waits beyond a few milliseconds. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomIds } from '../lib/clock.js';
import { openTestControl } from '../testing/app.js';
import type { ControlStore } from '../storage/control/stores.js';
import { ManualClock } from './clock.js';
import { JobService } from './service.js';
import { DEFAULT_JOB_SETTINGS, type JobSettings } from './settings.js';
import type { JobUnit } from './store.js';
import { gate, waitFor } from './testing.js';
import type { JobLogger } from './types.js';

const T0 = '2026-05-01T00:00:00.000Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();
const SETTINGS: JobSettings = { ...DEFAULT_JOB_SETTINGS, pollIntervalMs: 1000, concurrency: 2 };

describe('the runner loop with the test clock', () => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  let clock: ManualClock;
  let jobs: JobService;
  const idle = (what: string) => waitFor(() => clock.pendingSleeps().includes(SETTINGS.pollIntervalMs), what);

  beforeEach(async () => {
    ({ store, drop } = await openTestControl('sqlite'));
    clock = new ManualClock(T0);
    jobs = new JobService(store, clock, randomIds, SETTINGS, 'node-a');
  });
  afterEach(async () => {
    await jobs.stop();
    await drop();
  });

  it('due jobs run, future ones wait for their time, and shutdown stops the loop cleanly', async () => {
    const ran: string[] = [];
    jobs.register('t.job', async ({ payload }) => void ran.push(payload as string));
    await jobs.enqueue('t.job', 'now');
    await jobs.enqueue('t.job', 'in 5 s', { runAt: new Date(at(5)) });
    jobs.start();
    await waitFor(() => ran.length === 1, 'the due job');
    await idle('the loop to idle');
    const polls = jobs.runner.stats.polls;
    clock.advance(1000);
    await waitFor(() => jobs.runner.stats.polls > polls, 'the next poll');
    await idle('the loop to idle again');
    expect(ran).toEqual(['now']);
    clock.advance(4000);
    await waitFor(() => ran.length === 2, 'the job due in 5 s');
    expect(ran).toEqual(['now', 'in 5 s']);
    await jobs.stop();
    expect(jobs.runner.started).toBe(false);
    expect(clock.waiting).toBe(0);
    // Stopped: nothing runs any more, whatever the time.
    await jobs.enqueue('t.job', 'after stop');
    clock.advance(60_000);
    await new Promise((r) => setTimeout(r, 5));
    expect(ran).toEqual(['now', 'in 5 s']);
  });

  it('an enqueued due job wakes the idle loop at once, without waiting for the poll interval', async () => {
    const ran: string[] = [];
    jobs.register('t.job', async ({ payload }) => void ran.push(payload as string));
    jobs.start();
    await idle('the loop to idle');
    await jobs.enqueue('t.job', 'woken');
    await waitFor(() => ran.length === 1, 'the enqueued job');
  });

  it('runs at most SVC_JOBS_CONCURRENCY jobs at once; a freed slot is filled at once', async () => {
    const gates = [gate(), gate(), gate()];
    let running = 0;
    let max = 0;
    const started: number[] = [];
    jobs.register('t.slow', async ({ payload }) => {
      started.push(payload as number);
      max = Math.max(max, ++running);
      await gates[payload as number].promise;
      running--;
    });
    for (const i of [0, 1, 2]) await jobs.enqueue('t.slow', i);
    jobs.start();
    await waitFor(() => started.length === 2, 'two jobs to start');
    await idle('the loop to idle with its slots full');
    expect(started).toHaveLength(2);
    // (jobs due at the same time start in no set order)
    gates[started[0]].open();
    await waitFor(() => started.length === 3, 'the third job to take the freed slot');
    for (const g of gates) g.open();
    await waitFor(async () => (await jobs.list({ kind: 't.slow', statuses: ['done'] })).length === 3, 'all three to end');
    expect(max).toBe(2);
  });

  it('a store that fails to claim does not stop the loop: it tries again at the next poll and logs it', async () => {
    let failures = 1;
    const flaky: JobUnit = {
      transaction: (fn) => store.transaction(fn),
      jobs: new Proxy(store.jobs, {
        get(target, prop, receiver) {
          if (prop === 'claim' && failures > 0) {
            failures--;
            return async () => {
              throw new Error('connection refused');
            };
          }
          return Reflect.get(target, prop, receiver).bind(target);
        },
      }),
    };
    const logged: string[] = [];
    const log: JobLogger = { info: () => undefined, warn: () => undefined, error: (_o, msg) => void logged.push(msg) };
    await jobs.stop();
    jobs = new JobService(flaky, clock, randomIds, SETTINGS, 'node-a');
    let ran = 0;
    jobs.register('t.job', async () => void ran++);
    await jobs.enqueue('t.job', null);
    jobs.start(log);
    await idle('the loop to idle after the failed claim');
    expect(ran).toBe(0);
    expect(logged).toEqual(['jobs: claim failed; trying again at the next poll']);
    clock.advance(1000);
    await waitFor(() => ran === 1, 'the job at the next poll');
  });

  it('SVC_JOBS_ENABLED=false: start does nothing, jobs can still be enqueued', async () => {
    await jobs.stop();
    jobs = new JobService(store, clock, randomIds, { ...SETTINGS, enabled: false }, 'node-a');
    let ran = 0;
    jobs.register('t.job', async () => void ran++);
    jobs.start();
    expect(jobs.runner.started).toBe(false);
    await jobs.enqueue('t.job', null);
    clock.advance(10_000);
    await new Promise((r) => setTimeout(r, 5));
    expect(ran).toBe(0);
    expect(await jobs.list({ kind: 't.job', statuses: ['pending'] })).toHaveLength(1);
  });

  it('start twice runs one loop; stop twice is one shutdown', async () => {
    jobs.start();
    jobs.start();
    await idle('the loop to idle');
    expect(clock.pendingSleeps().filter((ms) => ms === SETTINGS.pollIntervalMs)).toHaveLength(1);
    await Promise.all([jobs.stop(), jobs.stop()]);
    expect(clock.waiting).toBe(0);
  });
});
