/** The job store's contract, on embedded SQLite and on the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestControl } from '../../testing/app.js';
import type { JobFence, NewJob } from '../../jobs/types.js';
import type { ControlStore } from './stores.js';

const T0 = '2026-05-01T00:00:00.000Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();

let seq = 0;
const job = (over: Partial<NewJob> = {}): NewJob => ({
  id: `j${++seq}`,
  kind: 'k.a',
  key: null,
  payload: '{"n":1}',
  runAt: T0,
  maxAttempts: 3,
  everySeconds: null,
  createdAt: T0,
  ...over,
});

const fenceOf = (j: { id: string; lockedBy: string | null; attempts: number }): JobFence => ({ id: j.id, lockedBy: j.lockedBy!, attempts: j.attempts });

describe.each(['sqlite', 'postgres'] as const)('job store contract on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  // Each test uses its own kinds, so one database serves the file.
  let n = 0;
  const kind = () => `c${++n}.job`;
  const claim = (kinds: string[], nowS: number, lockedBy = 'node-a', leaseS = 60) =>
    store.jobs.claim({ kinds, now: at(nowS), lockedBy, lockedUntil: at(nowS + leaseS) });

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('enqueue: a job is written pending, with its payload, due time and no attempt yet', async () => {
    const k = kind();
    const r = await store.jobs.insert(job({ kind: k, payload: '{"a":[1,"x"]}', runAt: at(5) }), 'enqueue');
    expect(r.created).toBe(true);
    expect(await store.jobs.find(r.id)).toMatchObject({
      kind: k,
      key: null,
      payload: { a: [1, 'x'] },
      status: 'pending',
      runAt: at(5),
      attempts: 0,
      maxAttempts: 3,
      everySeconds: null,
      rerunRequested: false,
      lockedBy: null,
      lockedUntil: null,
      lastError: null,
      finishedAt: null,
    });
  });

  it('dedup by key: one pending job per kind and key; the earlier due time wins', async () => {
    const k = kind();
    const first = await store.jobs.insert(job({ kind: k, key: 'asset-1', runAt: at(100) }), 'enqueue');
    const later = await store.jobs.insert(job({ kind: k, key: 'asset-1', runAt: at(200), payload: '{"n":2}' }), 'enqueue');
    expect(later).toEqual({ id: first.id, created: false });
    expect(await store.jobs.find(first.id)).toMatchObject({ runAt: at(100), payload: { n: 1 } });
    const sooner = await store.jobs.insert(job({ kind: k, key: 'asset-1', runAt: at(10) }), 'enqueue');
    expect(sooner).toEqual({ id: first.id, created: false });
    expect((await store.jobs.find(first.id))?.runAt).toBe(at(10));
    // Another key, another kind with the same key, and jobs without a key are separate.
    expect((await store.jobs.insert(job({ kind: k, key: 'asset-2' }), 'enqueue')).created).toBe(true);
    expect((await store.jobs.insert(job({ kind: kind(), key: 'asset-1' }), 'enqueue')).created).toBe(true);
    expect((await store.jobs.insert(job({ kind: k }), 'enqueue')).created).toBe(true);
    expect((await store.jobs.insert(job({ kind: k }), 'enqueue')).created).toBe(true);
    expect(await store.jobs.list({ kind: k, limit: 10 })).toHaveLength(4);
  });

  it('dedup by key: enqueued again while running, the job is marked to run once more', async () => {
    const k = kind();
    const first = await store.jobs.insert(job({ kind: k, key: 'x' }), 'enqueue');
    await claim([k], 0);
    expect(await store.jobs.insert(job({ kind: k, key: 'x' }), 'enqueue')).toEqual({ id: first.id, created: false });
    expect(await store.jobs.find(first.id)).toMatchObject({ status: 'running', rerunRequested: true });
  });

  it('dedup by key: an ended job frees its key', async () => {
    const k = kind();
    const first = await store.jobs.insert(job({ kind: k, key: 'x' }), 'enqueue');
    const c = await claim([k], 0);
    await store.jobs.finish(fenceOf(c!), 'done', at(1), null);
    const again = await store.jobs.insert(job({ kind: k, key: 'x' }), 'enqueue');
    expect(again.created).toBe(true);
    expect(again.id).not.toBe(first.id);
  });

  it('schedule: a second schedule of the same kind and key keeps one job and takes the new interval', async () => {
    const k = kind();
    const a = await store.jobs.insert(job({ kind: k, key: k, everySeconds: 60 }), 'schedule');
    const b = await store.jobs.insert(job({ kind: k, key: k, everySeconds: 120, payload: '{"v":2}' }), 'schedule');
    expect(b).toEqual({ id: a.id, created: false });
    expect(await store.jobs.find(a.id)).toMatchObject({ everySeconds: 120, payload: { v: 2 } });
    expect(await store.jobs.list({ kind: k, limit: 10 })).toHaveLength(1);
  });

  it('claim order by run_at: the job due first is claimed first; future ones wait', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k, id: `${k}-late`, runAt: at(30) }), 'enqueue');
    await store.jobs.insert(job({ kind: k, id: `${k}-early`, runAt: at(10) }), 'enqueue');
    await store.jobs.insert(job({ kind: k, id: `${k}-future`, runAt: at(1000) }), 'enqueue');
    expect(await claim([k], 5)).toBeUndefined();
    // (long leases: the claims below must not end before the last one)
    expect((await claim([k], 40, 'node-a', 10_000))?.id).toBe(`${k}-early`);
    expect((await claim([k], 40, 'node-a', 10_000))?.id).toBe(`${k}-late`);
    expect(await claim([k], 40)).toBeUndefined();
    expect((await claim([k], 1000))?.id).toBe(`${k}-future`);
  });

  it('claim: only the kinds asked for (a runner claims the kinds it can run)', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    expect(await claim([kind()], 0)).toBeUndefined();
    expect(await claim([], 0)).toBeUndefined();
    expect((await claim([k], 0))?.kind).toBe(k);
  });

  it('claim: sets the lease and counts the attempt; a held lease is not claimable', async () => {
    const k = kind();
    const { id } = await store.jobs.insert(job({ kind: k }), 'enqueue');
    const c = await claim([k], 0, 'node-a', 60);
    expect(c).toMatchObject({ id, status: 'running', attempts: 1, lockedBy: 'node-a', lockedUntil: at(60) });
    expect(await claim([k], 59, 'node-b')).toBeUndefined();
  });

  it('lease expiry makes a job claimable again; the first claim is fenced out', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    const a = (await claim([k], 0, 'node-a', 60))!;
    const b = (await claim([k], 60, 'node-b', 60))!;
    expect(b).toMatchObject({ id: a.id, attempts: 2, lockedBy: 'node-b', lockedUntil: at(120) });
    expect(b.lastError).toContain('node-a');
    const stale = fenceOf(a);
    expect(await store.jobs.extendLease(stale, at(500), at(61))).toBe(false);
    expect(await store.jobs.retry(stale, at(500), 'late', at(61))).toBe(false);
    expect(await store.jobs.finish(stale, 'done', at(61), null)).toBeUndefined();
    expect(await store.jobs.release(stale, at(61))).toBe(false);
    expect(await store.jobs.find(a.id)).toMatchObject({ status: 'running', lockedBy: 'node-b', attempts: 2 });
  });

  it('extendLease: the holder moves its lease; the job is then not claimable until the new end', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    const a = (await claim([k], 0, 'node-a', 60))!;
    expect(await store.jobs.extendLease(fenceOf(a), at(140), at(40))).toBe(true);
    expect(await claim([k], 100, 'node-b')).toBeUndefined();
    expect((await claim([k], 140, 'node-b'))?.lockedBy).toBe('node-b');
  });

  it('completion: done, with its end time; the lease is cleared and it is never claimed again', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    const c = (await claim([k], 0))!;
    const done = await store.jobs.finish(fenceOf(c), 'done', at(3), null);
    expect(done).toMatchObject({ status: 'done', finishedAt: at(3), lockedBy: null, lockedUntil: null, lastError: null });
    expect(await claim([k], 10_000)).toBeUndefined();
  });

  it('retry: back to pending at the given time with the error kept, not claimable before', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    const c = (await claim([k], 0))!;
    expect(await store.jobs.retry(fenceOf(c), at(30), 'Error: boom', at(1))).toBe(true);
    expect(await store.jobs.find(c.id)).toMatchObject({ status: 'pending', runAt: at(30), attempts: 1, lastError: 'Error: boom', lockedBy: null });
    expect(await claim([k], 29)).toBeUndefined();
    expect(await claim([k], 30)).toMatchObject({ id: c.id, attempts: 2 });
  });

  it('final failure: failed with the last error; a later success keeps the earlier error for the record', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    await store.jobs.insert(job({ kind: k, runAt: at(1) }), 'enqueue');
    const a = (await claim([k], 5))!;
    expect(await store.jobs.finish(fenceOf(a), 'failed', at(6), 'Error: gave up')).toMatchObject({ status: 'failed', lastError: 'Error: gave up', finishedAt: at(6) });
    const b = (await claim([k], 5))!;
    await store.jobs.retry(fenceOf(b), at(5), 'Error: once', at(5));
    const b2 = (await claim([k], 5))!;
    expect(await store.jobs.finish(fenceOf(b2), 'done', at(7), null)).toMatchObject({ status: 'done', lastError: 'Error: once' });
  });

  it('release: a job given back unrun is pending again, claimable at once, the attempt not counted', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    const c = (await claim([k], 0, 'node-a'))!;
    expect(await store.jobs.release(fenceOf(c), at(1))).toBe(true);
    expect(await store.jobs.find(c.id)).toMatchObject({ status: 'pending', attempts: 0, lockedBy: null });
    expect(await claim([k], 1, 'node-b')).toMatchObject({ id: c.id, attempts: 1, lockedBy: 'node-b' });
  });

  it('recurring schedule written atomically: the end and the next occurrence commit together or not at all', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k, key: k, everySeconds: 60 }), 'schedule');
    const c = (await claim([k], 0))!;
    await expect(
      store.transaction(async (tx) => {
        await tx.jobs.finish(fenceOf(c), 'done', at(1), null);
        await tx.jobs.insert(job({ kind: k, key: k, everySeconds: 60, runAt: at(61) }), 'ignore');
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    expect(await store.jobs.list({ kind: k, limit: 10 })).toMatchObject([{ id: c.id, status: 'running' }]);
    await store.transaction(async (tx) => {
      await tx.jobs.finish(fenceOf(c), 'done', at(1), null);
      await tx.jobs.insert(job({ kind: k, key: k, everySeconds: 60, runAt: at(61) }), 'ignore');
    });
    const rows = await store.jobs.list({ kind: k, limit: 10 });
    expect(rows.map((r) => [r.status, r.runAt])).toEqual([
      ['done', at(0)],
      ['pending', at(61)],
    ]);
  });

  it('a next occurrence never doubles a live one ("ignore" keeps the job that stands)', async () => {
    const k = kind();
    const live = await store.jobs.insert(job({ kind: k, key: k, everySeconds: 60 }), 'schedule');
    expect(await store.jobs.insert(job({ kind: k, key: k, everySeconds: 60, runAt: at(999) }), 'ignore')).toEqual({ id: live.id, created: false });
    expect(await store.jobs.list({ kind: k, limit: 10 })).toMatchObject([{ id: live.id, runAt: T0 }]);
  });

  it('claim inside a caller transaction uses that transaction', async () => {
    const k = kind();
    await store.jobs.insert(job({ kind: k }), 'enqueue');
    await expect(
      store.transaction(async (tx) => {
        expect(await tx.jobs.claim({ kinds: [k], now: at(0), lockedBy: 'n', lockedUntil: at(60) })).toBeDefined();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await store.jobs.list({ kind: k, limit: 10 })).toMatchObject([{ status: 'pending', attempts: 0 }]);
  });

  it('purge: deletes done jobs ended before one time and failed ones before another; live jobs stay', async () => {
    const k = kind();
    for (let i = 0; i < 4; i++) await store.jobs.insert(job({ kind: k }), 'enqueue');
    const [a, b, c] = [(await claim([k], 0))!, (await claim([k], 0))!, (await claim([k], 0))!];
    await store.jobs.finish(fenceOf(a), 'done', at(10), null);
    await store.jobs.finish(fenceOf(b), 'done', at(100), null);
    await store.jobs.finish(fenceOf(c), 'failed', at(10), 'x');
    expect(await store.jobs.purgeFinished(at(50), at(5))).toBeGreaterThanOrEqual(1);
    const left = await store.jobs.list({ kind: k, limit: 10 });
    expect(left.map((r) => r.status).sort()).toEqual(['done', 'failed', 'pending']);
    expect(left.find((r) => r.status === 'done')?.id).toBe(b.id);
  });
});
