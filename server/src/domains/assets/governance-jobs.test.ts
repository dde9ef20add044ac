/**
 * The recurring governance jobs run on the job runner (context.ts `registerGovernanceJobs`): the
 * review-window sweep raises UNREVIEWED_ASSET and UNOWNED_ASSET once the window has passed, discovery
 * maps a key the ingest-time discovery missed, and the killed-credential check clears the signal of a
 * revoked key. Time is the test clock; `runDue` runs what is due.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { traceId } from '../../ingest/otlp/traces-fixtures.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';

const clock = fixedClock('2026-03-01T00:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(async () => t?.close());

it('the review-window sweep runs as a recurring job: past the window, an undecided and unowned asset gets its two signals', async () => {
  const p = await projectWithKey(t, ['agents:read', 'agents:write']);
  const declared = await t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'Bot', observation_keys: ['svc/bot'] } });
  expect(declared.statusCode, declared.body).toBe(201);
  const kinds = async () =>
    (await t.call({ method: 'GET', url: '/api/v1/review-signals', key: p.key })).json().review_signals.map((s: { kind: string }) => s.kind).sort();
  await t.ctx.jobs.runDue();
  expect(await kinds()).toEqual([]);
  clock.advance(8 * 86_400_000); // past the default 7-day window, and past the hourly schedule
  await t.ctx.jobs.runDue();
  expect(await kinds()).toEqual(['REVIEW_SIGNAL_KIND_UNOWNED_ASSET', 'REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET']);
});

it('discovery runs as a recurring job: a sighted key with no asset (the ingest-time discovery missed it) becomes a shadow asset', async () => {
  const p = await projectWithKey(t, ['agents:read', 'ingest:write']);
  // Sightings written without the ingest route's hook, as after a crash between commit and discovery.
  await t.ctx.spansWriter.write(p.projectId, {
    spans: [],
    events: [],
    sightings: [{ traceId: traceId(), observationKey: 'svc/missed', environment: null }],
    credential: { source: 'api_key', apiKeyId: p.keyId },
    ingestedAtUs: clock.now().getTime() * 1000,
  });
  const names = async () => (await t.call({ method: 'GET', url: '/api/v1/assets', key: p.key })).json().assets.map((a: { name: string }) => a.name);
  expect(await names()).toEqual([]);
  clock.advance(301_000);
  await t.ctx.jobs.runDue();
  expect(await names()).toEqual(['svc/missed']);
});
