/**
 * POST /metrics/aggregate over histogram and summary metrics. A histogram sample is a count of
 * observations, their sum and a count per bucket: the aggregate is computed from those, never from
 * one mean per export, and the answer says which values are estimates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { bucketQuantile } from './histogram-aggregate.js';
import { insertHistograms, insertMetric, insertSeries } from './test-data.js';

const NOW = '2024-06-01T12:00:00.000Z';
const window = { start: '2024-06-01T00:00:00.000Z', end: NOW };

describe('aggregate over a histogram metric', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  const aggregate = (key: string, body: object) => t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key, payload: body });
  const fresh = () => projectWithKey(t, ['metrics:read']);

  /** Two delta exports in one hour: 3 observations (sum 30) and 1 observation (sum 500). */
  async function latency(projectId: string, labels: Record<string, string> = {}) {
    const seriesId = await insertSeries(t, { projectId, name: 'lat', type: 'histogram', labels });
    await insertHistograms(t, { projectId, name: 'lat', seriesId }, [
      { at: '2024-06-01T01:10:00Z', temporality: 'delta', bounds: [10, 100], counts: [2, 1, 0], sum: 30 },
      { at: '2024-06-01T01:20:00Z', temporality: 'delta', bounds: [10, 100], counts: [0, 0, 1], sum: 500 },
    ]);
  }

  const points = async (key: string, aggregation: string) => {
    const r = await aggregate(key, { metric_name: 'lat', aggregation, time_range: window });
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };

  it('count is the number of observations, not the number of exports; sum and avg come from the samples\' sums (exact)', async () => {
    const { projectId, key } = await fresh();
    await latency(projectId);
    const count = await points(key, 'count');
    expect(count.series).toEqual([{ labels: {}, points: [{ timestamp: '2024-06-01T01:00:00.000Z', value: 4 }] }]);
    expect(count).toMatchObject({ metric_name: 'lat', aggregation: 'count', type: 'histogram', estimated: false });
    expect((await points(key, 'sum')).series[0].points[0].value).toBe(530);
    expect((await points(key, 'avg')).series[0].points[0].value).toBe(132.5);
  });

  it('p50, p95 and p99 are estimated within the buckets, and the answer says estimated: true', async () => {
    const { projectId, key } = await fresh();
    await latency(projectId);
    // Buckets (-inf,10]: 2, (10,100]: 1, (100,+inf): 1. Rank 0.5*4 = 2 ends the first bucket, read from 0 to 10.
    const p50 = await points(key, 'p50');
    expect(p50.estimated).toBe(true);
    expect(p50.series[0].points[0].value).toBe(10);
    // Rank 3.8 falls in the +Inf bucket: the largest finite bound.
    expect((await points(key, 'p95')).series[0].points[0].value).toBe(100);
    expect((await points(key, 'p99')).estimated).toBe(true);
  });

  it('cumulative histograms are read as increases (count and sum differenced between samples)', async () => {
    const { projectId, key } = await fresh();
    const seriesId = await insertSeries(t, { projectId, name: 'lat', type: 'histogram' });
    await insertHistograms(t, { projectId, name: 'lat', seriesId }, [
      { at: '2024-06-01T01:00:00Z', startAt: '2024-06-01T00:30:00Z', temporality: 'cumulative', bounds: [10], counts: [1, 1], sum: 12 },
      { at: '2024-06-01T02:00:00Z', startAt: '2024-06-01T00:30:00Z', temporality: 'cumulative', bounds: [10], counts: [4, 1], sum: 27 },
    ]);
    const count = await points(key, 'count');
    expect(count.series[0].points).toEqual([
      { timestamp: '2024-06-01T01:00:00.000Z', value: 2 },
      { timestamp: '2024-06-01T02:00:00.000Z', value: 3 },
    ]);
    expect((await points(key, 'sum')).series[0].points.map((p: { value: number }) => p.value)).toEqual([12, 15]);
    expect((await points(key, 'avg')).series[0].points.map((p: { value: number }) => p.value)).toEqual([6, 5]);
  });

  it('a bucket whose samples did not all carry a sum has no sum or avg point (an unknown sum is never a number); count stays', async () => {
    const { projectId, key } = await fresh();
    const seriesId = await insertSeries(t, { projectId, name: 'lat', type: 'histogram' });
    await insertHistograms(t, { projectId, name: 'lat', seriesId }, [
      { at: '2024-06-01T01:10:00Z', temporality: 'delta', bounds: [10], counts: [1, 0], sum: 3 },
      { at: '2024-06-01T01:20:00Z', temporality: 'delta', bounds: [10], counts: [1, 0], sum: null },
      { at: '2024-06-01T02:10:00Z', temporality: 'delta', bounds: [10], counts: [2, 0], sum: 8 },
    ]);
    expect((await points(key, 'sum')).series[0].points).toEqual([{ timestamp: '2024-06-01T02:00:00.000Z', value: 8 }]);
    expect((await points(key, 'avg')).series[0].points).toEqual([{ timestamp: '2024-06-01T02:00:00.000Z', value: 4 }]);
    expect((await points(key, 'count')).series[0].points.map((p: { value: number }) => p.value)).toEqual([2, 2]);
  });

  it('group_by and filters select histogram series like any other', async () => {
    const { projectId, key } = await fresh();
    await latency(projectId, { route: '/a' });
    await latency(projectId, { route: '/b' });
    const r = await aggregate(key, { metric_name: 'lat', aggregation: 'count', time_range: window, group_by: ['route'] });
    expect(r.json().series.map((s: { labels: object; points: { value: number }[] }) => [s.labels, s.points[0].value])).toEqual([
      [{ route: '/a' }, 4],
      [{ route: '/b' }, 4],
    ]);
    const one = await aggregate(key, { metric_name: 'lat', aggregation: 'count', time_range: window, filters: [{ key: 'route', values: ['/b'] }] });
    expect(one.json().series).toEqual([{ labels: {}, points: [{ timestamp: '2024-06-01T01:00:00.000Z', value: 4 }] }]);
  });

  it.each(['min', 'max', 'stddev', 'variance'])('"%s" cannot be computed from count, sum and buckets: 400 pointing to /metrics/histogram', async (aggregation) => {
    const { projectId, key } = await fresh();
    await latency(projectId);
    const r = await aggregate(key, { metric_name: 'lat', aggregation, time_range: window });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({
      error: 'invalid_request',
      details: { metric_type: 'histogram', aggregation, histogram_path: '/api/v1/metrics/histogram', exact: ['count', 'sum', 'avg'] },
    });
    expect(r.json().message).toContain('/api/v1/metrics/histogram');
  });

  it('more than 50 histogram series is 429, never truncated', async () => {
    const { projectId, key } = await fresh();
    for (let i = 0; i < 51; i++) {
      const seriesId = await insertSeries(t, { projectId, name: 'lat', type: 'histogram', labels: { i: String(i) } });
      await insertHistograms(t, { projectId, name: 'lat', seriesId }, [{ at: '2024-06-01T01:00:00Z', temporality: 'delta', bounds: [1], counts: [1, 0] }]);
    }
    const r = await aggregate(key, { metric_name: 'lat', aggregation: 'count', time_range: window, group_by: ['i'] });
    expect(r.statusCode).toBe(429);
  });

  it('summaries are stored as one mean per sample: count and sum are refused with 400, avg reads the means', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'rpc', type: 'summary' }, [
      ['2024-06-01T01:00:00Z', 4],
      ['2024-06-01T01:30:00Z', 6],
    ]);
    for (const aggregation of ['count', 'sum']) {
      const r = await aggregate(key, { metric_name: 'rpc', aggregation, time_range: window });
      expect(r.statusCode).toBe(400);
      expect(r.json().details).toEqual({ metric_type: 'summary', aggregation });
    }
    const avg = await aggregate(key, { metric_name: 'rpc', aggregation: 'avg', time_range: window });
    expect(avg.json()).toMatchObject({ type: 'summary', estimated: false, series: [{ points: [{ value: 5 }] }] });
  });

  it('gauges keep exact aggregations (estimated: false) and report their type', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'cpu', type: 'gauge' }, [['2024-06-01T01:00:00Z', 1], ['2024-06-01T01:30:00Z', 3]]);
    const r = await aggregate(key, { metric_name: 'cpu', aggregation: 'p50', time_range: window });
    expect(r.json()).toMatchObject({ type: 'gauge', estimated: false, series: [{ points: [{ value: 2 }] }] });
  });
});

describe('bucketQuantile (estimate within the bucket that holds the rank)', () => {
  const finite = (entries: [number, number][]) => new Map(entries.map(([b, c]) => [b, BigInt(c)]));
  it('interpolates linearly inside the bucket', () => {
    expect(bucketQuantile(0.5, finite([[10, 0], [20, 4]]), 0n)).toBe(15);
    expect(bucketQuantile(0.25, finite([[10, 0], [20, 4]]), 0n)).toBe(12.5);
  });
  it('the lowest bucket starts at 0 when its bound is positive, and is its bound otherwise', () => {
    expect(bucketQuantile(0.5, finite([[8, 2]]), 0n)).toBe(4);
    expect(bucketQuantile(0.5, finite([[-1, 2]]), 0n)).toBe(-1);
  });
  it('a rank in the +Inf bucket gives the largest finite bound; no bound at all gives no estimate', () => {
    expect(bucketQuantile(0.99, finite([[5, 1]]), 9n)).toBe(5);
    expect(bucketQuantile(0.5, new Map(), 3n)).toBeUndefined();
  });
  it('no observations: no estimate (never 0)', () => {
    expect(bucketQuantile(0.5, finite([[5, 0]]), 0n)).toBeUndefined();
  });
});
