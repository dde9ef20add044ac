/** The runner's rules (docs/jobs.md) on SQLite and PostgreSQL, with the test clock. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomIds } from '../lib/clock.js';
import { openTestControl } from '../testing/app.js';
import type { ControlStore } from '../storage/control/stores.js';
import { ManualClock } from './clock.js';
import { MAX_ERROR_LENGTH } from './runner.js';
import { JobService } from './service.js';
import { DEFAULT_JOB_SETTINGS, type JobSettings } from './settings.js';
import { gate, waitFor } from './testing.js';

const T0 = '2026-05-01T00:00:00.000Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();

describe.each(['sqlite', 'postgres'] as const)('job runner on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  let clock: ManualClock;
  let jobs: JobService;
  const node = (settings: Partial<JobSettings> = {}, c = clock, id = 'node-a') =>
    new JobService(store, c, randomIds, { ...DEFAULT_JOB_SETTINGS, ...settings }, id);

  beforeEach(async () => {
    ({ store, drop } = await openTestControl(dialect));
    clock = new ManualClock(T0);
    jobs = node();
  });
  afterEach(async () => {
    await jobs.stop();
    await drop();
  });

  it('enqueue refuses a kind nobody registered, a payload that is not JSON or over 64 KiB, and a bad key', async () => {
    jobs.register('t.ok', async () => undefined);
    await expect(jobs.enqueue('t.nobody', {})).rejects.toThrow('is not registered');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(jobs.enqueue('t.ok', circular)).rejects.toThrow('JSON');
    await expect(jobs.enqueue('t.ok', { big: 'x'.repeat(64 * 1024) })).rejects.toThrow('over 65536 bytes');
    await expect(jobs.enqueue('t.ok', {}, { key: '' })).rejects.toThrow('job key');
    await expect(jobs.enqueue('t.ok', {}, { key: 'a\nb' })).rejects.toThrow('job key');
    await expect(jobs.enqueue('t.ok', {}, { runAt: new Date('nope') })).rejects.toThrow('runAt');
    await expect(jobs.enqueue('t.ok', {}, { maxAttempts: 0 })).rejects.toThrow('maxAttempts');
    expect(await store.jobs.list({ kind: 't.ok', limit: 10 })).toEqual([]);
  });

  it('register refuses a malformed kind, a kind registered twice and out-of-range options', () => {
    expect(() => jobs.register('Bad Kind', async () => undefined)).toThrow('lower-case');
    expect(() => jobs.register('jobs.purge', async () => undefined)).toThrow('already registered');
    expect(() => jobs.register('t.x', async () => undefined, { maxAttempts: 0 })).toThrow('maxAttempts');
    expect(() => jobs.register('t.y', async () => undefined, { everySeconds: 0.5 })).toThrow('everySeconds');
  });

  it('due jobs run in run_at order with their payload; future ones wait for their time', async () => {
    const ran: unknown[] = [];
    jobs.register('t.order', async ({ payload }) => void ran.push(payload));
    await jobs.enqueue('t.order', 'second', { runAt: new Date(at(-5)) });
    await jobs.enqueue('t.order', 'first', { runAt: new Date(at(-10)) });
    await jobs.enqueue('t.order', 'later', { runAt: new Date(at(30)) });
    await jobs.runDue();
    expect(ran).toEqual(['first', 'second']);
    clock.advance(29_000);
    await jobs.runDue();
    expect(ran).toHaveLength(2);
    clock.advance(1000);
    await jobs.runDue();
    expect(ran).toEqual(['first', 'second', 'later']);
    expect((await jobs.list({ kind: 't.order' })).map((j) => j.status)).toEqual(['done', 'done', 'done']);
  });

  it('retry with backoff: a failed attempt is due again after 30 s, then 60 s; never before', async () => {
    let calls = 0;
    jobs.register('t.flaky', async () => {
      if (++calls <= 2) throw new Error(`attempt ${calls} failed`);
    });
    const { id } = await jobs.enqueue('t.flaky', null);
    await jobs.runDue();
    expect(await jobs.find(id)).toMatchObject({ status: 'pending', attempts: 1, runAt: at(30), lastError: 'Error: attempt 1 failed' });
    clock.advance(29_999);
    await jobs.runDue();
    expect(calls).toBe(1);
    clock.advance(1);
    await jobs.runDue();
    expect(await jobs.find(id)).toMatchObject({ status: 'pending', attempts: 2, runAt: at(90), lastError: 'Error: attempt 2 failed' });
    clock.set(at(90));
    await jobs.runDue();
    expect(await jobs.find(id)).toMatchObject({ status: 'done', attempts: 3, finishedAt: at(90) });
    expect(calls).toBe(3);
  });

  it('final failure: after the last attempt the job is failed with the last error kept, one line and bounded', async () => {
    let calls = 0;
    jobs.register(
      't.broken',
      async () => {
        calls++;
        throw new Error(`line one\nline two ${'x'.repeat(5000)}`);
      },
      { maxAttempts: 2, backoffBaseSeconds: 1 },
    );
    const { id } = await jobs.enqueue('t.broken', null);
    await jobs.runDue();
    clock.advance(1000);
    await jobs.runDue();
    clock.advance(3_600_000);
    await jobs.runDue();
    const j = (await jobs.find(id))!;
    expect(calls).toBe(2);
    expect(j).toMatchObject({ status: 'failed', attempts: 2, finishedAt: at(1) });
    expect(j.lastError!.length).toBe(MAX_ERROR_LENGTH);
    expect(j.lastError).toMatch(/^Error: line one line two x+…$/);
    expect(jobs.runner.stats).toMatchObject({ retried: 1, failed: 1 });
  });

  it('the configured attempt limit applies to kinds that set none, and enqueue may lower it', async () => {
    const strict = node({ maxAttempts: 1 });
    strict.register('t.fail', async () => {
      throw new Error('no');
    });
    const a = await strict.enqueue('t.fail', null);
    await strict.runDue();
    expect(await strict.find(a.id)).toMatchObject({ status: 'failed', attempts: 1, maxAttempts: 1 });
    jobs.register('t.fail2', async () => {
      throw new Error('no');
    });
    const b = await jobs.enqueue('t.fail2', null, { maxAttempts: 1 });
    await jobs.runDue();
    expect(await jobs.find(b.id)).toMatchObject({ status: 'failed', maxAttempts: 1 });
  });

  it('a handler error never crashes the process: synchronous throws, thrown strings and undefined are failed attempts', async () => {
    jobs.register('t.sync', (() => {
      throw new TypeError('sync');
    }) as never);
    jobs.register('t.string', async () => {
      throw 'a string';
    });
    jobs.register('t.undefined', async () => {
      throw undefined;
    });
    const ids = [(await jobs.enqueue('t.sync', null)).id, (await jobs.enqueue('t.string', null)).id, (await jobs.enqueue('t.undefined', null)).id];
    await expect(jobs.runDue()).resolves.toBe(4); // and the runner's own purge
    const errors = await Promise.all(ids.map(async (id) => (await jobs.find(id))!.lastError));
    expect(errors).toEqual(['TypeError: sync', 'a string', 'non-Error thrown']);
  });

  it('recurring: a kind registered with everySeconds is scheduled once and each end writes the next occurrence', async () => {
    let runs = 0;
    jobs.register('t.sweep', async () => void runs++, { everySeconds: 300 });
    await jobs.runDue();
    expect(runs).toBe(1);
    const rows = await jobs.list({ kind: 't.sweep' });
    expect(rows.map((r) => [r.status, r.runAt, r.everySeconds])).toEqual([
      ['done', at(0), 300],
      ['pending', at(300), 300],
    ]);
    clock.advance(299_000);
    await jobs.runDue();
    expect(runs).toBe(1);
    clock.advance(1000);
    await jobs.runDue();
    expect(runs).toBe(2);
    expect(await jobs.list({ kind: 't.sweep', statuses: ['pending', 'running'] })).toMatchObject([{ runAt: at(600) }]);
  });

  it('recurring: an occurrence that fails for good still writes the next one', async () => {
    jobs.register(
      't.sweep_fails',
      async () => {
        throw new Error('down');
      },
      { everySeconds: 60, maxAttempts: 1 },
    );
    await jobs.runDue();
    expect((await jobs.list({ kind: 't.sweep_fails' })).map((r) => [r.status, r.runAt])).toEqual([
      ['failed', at(0)],
      ['pending', at(60)],
    ]);
  });

  it('schedule: a dynamic schedule per key; scheduling again keeps one and takes the new interval', async () => {
    const seen: unknown[] = [];
    jobs.register('t.per_project', async ({ payload }) => void seen.push(payload));
    const a = await jobs.schedule('t.per_project', 60, { key: 'p1', payload: { project: 'p1' } });
    const b = await jobs.schedule('t.per_project', 120, { key: 'p1', payload: { project: 'p1' } });
    expect(b).toEqual({ id: a.id, created: false });
    await jobs.runDue();
    expect(seen).toEqual([{ project: 'p1' }]);
    expect(await jobs.list({ kind: 't.per_project', statuses: ['pending'] })).toMatchObject([{ runAt: at(120), everySeconds: 120, key: 'p1' }]);
    await expect(jobs.schedule('t.per_project', 0)).rejects.toThrow('everySeconds');
  });

  it('dedup by key: enqueued again while running, the job runs once more after it ends, never alongside', async () => {
    const g = gate();
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    jobs.register('t.discover', async () => {
      runs++;
      maxRunning = Math.max(maxRunning, ++running);
      if (runs === 1) await g.promise;
      running--;
    });
    const first = await jobs.enqueue('t.discover', { key: 'k1' }, { key: 'k1' });
    const pass = jobs.runDue();
    await waitFor(() => runs === 1, 'the first run');
    expect(await jobs.enqueue('t.discover', { key: 'k1' }, { key: 'k1' })).toEqual({ id: first.id, created: false });
    g.open();
    await pass;
    expect(runs).toBe(2);
    expect(maxRunning).toBe(1);
    expect((await jobs.list({ kind: 't.discover' })).map((r) => r.status)).toEqual(['done', 'done']);
  });

  it('enqueue inside a caller transaction: rolled back with it', async () => {
    jobs.register('t.tx', async () => undefined);
    await expect(
      store.transaction(async (tx) => {
        await jobs.enqueue('t.tx', null, { tx });
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    expect(await jobs.list({ kind: 't.tx' })).toEqual([]);
    await store.transaction(async (tx) => void (await jobs.enqueue('t.tx', null, { tx })));
    expect(await jobs.list({ kind: 't.tx' })).toHaveLength(1);
  });

  it('timeout: a run past its kind timeout is aborted and counted as a failed attempt', async () => {
    let signal: AbortSignal | undefined;
    jobs.register(
      't.hangs',
      async (run) => {
        signal = run.signal;
        await new Promise((r) => run.signal.addEventListener('abort', r));
      },
      { timeoutSeconds: 10 },
    );
    const { id } = await jobs.enqueue('t.hangs', null);
    const pass = jobs.runDue();
    await waitFor(() => signal !== undefined, 'the run to start');
    clock.advance(10_000);
    await pass;
    expect(signal!.aborted).toBe(true);
    expect(await jobs.find(id)).toMatchObject({ status: 'pending', attempts: 1, lastError: 'timed out after 10 s', runAt: at(40) });
  });

  it('lease: renewed every third of its length while the handler runs, so no other runner can claim it', async () => {
    const g = gate();
    let started = false;
    jobs.register('t.long', async () => {
      started = true;
      await g.promise;
    });
    const { id } = await jobs.enqueue('t.long', null);
    const pass = jobs.runDue();
    await waitFor(() => started, 'the run to start');
    expect((await jobs.find(id))!.lockedUntil).toBe(at(60));
    clock.advance(20_000);
    // (renewed, and waiting again: the timeout's and the next renewal's sleepers)
    await waitFor(async () => (await jobs.find(id))!.lockedUntil === at(80) && clock.waiting === 2, 'the lease renewal');
    clock.advance(20_000);
    await waitFor(async () => (await jobs.find(id))!.lockedUntil === at(100), 'the second renewal');
    const other = node({}, new ManualClock(at(70)), 'node-b');
    let otherRan = false;
    other.register('t.long', async () => void (otherRan = true));
    await other.runDue();
    expect(otherRan).toBe(false);
    expect(await jobs.find(id)).toMatchObject({ status: 'running', lockedBy: 'node-a', attempts: 1 });
    g.open();
    await pass;
    expect(await jobs.find(id)).toMatchObject({ status: 'done', attempts: 1 });
  });
});
