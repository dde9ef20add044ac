/** The asset writes that race, and where an asset was seen, through HTTP on PostgreSQL (the SQLite runs are in assets.test.ts and environment.test.ts). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { insertSightings, us } from '../../testing/agent-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ dialect: 'postgres' });
});
afterAll(async () => t.close());

describe('assets on PostgreSQL', () => {
  it('concurrent writes to one asset all land, each as its own version', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write']);
    const a = (await t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'x' } })).json();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.call({ method: 'PUT', url: `/api/v1/assets/${a.id}/ownership`, key: p.key, payload: { owner_team: `team-${i}` } })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const versions = (await t.call({ method: 'GET', url: `/api/v1/assets/${a.id}/versions`, key: p.key })).json().versions;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('concurrent identical declarations of one key: one 201, the rest 409', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write']);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'dup', observation_keys: ['same'] } })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it('concurrent declarations adopting one shadow asset: one 200, the rest 409, one asset', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write']);
    const at = us('2026-03-01T00:00:00Z');
    await insertSightings(t, p.projectId, [{ observationKey: 'ghost', source: 'api_key', apiKeyId: 'k', firstSeenUs: at, lastSeenUs: at, sightingCount: 1 }]);
    await t.ctx.assets.discoverAssets(p.projectId);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: `n${i}`, observation_keys: ['ghost', `extra-${i}`] } })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409]);
    const assets = (await t.call({ method: 'GET', url: '/api/v1/assets', key: p.key })).json().assets;
    expect(assets).toHaveLength(1);
    expect(assets[0]).toMatchObject({ origin: 'declared', version: 2 });
    expect(assets[0].observation_keys).toHaveLength(2);
  });

  it('environment: a discovered asset names the environments its spans were seen in; a declared one without sightings has null and []', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write', 'ingest:write']);
    const run = (env: string) => traceRequest({ 'service.name': 'svc', 'deployment.environment.name': env }, [span({ traceId: traceId(), attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'pg-bot' } })]);
    expect((await postTraces(t, run('staging'), { key: p.key })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 5)); // a later ingest time
    expect((await postTraces(t, run('prod'), { key: p.key })).statusCode).toBe(200);
    await t.ctx.assets.settled();
    const declared = (await t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'quiet', observation_keys: ['none'] } })).json();
    expect(declared).toMatchObject({ environment: null, environments: [] });
    const assets = (await t.call({ method: 'GET', url: '/api/v1/assets?shadow=true', key: p.key })).json().assets;
    expect(assets).toHaveLength(1);
    expect(assets[0]).toMatchObject({ observation_keys: ['pg-bot'], environment: 'prod', environments: ['prod', 'staging'], environments_truncated: false });
  });
});
