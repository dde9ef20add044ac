/**
 * Restart safety on SQLite and PostgreSQL: a runner that dies mid-job holds a lease that runs out;
 * one stopped gracefully gives it back; a recurring job's schedule is never lost nor doubled.
 * Each "node" has its own clock: a dead node's clock never moves, so it renews nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomIds } from '../lib/clock.js';
import { openTestControl } from '../testing/app.js';
import type { ControlStore } from '../storage/control/stores.js';
import { ManualClock } from './clock.js';
import { JobService } from './service.js';
import { DEFAULT_JOB_SETTINGS, type JobSettings } from './settings.js';
import { gate, waitFor } from './testing.js';

const T0 = '2026-05-01T00:00:00.000Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();

describe.each(['sqlite', 'postgres'] as const)('restart safety on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  const nodes: JobService[] = [];
  const node = (id: string, clock: ManualClock, settings: Partial<JobSettings> = {}) => {
    const s = new JobService(store, clock, randomIds, { ...DEFAULT_JOB_SETTINGS, leaseSeconds: 60, ...settings }, id);
    nodes.push(s);
    return s;
  };

  beforeEach(async () => {
    ({ store, drop } = await openTestControl(dialect));
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop()));
    await drop();
  });

  it('a runner stopped mid-job (lease held): a new runner picks the job up after the lease passes, and the old one records nothing', async () => {
    const stuck = gate();
    const events: string[] = [];
    const a = node('node-a', new ManualClock(T0));
    a.register('t.work', async ({ signal }) => {
      events.push('a started');
      await stuck.promise;
      events.push(signal.aborted ? 'a ended aborted' : 'a ended');
    });
    const { id } = await a.enqueue('t.work', { n: 1 });
    const aPass = a.runDue();
    await waitFor(() => events.length === 1, 'node a to start the job');

    // Node a is now "dead": its clock never moves, so it never renews the lease.
    const bClock = new ManualClock(at(59));
    const b = node('node-b', bClock);
    b.register('t.work', async ({ payload }) => void events.push(`b ran ${JSON.stringify(payload)}`));
    await b.runDue();
    expect(events).toEqual(['a started']);
    bClock.set(at(60));
    await b.runDue();
    expect(events).toEqual(['a started', 'b ran {"n":1}']);
    expect(await b.find(id)).toMatchObject({ status: 'done', attempts: 2, finishedAt: at(60) });

    // The old runner's handler ends late: its outcome is fenced out.
    stuck.open();
    await aPass;
    expect(a.runner.stats.lost).toBe(1);
    expect(await b.find(id)).toMatchObject({ status: 'done', attempts: 2, finishedAt: at(60) });
  });

  it('a runner stopped gracefully past its grace period gives the lease back: the next runner takes the job at once', async () => {
    const stuck = gate();
    let aborted = false;
    const aClock = new ManualClock(T0);
    const a = node('node-a', aClock, { shutdownGraceSeconds: 5 });
    a.register('t.work', async ({ signal }) => {
      signal.addEventListener('abort', () => (aborted = true));
      await stuck.promise;
    });
    const { id } = await a.enqueue('t.work', null);
    a.start();
    await waitFor(async () => (await a.find(id))?.status === 'running', 'node a to claim the job');
    const stopping = a.stop();
    await waitFor(() => aClock.pendingSleeps().includes(5000), 'the shutdown to wait its grace period');
    aClock.advance(5000);
    await stopping;
    expect(aborted).toBe(true);
    expect(await a.find(id)).toMatchObject({ status: 'pending', attempts: 0, lockedBy: null });

    const b = node('node-b', new ManualClock(at(5)));
    let ran = 0;
    b.register('t.work', async () => void ran++);
    await b.runDue();
    expect(ran).toBe(1);
    expect(await b.find(id)).toMatchObject({ status: 'done', attempts: 1 });
    stuck.open();
  });

  it('a runner stopped gracefully waits for its running job to end and records it', async () => {
    const slow = gate();
    const aClock = new ManualClock(T0);
    const a = node('node-a', aClock, { shutdownGraceSeconds: 5 });
    let started = false;
    a.register('t.work', async () => {
      started = true;
      await slow.promise;
    });
    const { id } = await a.enqueue('t.work', null);
    a.start();
    await waitFor(() => started, 'the job to start');
    const stopping = a.stop();
    slow.open();
    await stopping;
    expect(await a.find(id)).toMatchObject({ status: 'done', attempts: 1 });
    expect(a.runner.started).toBe(false);
  });

  it('a completed recurring job is never scheduled twice: not by a late runner, a restart, nor two nodes starting at once', async () => {
    const stuck = gate();
    let aStarted = false;
    const a = node('node-a', new ManualClock(T0));
    a.register(
      't.sweep',
      async () => {
        aStarted = true;
        await stuck.promise;
      },
      { everySeconds: 600 },
    );
    const aPass = a.runDue();
    await waitFor(() => aStarted, 'node a to start the occurrence');

    const bClock = new ManualClock(at(60));
    const b = node('node-b', bClock);
    let bRuns = 0;
    b.register('t.sweep', async () => void bRuns++, { everySeconds: 600 });
    await b.runDue();
    expect(bRuns).toBe(1);
    stuck.open();
    await aPass;

    const live = () => store.jobs.list({ kind: 't.sweep', statuses: ['pending', 'running'], limit: 10 });
    expect(await live()).toMatchObject([{ runAt: at(660), everySeconds: 600 }]);

    // Restarts: new runners register the kind and write its schedule again, two at the same moment.
    const c = node('node-c', new ManualClock(at(100)));
    const d = node('node-d', new ManualClock(at(100)));
    for (const n of [c, d]) n.register('t.sweep', async () => undefined, { everySeconds: 600 });
    await Promise.all([c.runner.writeSchedules(), d.runner.writeSchedules()]);
    expect(await live()).toHaveLength(1);

    // And the occurrence runs once, on whichever node claims it first.
    bClock.set(at(660));
    await Promise.all([b.runDue(), new JobService(store, new ManualClock(at(660)), randomIds, DEFAULT_JOB_SETTINGS, 'node-e').runDue()]);
    expect(bRuns).toBe(2);
    const rows = await store.jobs.list({ kind: 't.sweep', limit: 10 });
    expect(rows.map((r) => r.status)).toEqual(['done', 'done', 'pending']);
    expect(rows[2].runAt).toBe(at(1260));
  });

  it('a job whose runner died on its last allowed attempt is failed when its lease runs out, not run again', async () => {
    const stuck = gate();
    let runs = 0;
    const a = node('node-a', new ManualClock(T0));
    a.register(
      't.poison',
      async () => {
        runs++;
        await stuck.promise;
      },
      { maxAttempts: 1 },
    );
    const { id } = await a.enqueue('t.poison', null);
    void a.runDue();
    await waitFor(() => runs === 1, 'node a to start the job');
    const b = node('node-b', new ManualClock(at(61)));
    b.register('t.poison', async () => void runs++, { maxAttempts: 1 });
    await b.runDue();
    expect(runs).toBe(1);
    const j = await b.find(id);
    expect(j).toMatchObject({ status: 'failed', attempts: 2 });
    expect(j!.lastError).toContain('the lease of node-a');
    stuck.open();
  });
});
