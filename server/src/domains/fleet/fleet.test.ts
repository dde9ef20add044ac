/**
 * `GET /fleet`: every agent of the project with its last 24 hours of runs, its active review signals and
 * the containments holding it; cursor paging with a server cap of 200; run health unavailable (never 0)
 * when the telemetry store cannot be read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;

async function project() {
  const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'agents:write']);
  const get = (q = '') => t.call({ method: 'GET', url: `/api/v1/fleet${q ? `?${q}` : ''}`, key: p.key });
  const run = (agent: string, status: string | undefined, agoMs = 60_000) =>
    postTraces(
      t,
      traceRequest({ 'service.name': 'svc' }, [
        span({
          traceId: traceId(),
          startMs: Date.now() - agoMs,
          attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agent, ...(status ? { 'svc.agent.run.status': status } : {}) },
        }),
      ]),
      { key: p.key },
    );
  return { ...p, get, run };
}

describe('GET /fleet', () => {
  it('one entry per agent: 24-hour runs by stated status (older runs left out), active signals by severity, open containments', async () => {
    const p = await project();
    const declared = await t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'Weather', observation_keys: ['svc/weather'] } });
    expect(declared.statusCode, declared.body).toBe(201);
    for (const s of ['completed', 'completed', 'failed', undefined]) expect((await p.run('weather', s)).statusCode).toBe(200);
    expect((await p.run('weather', 'completed', 25 * 3_600_000)).statusCode).toBe(200); // older than 24 h
    expect((await p.run('shadowy', 'completed')).statusCode).toBe(200);
    await t.ctx.assets.settled();
    const q = await t.call({ method: 'POST', url: `/api/v1/quarantines?project_id=${p.projectId}`, payload: { observation_key: 'svc/weather', reason: 'x' } });
    expect(q.statusCode, q.body).toBe(201);

    const res = await p.get();
    expect(res.statusCode, res.body).toBe(200);
    const byName = Object.fromEntries(res.json().agents.map((a: Obj) => [a.name, a]));
    expect(byName.Weather).toMatchObject({
      asset_id: declared.json().id,
      shadow: false,
      observation_keys: ['svc/weather'],
      runs_24h: { runs: 4, by_status: { completed: 2, failed: 1 } },
      open_signals: { total: 0, by_severity: {} },
      containments: [{ quarantine_id: q.json().id, status: 'pending', action: 'freeze_writes' }],
    });
    expect(byName.Weather.runs_24h.last_run_at).toMatch(/Z$/);
    expect(byName['svc/shadowy']).toMatchObject({ shadow: true, runs_24h: { runs: 1 }, open_signals: { total: 1, by_severity: { REVIEW_SIGNAL_SEVERITY_HIGH: 1 } }, containments: [] });
  });

  it('an agent with no run in 24 hours has runs 0 (measured); when the telemetry store cannot be read, runs_24h is absent with runs_24h_unavailable', async () => {
    const p = await project();
    await t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'Idle', observation_keys: ['svc/idle'] } });
    expect((await p.get()).json().agents[0]).toMatchObject({ runs_24h: { runs: 0, by_status: {} } });
    // The telemetry store fails: the fleet still answers, and says the runs could not be read.
    const fleet = t.ctx.fleet as unknown as { runs: unknown };
    const real = fleet.runs;
    fleet.runs = { runHealth: async () => Promise.reject(new Error('telemetry store unreadable')) };
    try {
      const a = (await p.get()).json().agents[0];
      expect(a.runs_24h_unavailable).toBe('telemetry_unreadable');
      expect(a).not.toHaveProperty('runs_24h');
    } finally {
      fleet.runs = real;
    }
  });

  it('cursor paging (limit default 100, at most 200: the server cap); bad limits, cursors and an environment parameter are 400; another project is 403/404', async () => {
    const p = await project();
    for (let i = 0; i < 3; i++) await t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: `a${i}`, observation_keys: [`k${i}`] } });
    const p1 = (await p.get('limit=2')).json();
    const p2 = (await p.get(`limit=2&cursor=${p1.next_cursor}`)).json();
    expect([...p1.agents, ...p2.agents].map((a: Obj) => a.name).sort()).toEqual(['a0', 'a1', 'a2']);
    expect(p2.next_cursor).toBeNull();
    for (const bad of ['limit=0', 'limit=201', 'limit=abc', 'cursor=%%', 'environment=prod', 'limit=1&limit=2']) expect((await p.get(bad)).statusCode, bad).toBe(400);
    const other = await project();
    expect((await other.get(`project_id=${p.projectId}`)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: '/api/v1/fleet?project_id=no-such-project' })).statusCode).toBe(404);
    const noScope = await projectWithKey(t, ['ingest:write']);
    expect((await t.call({ method: 'GET', url: '/api/v1/fleet', key: noScope.key })).statusCode).toBe(403);
  });
});
