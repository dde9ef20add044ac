/**
 * The store's own checkpoints (checkpointer.ts): started once the write-ahead log passes its size, run with one
 * DuckDB thread, the threads restored after; nothing happens below the size. And DuckDB's threads following
 * the statements in flight (thread-governor.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { Checkpointer, WriteGate } from './checkpointer.js';
import { ThreadGovernor } from './thread-governor.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function store() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ckpt-'));
  dirs.push(dir);
  const file = path.join(dir, 't.duckdb');
  const instance = await DuckDBInstance.create(file, { threads: '2' });
  const c = await instance.connect();
  await c.run("SET checkpoint_threshold = '1GB'");
  await c.run('CREATE TABLE t (i BIGINT, s VARCHAR)');
  await c.run("INSERT INTO t SELECT i, 'row ' || i FROM range(50000) r(i)");
  return { instance, c, wal: `${file}.wal` };
}

const threadsOf = async (c: Awaited<ReturnType<typeof store>>['c']) => Number((await c.runAndReadAll("SELECT current_setting('threads')")).getRows()[0][0]);

describe('checkpointer', () => {
  it('folds the log into the file once it passes the size, with one thread, and restores the threads', async () => {
    const { instance, c, wal } = await store();
    expect(fs.statSync(wal).size).toBeGreaterThan(0);
    const errors: unknown[] = [];
    const seen: number[] = [];
    const governor = new ThreadGovernor(instance, 2);
    const k = new Checkpointer(instance, wal, 1, { checkpoint: async (on) => (await governor.checkpoint(on), void seen.push(governor.threads, await threadsOf(c))) }, new WriteGate(), (e) => errors.push(e), 60_000);
    await k.check();
    expect(seen).toEqual([1, 1, 2, 2]); // one thread during the checkpoint (as set in DuckDB), the two after
    expect(errors).toEqual([]);
    expect(k.done).toBe(1);
    expect(fs.existsSync(wal) ? fs.statSync(wal).size : 0).toBe(0);
    expect(Number((await c.runAndReadAll('SELECT count(*) FROM t')).getRows()[0][0])).toBe(50000);
    await k.stop();
    await governor.stop();
    c.closeSync();
    instance.closeSync();
  });

  it('does nothing while the log is below the size', async () => {
    const { instance, c, wal } = await store();
    const before = fs.statSync(wal).size;
    const k = new Checkpointer(instance, wal, before + 1, new ThreadGovernor(instance, 2), new WriteGate(), () => undefined, 60_000);
    await k.check();
    expect(k.done).toBe(0);
    expect(fs.statSync(wal).size).toBe(before);
    await k.stop();
    c.closeSync();
    instance.closeSync();
  });
});

describe('write gate', () => {
  // An appender's flush is synchronous: one that met a running checkpoint froze the event loop until it ended.
  it('a checkpoint starts once the writers in flight are done, and writers arriving meanwhile wait for it', async () => {
    const gate = new WriteGate();
    const order: string[] = [];
    let finishWriter!: () => void;
    const writer = gate.shared(async () => {
      order.push('writer 1 begins');
      await new Promise<void>((r) => (finishWriter = r));
      order.push('writer 1 ends');
    });
    let finishCheckpoint!: () => void;
    const checkpoint = gate.only(async () => {
      order.push('checkpoint begins');
      await new Promise<void>((r) => (finishCheckpoint = r));
      order.push('checkpoint ends');
    });
    const late = gate.shared(async () => void order.push('writer 2 runs'));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['writer 1 begins']); // the checkpoint waits for writer 1; writer 2 waits for the checkpoint
    finishWriter();
    await writer;
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['writer 1 begins', 'writer 1 ends', 'checkpoint begins']);
    finishCheckpoint();
    await Promise.all([checkpoint, late]);
    expect(order).toEqual(['writer 1 begins', 'writer 1 ends', 'checkpoint begins', 'checkpoint ends', 'writer 2 runs']);
  });

  it('writers do not wait for each other, and a checkpoint with none in flight starts at once', async () => {
    const gate = new WriteGate();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const a = gate.shared(() => held);
    expect(await gate.shared(async () => 'second')).toBe('second');
    release();
    await a;
    expect(await gate.only(async () => 'checkpoint')).toBe('checkpoint');
  });

  it('a failing checkpoint or writer releases the gate', async () => {
    const gate = new WriteGate();
    await expect(gate.only(async () => Promise.reject(new Error('checkpoint failed')))).rejects.toThrow('checkpoint failed');
    await expect(gate.shared(async () => Promise.reject(new Error('commit failed')))).rejects.toThrow('commit failed');
    expect(await gate.only(async () => 1)).toBe(1);
    expect(await gate.shared(async () => 2)).toBe(2);
  });
});

describe('thread governor', () => {
  it('one thread as soon as two statements are in flight, the configured threads again after a quiet period', async () => {
    const { instance, c } = await store();
    const g = new ThreadGovernor(instance, 2, undefined, 60_000); // ticks driven by hand below
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const a = g.busy(() => held);
    await g.busy(async () => undefined); // a second statement while the first is in flight
    await g.applied();
    expect(g.threads).toBe(1);
    expect(await threadsOf(c)).toBe(1);
    release();
    await a;
    const tick = () => (g as unknown as { tick(): void }).tick();
    tick(); // the period that saw two in flight ends: still one
    for (let i = 0; i < 5; i++) tick(); // five quiet periods: still one
    expect(g.threads).toBe(1);
    tick(); // the sixth quiet period in a row: back to two
    await g.applied();
    expect(g.threads).toBe(2);
    expect(await threadsOf(c)).toBe(2);
    await g.stop();
    c.closeSync();
    instance.closeSync();
  });

  it('a single statement at a time keeps every configured thread', async () => {
    const { instance, c } = await store();
    const g = new ThreadGovernor(instance, 2, undefined, 60_000);
    for (let i = 0; i < 5; i++) await g.busy(async () => undefined);
    (g as unknown as { tick(): void }).tick();
    expect(g.threads).toBe(2);
    expect(await threadsOf(c)).toBe(2);
    await g.stop();
    c.closeSync();
    instance.closeSync();
  });
});
