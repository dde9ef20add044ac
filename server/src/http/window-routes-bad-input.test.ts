/**
 * Attacker-style input on the routes that take a time window (docs/api-conventions.md "Time"): huge,
 * negative, fractional and non-numeric numbers in every numeric field, repeated and malformed query
 * parameters, deeply nested and huge bodies. Spec: "A present-but-invalid query parameter (misspelled
 * boolean, non-numeric `limit`, unparseable timestamp) returns 400"; never a 5xx for bad input; errors
 * are `{error: 'invalid_request', message}`; a refused delete deletes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLogs } from '../testing/log-fixtures.js';
import { insertMetric } from '../domains/metrics/test-data.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../testing/app.js';

const NOW = '2024-06-01T12:00:00.000Z';
const NUMBERS = ['99999999999999999999', '1e308', '-1', '4294967296', '9007199254740993', 'abc', '0x10', '1;2'];
const SCOPES = ['traces:read', 'logs:read', 'logs:delete', 'agents:read', 'metrics:read', 'metrics:delete'];

describe('bad input on the window routes: 4xx in our shape, never 5xx, nothing changed', () => {
  let t: TestApp;
  let p: { projectId: string; key: string };
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
    p = await projectWithKey(t, SCOPES);
    await insertLogs(t.ctx.telemetry, [{ projectId: p.projectId, at: '2024-06-01T11:00:00Z', body: 'keep', service: 'api' }]);
    await insertMetric(t, { projectId: p.projectId, name: 'cpu' }, [['2024-06-01T11:00:00Z', 1]]);
  });
  afterAll(async () => t.close());

  const refused = (r: { statusCode: number; body: string; json(): { error: string; message: string } }, what: string) => {
    expect(r.statusCode, `${what}: ${r.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
    expect(r.statusCode, `${what}: ${r.body.slice(0, 200)}`).toBeLessThan(500);
    expect(Object.keys(r.json()).sort(), what).toEqual(expect.arrayContaining(['error', 'message']));
    expect(r.json().message, what).not.toMatch(/call stack|duckdb|SQL|at .*\.js/i);
  };
  const stillThere = async () => {
    const logs = await t.call({ method: 'GET', url: '/api/v1/logs?since=7d', key: p.key });
    expect(logs.json().logs).toHaveLength(1);
    const names = await t.call({ method: 'GET', url: '/api/v1/metrics/names', key: p.key });
    expect(names.json().metrics).toEqual([{ name: 'cpu' }]);
  };

  it('huge, negative, fractional and non-numeric limit / before / after on every window read', async () => {
    const urls = [
      '/traces?limit=', '/services?limit=', '/logs?limit=', '/logs/fields?limit=', '/logs/patterns?limit=', '/agent-runs?limit=', '/agent-sessions?limit=',
      '/agent-events?run_id=0af7651916cd43dd8448eb211c80319c&limit=', '/logs/x/context?before=', '/logs/x/context?after=',
    ];
    for (const u of urls) for (const n of NUMBERS) refused(await t.call({ method: 'GET', url: `/api/v1${u}${encodeURIComponent(n)}`, key: p.key }), `${u}${n}`);
  });

  it('repeated, malformed and huge time parameters are 400', async () => {
    for (const q of ['since=1h&since=2h', 'until=1h&until=1h', 'since[]=1h', 'since=%E0%A4%A', `since=${'9'.repeat(10_000)}d`, `since=${'1'.repeat(100_000)}`, 'since=1h%00'])
      for (const path of ['/traces', '/logs', '/agent-runs', '/services']) refused(await t.call({ method: 'GET', url: `/api/v1${path}?${q}`, key: p.key }), `${path}?${q.slice(0, 40)}`);
    for (const q of ['start_time=1h&start_time=2h', `end_time=${'9'.repeat(5_000)}w`]) refused(await t.call({ method: 'GET', url: `/api/v1/metrics/names?${q}`, key: p.key }), q.slice(0, 40));
  });

  it('huge and wrong-typed numbers in the bodies: horizon, sensitivity, time_range, step, group_by', async () => {
    const bodies: [string, Record<string, unknown>][] = [];
    for (const v of [1e308, -1, 1.5, 9007199254740993, 'x', [], {}, null])
      bodies.push(
        ['/metrics/forecast', { metric_name: 'cpu', horizon: v }],
        ['/metrics/forecast', { metric_name: 'cpu', sensitivity: v }],
        ['/metrics/aggregate', { metric_name: 'cpu', time_range: { start: v } }],
        ['/metrics/histogram', { metric_name: 'cpu', step: v }],
        ['/logs/aggregate', { since: v }],
        // an empty group_by is valid (one total); every other value here is not
        ...(Array.isArray(v) ? [] : [['/logs/aggregate', { group_by: v }] as [string, Record<string, unknown>]]),
      );
    for (const [url, payload] of bodies) refused(await t.call({ method: 'POST', url: `/api/v1${url}`, key: p.key, payload }), `${url} ${JSON.stringify(payload)}`);
  });

  it('deeply nested JSON bodies are 400', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const url of ['/metrics/aggregate', '/metrics/histogram', '/metrics/forecast', '/logs/aggregate'])
      refused(await t.call({ method: 'POST', url: `/api/v1${url}`, key: p.key, payload: `{"time_range":${deep}}`, headers: { 'content-type': 'application/json' } }), url);
  });

  it('refused deletes delete nothing: bad windows on DELETE /logs, 20 concurrent identical bad requests', async () => {
    const bad = ['since=99999999999d&until=1h&service=api', 'since=1h&until=2h&service=api', 'since=0001-01-01T00:00:00Z&until=1h&service=api', 'since=-1h&until=1h&q=keep'];
    for (const q of bad) refused(await t.call({ method: 'DELETE', url: `/api/v1/logs?${q}`, key: p.key }), q);
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.call({ method: 'DELETE', url: '/api/v1/logs?since=1x&until=1h&service=api', key: p.key })));
    for (const r of answers) refused(r, 'concurrent');
    await stillThere();
  });
});
