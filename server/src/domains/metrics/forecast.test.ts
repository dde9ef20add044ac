/** POST /metrics/forecast over HTTP (spec 1, "Forecast body", "Forecast response"; project scope). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { insertMetric, insertTombstone, type PointSpec } from './test-data.js';

const HOUR = 3_600_000;
const NOW = '2026-06-08T00:00:00.000Z';

describe('metric forecast', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  /** Hourly points of a daily sine for `days` days before NOW, in environment `env`. */
  async function seed(projectId: string, name: string, days: number, env = 'prod') {
    const end = Date.parse(NOW);
    const points: PointSpec[] = Array.from({ length: days * 24 }, (_, i) => {
      const ts = end - (i + 1) * HOUR;
      return [ts, 100 + 50 * Math.sin((2 * Math.PI * (ts % 86_400_000)) / 86_400_000)];
    });
    await insertMetric(t, { projectId, name, type: 'gauge', serviceName: 'api', environment: env }, points);
  }

  const forecast = (body: object, key?: string) => t.call({ method: 'POST', url: '/api/v1/metrics/forecast', payload: body, key });

  it('a clean daily season over the default seven days is READY with `horizon` points after the last bucket', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:read']);
    await seed(projectId, 'load', 7);
    const res = await forecast({ metric_name: 'load', interval: '1h', horizon: 6 }, key);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      metric_name: 'load',
      interval: '1h',
      horizon: 6,
      history_points: 168,
      required_history_points: 48,
      missing_buckets: 0,
      status: 'FORECAST_FIT_STATUS_READY',
      band_semantics: 'additive_seasonal_deviation_band',
    });
    expect(body.confidence).toBeGreaterThan(0.5);
    expect(body.forecast).toHaveLength(6);
    expect(body.forecast[0].timestamp).toBe(NOW);
    for (const p of body.forecast) expect(p.lower <= p.expected && p.expected <= p.upper).toBe(true);
    // The sine at midnight is 100; the fit should be close.
    expect(Math.abs(body.forecast[0].expected - 100)).toBeLessThan(5);
  });

  it('horizon defaults to 24', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:read']);
    await seed(projectId, 'load', 7);
    expect((await forecast({ metric_name: 'load' }, key)).json().forecast).toHaveLength(24);
  });

  it('forecast[] is populated only in READY: short history gives INSUFFICIENT_HISTORY and an empty forecast', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:read']);
    await seed(projectId, 'short', 1);
    const body = (await forecast({ metric_name: 'short', interval: '1h' }, key)).json();
    expect(body).toMatchObject({ status: 'FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY', history_points: 24, required_history_points: 48, forecast: [] });
    expect(body.status_reason).toEqual(expect.any(String));
  });

  it('required_history_points is the two-daily-season minimum for the chosen interval', async () => {
    const { key } = await projectWithKey(t, ['metrics:read']);
    const at = async (interval: string) => (await forecast({ metric_name: 'none', interval }, key)).json().required_history_points;
    expect(await at('1h')).toBe(48);
    expect(await at('30m')).toBe(96);
  });

  it('environment filters the history', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:read']);
    await seed(projectId, 'load', 7, 'staging');
    expect((await forecast({ metric_name: 'load', environment: 'prod' }, key)).json().history_points).toBe(0);
    expect((await forecast({ metric_name: 'load', environment: 'staging' }, key)).json().history_points).toBe(168);
  });

  it('project_id is a JSON body field: an organization-level credential must name it', async () => {
    const { projectId } = await projectWithKey(t, ['metrics:read']);
    await seed(projectId, 'load', 7);
    const missing = await forecast({ metric_name: 'load' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toContain('project_id');
    expect((await forecast({ metric_name: 'load', project_id: projectId })).json().history_points).toBe(168);
  });

  it('project_id may also go in the query string, like every other metrics route; body and query naming different projects is 400', async () => {
    const { projectId } = await projectWithKey(t, ['metrics:read']);
    const other = await projectWithKey(t, ['metrics:read']);
    await seed(projectId, 'load', 7);
    const post = (query: string, body: object) => t.call({ method: 'POST', url: `/api/v1/metrics/forecast${query}`, payload: body });
    expect((await post(`?project_id=${projectId}`, { metric_name: 'load' })).json().history_points).toBe(168);
    expect((await post(`?project_id=${projectId}`, { metric_name: 'load', project_id: projectId })).json().history_points).toBe(168);
    const both = await post(`?project_id=${projectId}`, { metric_name: 'load', project_id: other.projectId });
    expect(both.statusCode).toBe(400);
    expect(both.json().message).toContain('different projects');
    expect((await post('?projectid=x', { metric_name: 'load', project_id: projectId })).statusCode).toBe(400);
  });

  it('a project-scoped key naming another project in the body is refused; a foreign project for an org key is 404', async () => {
    const a = await projectWithKey(t, ['metrics:read']);
    const b = await projectWithKey(t, ['metrics:read']);
    expect((await forecast({ metric_name: 'load', project_id: b.projectId }, a.key)).statusCode).toBe(403);
    expect((await forecast({ metric_name: 'load', project_id: a.projectId }, a.key)).statusCode).toBe(200);
    expect((await forecast({ metric_name: 'load', project_id: '00000000-0000-0000-0000-000000000000' })).statusCode).toBe(404);
  });

  it('limits and enumerations: horizon at most 1000, sensitivity 0 to 10, known intervals, no unknown fields', async () => {
    const { key } = await projectWithKey(t, ['metrics:read']);
    for (const body of [
      { metric_name: 'x', horizon: 1001 },
      { metric_name: 'x', horizon: 0 },
      { metric_name: 'x', sensitivity: 11 },
      { metric_name: 'x', sensitivity: -1 },
      { metric_name: 'x', interval: '2h' },
      { metric_name: 'x', colour: 'red' },
      { metric_name: 'x', time_range: { start: 'yesterday' } },
      { metric_name: 'x', time_range: { start: '2026-06-02T00:00:00Z', end: '2026-06-01T00:00:00Z' } },
      { horizon: 3 },
    ]) {
      const res = await forecast(body, key);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    expect((await forecast({ metric_name: 'x', horizon: 1000, sensitivity: 10 }, key)).statusCode).toBe(200);
  });

  it('needs metrics:read', async () => {
    const { key } = await projectWithKey(t, ['projects:read']);
    expect((await forecast({ metric_name: 'x' }, key)).statusCode).toBe(403);
  });

  it('points hidden by a metric deletion are not history', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:read']);
    // Deleted at NOW, then copies of the history arrive (a client retrying): still hidden.
    await insertTombstone(t, projectId, 'gone', NOW);
    await seed(projectId, 'gone', 7);
    expect((await forecast({ metric_name: 'gone' }, key)).json().history_points).toBe(0);
  });
});
