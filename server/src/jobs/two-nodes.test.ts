/**
 * Two runners ("nodes"), each with its own connection pool, against one PostgreSQL database,
 * claiming at the same time over several rounds: no job runs twice and none is skipped; a recurring
 * kind both register runs once per period (docs/several-nodes.md).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomIds } from '../lib/clock.js';
import { openTestControl, TEST_DATABASE_URL } from '../testing/app.js';
import { openControlStore } from '../storage/control/open.js';
import { controlStore, type ControlStore } from '../storage/control/stores.js';
import { ManualClock, systemJobClock } from './clock.js';
import { JobService } from './service.js';
import { DEFAULT_JOB_SETTINGS } from './settings.js';
import { waitFor } from './testing.js';

const ROUNDS = 4;
const JOBS_PER_ROUND = 150;

describe('two runners on one PostgreSQL database', () => {
  let first: ControlStore;
  let second: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl('postgres');
    first = t.store;
    drop = t.drop;
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.db);
    const other = await openControlStore({ databaseUrl: TEST_DATABASE_URL, pgSchema: rows[0].schema });
    second = controlStore(other.db, 'postgres');
  });
  afterAll(async () => {
    await second.close();
    await drop();
  });

  /** Two nodes sharing a run log: job id -> the nodes that ran it. */
  function pair(kind: string, clock: ConstructorParameters<typeof JobService>[1], settings = DEFAULT_JOB_SETTINGS) {
    const ran = new Map<string, string[]>();
    const make = (store: ControlStore, id: string) => {
      const s = new JobService(store, clock, randomIds, settings, id);
      s.register(kind, async ({ job }) => {
        ran.set(job.id, [...(ran.get(job.id) ?? []), id]);
        // Yield, so the other node's claims interleave with this run.
        await new Promise((r) => setImmediate(r));
      });
      return s;
    };
    return { a: make(first, 'node-a'), b: make(second, 'node-b'), ran };
  }

  async function enqueueRound(nodes: JobService[], kind: string, round: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < JOBS_PER_ROUND; i++) ids.push((await nodes[i % 2].enqueue(kind, { round, i })).id);
    return ids;
  }

  function expectEachRanOnce(ran: Map<string, string[]>, ids: string[]) {
    const twice = ids.filter((id) => (ran.get(id)?.length ?? 0) > 1);
    const skipped = ids.filter((id) => !ran.has(id));
    expect({ twice, skipped }).toEqual({ twice: [], skipped: [] });
  }

  it('claiming concurrently (three claimers per node, several rounds): every job runs exactly once', async () => {
    const clock = new ManualClock('2026-05-01T00:00:00.000Z');
    const { a, b, ran } = pair('t.race', clock);
    const all: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ids = await enqueueRound([a, b], 't.race', round);
      all.push(...ids);
      await Promise.all([a.runDue(), a.runDue(), a.runDue(), b.runDue(), b.runDue(), b.runDue()]);
      expectEachRanOnce(ran, ids);
    }
    const rows = await first.jobs.list({ kind: 't.race', limit: 10_000 });
    expect(rows).toHaveLength(ROUNDS * JOBS_PER_ROUND);
    expect(rows.every((r) => r.status === 'done' && r.attempts === 1)).toBe(true);
    const byNode = [...ran.values()].flat();
    expect(byNode.filter((n) => n === 'node-a').length).toBeGreaterThan(0);
    expect(byNode.filter((n) => n === 'node-b').length).toBeGreaterThan(0);
    expect(byNode).toHaveLength(all.length);
  });

  it('the poll loops of both nodes (four jobs at once each, real clock): every job runs exactly once', async () => {
    const { a, b, ran } = pair('t.loops', systemJobClock, { ...DEFAULT_JOB_SETTINGS, pollIntervalMs: 50, concurrency: 4 });
    a.start();
    b.start();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const ids = await enqueueRound([a, b], 't.loops', round);
        await waitFor(() => ids.every((id) => ran.has(id)), `round ${round} to run`, 20_000);
        // Let any double claim surface before checking.
        await waitFor(async () => (await first.jobs.list({ kind: 't.loops', statuses: ['pending', 'running'], limit: 1 })).length === 0, 'the round to settle', 20_000);
        expectEachRanOnce(ran, ids);
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect(a.runner.stats.lost + b.runner.stats.lost).toBe(0);
  });

  it('a recurring kind on both nodes, both poll loops running: one schedule, and each period runs once on one node', async () => {
    const PERIODS = 6;
    const clock = new ManualClock('2026-05-01T00:00:00.000Z');
    const runs: { node: string; at: number }[] = [];
    const make = (store: ControlStore, id: string) => {
      const s = new JobService(store, clock, randomIds, { ...DEFAULT_JOB_SETTINGS, pollIntervalMs: 50, concurrency: 2 }, id);
      s.register(
        't.every',
        async ({ now }) => {
          runs.push({ node: id, at: now().getTime() });
          await new Promise((r) => setImmediate(r));
        },
        { everySeconds: 60 },
      );
      return s;
    };
    const a = make(first, 'node-a');
    const b = make(second, 'node-b');
    const waiting = async () => (await first.jobs.list({ kind: 't.every', statuses: ['pending', 'running'], limit: 10 })).map((r) => r.status);
    /** Moves the clock 1 ms at a time while waiting: a loop that went to sleep just after a move still wakes (at most ~2 s of clock time). */
    const nudgeUntil = async (cond: () => boolean | Promise<boolean>, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!(await cond())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        clock.advance(1);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    a.start();
    b.start();
    try {
      for (let period = 0; period < PERIODS; period++) {
        // Each period: the next occurrence waits, the clock reaches it, both loops wake and claim, one runs it.
        if (period > 0) clock.advance(60_000);
        await nudgeUntil(() => runs.length === period + 1, `period ${period} to run`);
        await nudgeUntil(async () => (await waiting()).join() === 'pending', `period ${period} to end and schedule the next`);
      }
      // Both loops keep polling within the period (the clock moves, the next occurrence is not due): nothing more runs.
      for (let i = 0; i < 5; i++) {
        clock.advance(5_000);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect(runs).toHaveLength(PERIODS);
    // A period apart (plus the nudges): never two runs in one period.
    for (let i = 1; i < PERIODS; i++) expect(runs[i].at - runs[i - 1].at).toBeGreaterThanOrEqual(60_000);
    for (let i = 1; i < PERIODS; i++) expect(runs[i].at - runs[i - 1].at).toBeLessThan(65_000);
    const rows = await first.jobs.list({ kind: 't.every', limit: 100 });
    expect(rows.filter((r) => r.status === 'done').map((r) => r.attempts)).toEqual(Array(PERIODS).fill(1));
    expect(rows.filter((r) => r.status !== 'done').map((r) => r.status)).toEqual(['pending']);
  });

  it('the same keyed job enqueued by both nodes at once is one job', async () => {
    const clock = new ManualClock('2026-05-01T00:00:00.000Z');
    const { a, b } = pair('t.keyed', clock);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).enqueue('t.keyed', null, { key: 'same' })));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
  });
});
