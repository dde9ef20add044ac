/** The app's `jobs` member: other services register and enqueue through it; closing the app stops the loop. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../testing/app.js';
import { PURGE_KIND } from './service.js';
import { waitFor } from './testing.js';

describe('ctx.jobs in the app', () => {
  const clock = fixedClock('2026-05-01T00:00:00.000Z');
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock, env: { SVC_JOBS_POLL_INTERVAL_MS: '1000' } });
  });
  afterAll(async () => t.close());

  it('a service registers a kind and enqueues work; the loop started as main.ts starts it runs it on the app clock', async () => {
    const seen: unknown[] = [];
    t.ctx.jobs.register('t.feature', async ({ payload, now }) => void seen.push([payload, now().toISOString()]));
    await t.ctx.jobs.enqueue('t.feature', { asset: 'a1' }, { runAt: new Date('2026-05-01T00:00:03.000Z') });
    t.ctx.jobs.start();
    // The runner's own purge is scheduled and runs at once.
    await waitFor(async () => (await t.ctx.jobs.list({ kind: PURGE_KIND, statuses: ['done'] })).length === 1, 'the purge job');
    expect(seen).toEqual([]);
    clock.advance(3000);
    await waitFor(() => seen.length === 1, 'the feature job');
    expect(seen).toEqual([[{ asset: 'a1' }, '2026-05-01T00:00:03.000Z']]);
  });

  it('the purge deletes done jobs after 7 days and failed ones after 30, hourly', async () => {
    t.ctx.jobs.register('t.fails', async () => {
      throw new Error('no');
    }, { maxAttempts: 1 });
    const done = await t.ctx.jobs.enqueue('t.feature', { n: 2 });
    const failed = await t.ctx.jobs.enqueue('t.fails', null);
    await waitFor(async () => (await t.ctx.jobs.find(failed.id))?.status === 'failed' && (await t.ctx.jobs.find(done.id))?.status === 'done', 'both to end');
    clock.advance(7 * 86_400_000 + 3_600_000);
    await waitFor(async () => (await t.ctx.jobs.find(done.id)) === undefined, 'the done job to be purged');
    expect((await t.ctx.jobs.find(failed.id))?.status).toBe('failed');
    clock.advance(23 * 86_400_000);
    await waitFor(async () => (await t.ctx.jobs.find(failed.id)) === undefined, 'the failed job to be purged');
  });

  it('closing the app stops the loop', async () => {
    expect(t.ctx.jobs.runner.started).toBe(true);
    await t.app.close();
    expect(t.ctx.jobs.runner.started).toBe(false);
  });
});
