/**
 * Where an asset was seen (spec 2 "Asset" `environment`: read-only), through HTTP: agent spans sent to
 * /v1/traces with a deployment environment resource attribute, then the asset reads. The sightings live in
 * the telemetry store (DuckDB); the asset records in the control store (SQLite here, PostgreSQL in
 * postgres.test.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { DuckDbAgentRunsQuery } from '../../storage/telemetry/duckdb/agent-runs-query.js';
import { insertSightings, us } from '../../testing/agent-fixtures.js';
import { openTelemetryDb } from '../../storage/telemetry/duckdb/open.js';
import { SpansWriter } from '../../storage/telemetry/duckdb/spans-writer.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { MAX_ENVIRONMENTS_SHOWN } from './schemas.js';

const clock = fixedClock('2026-03-10T00:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(async () => t.close());

async function project() {
  const p = await projectWithKey(t, ['agents:read', 'agents:write', 'ingest:write']);
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.call({ method, url: `/api/v1${url}`, key: p.key, ...(payload ? { payload } : {}) });
  /** One agent run (an invoke_agent span) of `agentId` per resource; each resource's attributes as given. */
  const send = async (...resources: [agentId: string, resource: Record<string, string>][]) => {
    const req = { resourceSpans: resources.flatMap(([agentId, resource]) => (traceRequest({ 'service.name': 'svc', ...resource }, [agentSpan(agentId)]) as { resourceSpans: object[] }).resourceSpans) };
    const res = await postTraces(t, req, { key: p.key });
    expect(res.statusCode).toBe(200);
    await t.ctx.assets.settled();
  };
  const assetOf = async (key: string) => {
    const list = (await call('GET', '/assets')).json().assets as Record<string, unknown>[];
    return list.find((a) => (a.observation_keys as string[]).includes(key))!;
  };
  return { ...p, call, send, assetOf };
}

const agentSpan = (agentId: string) =>
  span({ traceId: traceId(), name: `invoke_agent ${agentId}`, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': agentId, 'gen_ai.agent.name': agentId } });
const seen = (a: Record<string, unknown>) => ({ environment: a.environment, environments: a.environments, environments_truncated: a.environments_truncated });
/** Past the writer's refresh window (a minute): a sighting's environment is written again with its time. */
const tick = (ms = 120_000) => clock.set(new Date(clock.now().getTime() + ms).toISOString());

describe('asset environment: where it was seen', () => {
  it('a key seen in two environments names both, most recently seen first; `environment` is the latest sighting\'s; every asset read says the same', async () => {
    const p = await project();
    await p.send(['bot-two', { 'deployment.environment.name': 'staging' }]);
    tick();
    // The older attribute name counts too (deployment.environment.name wins when both are sent).
    await p.send(['bot-two', { 'deployment.environment': 'prod' }]);
    const a = await p.assetOf('bot-two');
    expect(a).toMatchObject({ shadow: true, environment: 'prod', environments: ['prod', 'staging'], environments_truncated: false });
    tick();
    await p.send(['bot-two', { 'deployment.environment.name': 'staging', 'deployment.environment': 'ignored' }]);
    const again = (await p.call('GET', `/assets/${a.id}`)).json();
    expect(seen(again)).toEqual({ environment: 'staging', environments: ['staging', 'prod'], environments_truncated: false });
    // A write's response, the list and the versions (where it is seen now) agree.
    const reviewed = (await p.call('POST', `/assets/${a.id}/reviews`, { approval_state: 'APPROVAL_STATE_APPROVED', risk_tier: 'RISK_TIER_LOW', reason: 'ok' })).json();
    expect(seen(reviewed)).toEqual(seen(again));
    expect(seen(await p.assetOf('bot-two'))).toEqual(seen(again));
    const versions = (await p.call('GET', `/assets/${a.id}/versions`)).json().versions as { asset: Record<string, unknown> }[];
    expect(versions.map((v) => seen(v.asset))).toEqual([seen(again), seen(again)]);
    expect(versions.map((v) => v.asset.approval_state)).toEqual(['APPROVAL_STATE_UNREVIEWED', 'APPROVAL_STATE_APPROVED']); // the snapshots are kept
  });

  it('recency is exact to a minute: a new environment shows at once, a repeat within a minute of its last write does not move it forward', async () => {
    const p = await project();
    await p.send(['bot-min', { 'deployment.environment.name': 'staging' }]);
    tick(1000);
    await p.send(['bot-min', { 'deployment.environment.name': 'prod' }]);
    expect((await p.assetOf('bot-min')).environments).toEqual(['prod', 'staging']);
    tick(1000);
    await p.send(['bot-min', { 'deployment.environment.name': 'staging' }]); // staging was written 2 s ago
    expect((await p.assetOf('bot-min')).environments).toEqual(['prod', 'staging']);
    tick(60_000);
    await p.send(['bot-min', { 'deployment.environment.name': 'staging' }]);
    expect((await p.assetOf('bot-min')).environments).toEqual(['staging', 'prod']);
  });

  it('a key whose spans name no environment (absent or "") has environment null and environments []', async () => {
    const p = await project();
    await p.send(['bot-none', {}]);
    tick();
    await p.send(['bot-none', { 'deployment.environment.name': '' }]);
    expect(seen(await p.assetOf('bot-none'))).toEqual({ environment: null, environments: [], environments_truncated: false });
    // A later sighting without one keeps the environments seen before: where it was seen stays true.
    tick();
    await p.send(['bot-none', { 'deployment.environment.name': 'dev' }]);
    tick();
    await p.send(['bot-none', {}]);
    expect(seen(await p.assetOf('bot-none'))).toEqual({ environment: 'dev', environments: ['dev'], environments_truncated: false });
  });

  it('a declared asset takes the environments of all its keys; one whose keys have no sightings has null and []', async () => {
    const p = await project();
    const empty = (await p.call('POST', '/assets', { name: 'quiet', observation_keys: ['never-sent'] })).json();
    expect(seen(empty)).toEqual({ environment: null, environments: [], environments_truncated: false });
    const noKeys = (await p.call('POST', '/assets', { name: 'no keys' })).json();
    expect(seen(noKeys)).toEqual({ environment: null, environments: [], environments_truncated: false });
    const d = (await p.call('POST', '/assets', { name: 'two keys', observation_keys: ['k-eu', 'k-us'] })).json();
    await p.send(['k-eu', { 'deployment.environment.name': 'prod-eu' }], ['k-us', { 'deployment.environment.name': 'prod-us' }]);
    tick();
    await p.send(['k-eu', { 'deployment.environment.name': 'prod-us' }]);
    const got = (await p.call('GET', `/assets/${d.id}`)).json();
    // One request: equal times; prod-us was seen again later (by k-eu).
    expect(seen(got)).toEqual({ environment: 'prod-us', environments: ['prod-us', 'prod-eu'], environments_truncated: false });
    // Another project's sightings of the same keys are not this asset's.
    const q = await project();
    await q.send(['k-eu', { 'deployment.environment.name': 'elsewhere' }]);
    expect((await p.call('GET', `/assets/${d.id}`)).json().environments).toEqual(['prod-us', 'prod-eu']);
  });

  it('sightings recorded without environments (a data file from before they were recorded) leave it absent, never made up', async () => {
    const p = await project();
    const at = us('2026-03-01T00:00:00Z');
    await insertSightings(t, p.projectId, [{ observationKey: 'old-bot', source: 'api_key', apiKeyId: 'k', firstSeenUs: at, lastSeenUs: at, sightingCount: 3 }]);
    await t.ctx.assets.discoverAssets(p.projectId);
    expect(seen(await p.assetOf('old-bot'))).toEqual({ environment: null, environments: [], environments_truncated: false });
  });

  it(`at most ${MAX_ENVIRONMENTS_SHOWN} environments are listed, the most recent, and environments_truncated says so`, async () => {
    const p = await project();
    const names = Array.from({ length: MAX_ENVIRONMENTS_SHOWN + 1 }, (_, i) => `env-${String(i).padStart(3, '0')}`);
    await p.send(...names.map((n): [string, Record<string, string>] => ['many', { 'deployment.environment.name': n }]));
    tick();
    await p.send(['many', { 'deployment.environment.name': 'env-050' }]);
    const a = await p.assetOf('many');
    expect(a.environment).toBe('env-050');
    expect(a.environments).toEqual(['env-050', ...names.slice(0, MAX_ENVIRONMENTS_SHOWN - 1)]);
    expect(a.environments_truncated).toBe(true);
  });

  it('an unreadable telemetry store leaves environment and environments null (unknown, not an empty list); the asset still answers', async () => {
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x', observation_keys: ['bot'] })).json();
    const spy = vi.spyOn(t.ctx.telemetry.agentRuns, 'sightingEnvironments').mockRejectedValue(new Error('telemetry down'));
    try {
      const res = await p.call('GET', `/assets/${a.id}`);
      expect(res.statusCode).toBe(200);
      expect(seen(res.json())).toEqual({ environment: null, environments: null, environments_truncated: false });
      expect(seen((await p.call('GET', '/assets')).json().assets[0])).toEqual({ environment: null, environments: null, environments_truncated: false });
    } finally {
      spy.mockRestore();
    }
  });

  it('environment is read-only: the asset routes still refuse an environment parameter, and nothing changes', async () => {
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x', observation_keys: ['ro'] })).json();
    for (const [method, url, body] of [
      ['GET', `/assets/${a.id}?environment=prod`, undefined],
      ['GET', '/assets?environment=prod', undefined],
      ['POST', '/assets', { name: 'y', environment: 'prod' }],
      ['PUT', `/assets/${a.id}/ownership`, { owner_team: 't', environment: 'prod' }],
      ['PUT', `/assets/${a.id}/ownership`, { owner_team: 't', environments: ['prod'] }],
    ] as const) {
      const res = await p.call(method, url, body);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    expect((await p.call('GET', `/assets/${a.id}`)).json()).toMatchObject({ version: 1, owner_team: null, environment: null, environments: [] });
  });
});

describe('a data file from before environments were recorded', () => {
  it('opening it adds the empty table and keeps its sightings; new sightings record their environments', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'env-upgrade-'));
    try {
      const old = await openTelemetryDb({ dataDir: dir });
      await old.writer.run('DROP TABLE agent_sighting_environments');
      await old.writer.run("INSERT INTO agent_sightings VALUES ('p', 'old-key', 'bearer_token', '', 1, 2, 3)");
      await old.close();
      const db = await openTelemetryDb({ dataDir: dir });
      try {
        const q = new DuckDbAgentRunsQuery(db);
        expect(await q.sightings('p', ['old-key'])).toHaveLength(1);
        expect(await q.sightingEnvironments('p', ['old-key'], 10)).toEqual([]);
        const w = new SpansWriter(db);
        await w.write('p', { spans: [], events: [], sightings: [{ traceId: 't', observationKey: 'old-key', environment: 'prod' }], credential: { source: 'bearer_token', apiKeyId: '' }, ingestedAtUs: 9 });
        await w.stop();
        expect(await q.sightingEnvironments('p', ['old-key'], 10)).toEqual([{ observationKey: 'old-key', environment: 'prod', firstSeenUs: 9, lastSeenUs: 9 }]);
      } finally {
        await db.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
