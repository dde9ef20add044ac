/**
 * POST /metrics/aggregate over cumulative counters (metric_points.start_ts set): each sample is read as its
 * increase over the previous sample of its series and start time (rules in service.ts, "Counters").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { insertMetric, insertTombstone, toMs } from './test-data.js';

const NOW = '2024-06-01T12:00:00.000Z';
const DAY_START = '2024-06-01T00:00:00.000Z';
const H = (hhmm: string) => `2024-06-01T${hhmm}:00Z`;
const UNKNOWN = -1;

describe('metrics aggregate: cumulative counters read as increases', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  const fresh = () => projectWithKey(t, ['metrics:read']);
  const window = { start: DAY_START, end: NOW };
  type Series = { labels: Record<string, string>; points: { timestamp: string; value: number }[] };
  async function query(key: string, body: object): Promise<Series[]> {
    const r = await t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key, payload: { time_range: window, ...body } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().series;
  }
  /** The points of the single series as [bucket HH:MM, value]. */
  async function points(key: string, body: object): Promise<[string, number][]> {
    const series = await query(key, body);
    if (series.length === 0) return [];
    expect(series).toHaveLength(1);
    return series[0].points.map((p) => [p.timestamp.slice(11, 16), p.value]);
  }

  it('a counter exported twice with the same total (forceFlush, then shutdown) sums to the total once', async () => {
    const { projectId, key } = await fresh();
    const start = '2024-06-01T05:00:00.000Z';
    await insertMetric(t, { projectId, name: 'requests', type: 'counter', labels: { route: '/pay' } }, [
      ['2024-06-01T05:00:01.000Z', 3, start],
      ['2024-06-01T05:00:01.020Z', 3, start],
    ]);
    await insertMetric(t, { projectId, name: 'requests', type: 'counter', labels: { route: '/cart' } }, [
      ['2024-06-01T05:00:01.000Z', 4, start],
      ['2024-06-01T05:00:01.020Z', 4, start],
    ]);
    expect(await points(key, { metric_name: 'requests', aggregation: 'sum' })).toEqual([['05:00', 7]]);
    const byRoute = await query(key, { metric_name: 'requests', aggregation: 'sum', step: '1m', group_by: ['route'], time_range: { start: H('04:55'), end: H('05:05') } });
    expect(byRoute.map((s) => [s.labels.route, s.points.reduce((a, p) => a + p.value, 0)])).toEqual([
      ['/cart', 4],
      ['/pay', 3],
    ]);
  });

  it('the increase between two samples lands in the bucket of the later one; a bucket whose samples did not move holds 0', async () => {
    const { projectId, key } = await fresh();
    const start = H('00:30');
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [
      [H('01:10'), 5, start],
      [H('02:20'), 12, start],
      [H('02:40'), 20, start],
      [H('03:05'), 20, start],
    ]);
    expect(await points(key, { metric_name: 'c', aggregation: 'sum' })).toEqual([
      ['01:00', 5],
      ['02:00', 15],
      ['03:00', 0],
    ]);
  });

  it('a value below the previous one with the same start time is a reset: the new value is the increase', async () => {
    const { projectId, key } = await fresh();
    const start = H('00:30');
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [
      [H('01:00'), 10, start],
      [H('02:00'), 15, start],
      [H('03:00'), 3, start],
      [H('04:00'), 8, start],
    ]);
    expect(await points(key, { metric_name: 'c', aggregation: 'sum', step: '1d' })).toEqual([['00:00', 23]]);
  });

  it('a changed start time is a reset: the first total after it counts whole, even when it is above the previous one', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [
      [H('01:00'), 10, H('00:30')],
      [H('02:00'), 20, H('00:30')],
      [H('03:00'), 50, H('02:30')],
      [H('04:00'), 55, H('02:30')],
    ]);
    expect(await points(key, { metric_name: 'c', aggregation: 'sum' })).toEqual([
      ['01:00', 10],
      ['02:00', 10],
      ['03:00', 50],
      ['04:00', 5],
    ]);
  });

  it('a series that started before the window contributes only the increases after its first sample in the window (that one is the baseline)', async () => {
    const { projectId, key } = await fresh();
    const start = '2024-05-30T00:00:00Z';
    await insertMetric(t, { projectId, name: 'c', type: 'counter', labels: { host: 'old' } }, [
      ['2024-05-31T23:00:00Z', 100, start], // before the window: never read
      [H('01:00'), 110, start], // baseline only
      [H('02:00'), 130, start],
    ]);
    // A series whose only sample in the window is its baseline gives no series at all.
    await insertMetric(t, { projectId, name: 'c', type: 'counter', labels: { host: 'idle' } }, [[H('01:30'), 1000, start]]);
    const series = await query(key, { metric_name: 'c', aggregation: 'sum', group_by: ['host'] });
    expect(series).toEqual([{ labels: { host: 'old' }, points: [{ timestamp: '2024-06-01T02:00:00.000Z', value: 20 }] }]);
    // Counted from the window start: a start exactly at the window start is inside it.
    const { projectId: p2, key: k2 } = await fresh();
    await insertMetric(t, { projectId: p2, name: 'c', type: 'counter' }, [[H('01:00'), 4, DAY_START]]);
    expect(await points(k2, { metric_name: 'c', aggregation: 'sum' })).toEqual([['01:00', 4]]);
    expect(await points(k2, { metric_name: 'c', aggregation: 'sum', time_range: { start: '2024-06-01T00:00:00.001Z', end: NOW } })).toEqual([]);
  });

  it('a sample with an unknown start time (stored -1) is only a baseline, also in a window starting at the epoch', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [
      [H('01:00'), 5, UNKNOWN],
      [H('02:00'), 8, UNKNOWN],
    ]);
    expect(await points(key, { metric_name: 'c', aggregation: 'sum', step: '1d' })).toEqual([['00:00', 3]]);
    const { projectId: p2, key: k2 } = await fresh();
    await insertMetric(t, { projectId: p2, name: 'c', type: 'counter' }, [
      ['1970-01-01T01:00:00Z', 5, UNKNOWN],
      ['1970-01-01T02:00:00Z', 8, UNKNOWN],
    ]);
    expect(await points(k2, { metric_name: 'c', aggregation: 'sum', step: '1d', time_range: { start: '1970-01-01T00:00:00Z', end: '1970-01-02T00:00:00Z' } })).toEqual([
      ['00:00', 3],
    ]);
  });

  it('delta counters (start_ts NULL) are summed as stored; non-monotonic sums (gauges) are never differenced', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'delta', type: 'counter' }, [
      [H('01:00'), 3],
      [H('01:30'), 4],
      [H('02:00'), 2],
    ]);
    expect(await points(key, { metric_name: 'delta', aggregation: 'sum' })).toEqual([
      ['01:00', 7],
      ['02:00', 2],
    ]);
    await insertMetric(t, { projectId, name: 'updown', type: 'gauge' }, [
      [H('01:00'), 5],
      [H('01:30'), 3],
      [H('01:45'), 9],
    ]);
    expect(await points(key, { metric_name: 'updown', aggregation: 'sum' })).toEqual([['01:00', 17]]);
    expect(await points(key, { metric_name: 'updown', aggregation: 'min' })).toEqual([['01:00', 3]]);
  });

  it('cumulative and delta series of one metric mix: each is read by its own rule', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'mix', type: 'counter', labels: { kind: 'cumulative' } }, [
      [H('01:00'), 10, H('00:30')],
      [H('01:30'), 16, H('00:30')],
    ]);
    await insertMetric(t, { projectId, name: 'mix', type: 'counter', labels: { kind: 'delta' } }, [
      [H('01:00'), 1],
      [H('01:30'), 2],
    ]);
    expect(await points(key, { metric_name: 'mix', aggregation: 'sum' })).toEqual([['01:00', 19]]);
    const grouped = await query(key, { metric_name: 'mix', aggregation: 'max', group_by: ['kind'], filters: [{ key: 'kind', values: ['cumulative', 'delta'] }] });
    expect(grouped.map((s) => [s.labels.kind, s.points[0].value])).toEqual([
      ['cumulative', 10],
      ['delta', 2],
    ]);
  });

  it('a tombstone in the middle of a counter\'s life hides the samples before it; the next sample is a baseline, a series started after it counts whole', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'c', type: 'counter', labels: { p: 'long' } }, [
      [H('01:00'), 10, H('00:30')],
      [H('02:00'), 15, H('00:30')],
      [H('03:00'), 22, H('00:30')], // first after the tombstone: baseline
      [H('04:00'), 30, H('00:30')],
    ]);
    await insertMetric(t, { projectId, name: 'c', type: 'counter', labels: { p: 'new' } }, [[H('03:45'), 2, H('03:30')]]);
    await insertTombstone(t, projectId, 'c', H('02:30'));
    expect(await points(key, { metric_name: 'c', aggregation: 'sum' })).toEqual([
      ['03:00', 2],
      ['04:00', 8],
    ]);
    // A start exactly at the tombstone is not after it: baseline only.
    const { projectId: p2, key: k2 } = await fresh();
    await insertMetric(t, { projectId: p2, name: 'c', type: 'counter' }, [[H('03:00'), 7, H('02:30')]]);
    await insertTombstone(t, p2, 'c', H('02:30'));
    expect(await points(k2, { metric_name: 'c', aggregation: 'sum' })).toEqual([]);
  });

  it('count, avg, min, max, quantiles and variance run over the increases', async () => {
    const { projectId, key } = await fresh();
    const start = H('04:59');
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [
      [H('05:00'), 4, start],
      [H('05:10'), 4, start],
      [H('05:20'), 10, start],
      [H('05:30'), 13, start],
    ]);
    // Increases 4, 0, 6, 3: mean 3.25, squared deviations 0.5625 + 10.5625 + 7.5625 + 0.0625 = 18.75.
    const expected: Record<string, number> = { sum: 13, count: 4, avg: 3.25, min: 0, max: 6, p50: 3.5, variance: 18.75 / 4 };
    for (const [aggregation, value] of Object.entries(expected)) {
      const [[bucket, v]] = await points(key, { metric_name: 'c', aggregation });
      expect(bucket).toBe('05:00');
      expect(v, aggregation).toBeCloseTo(value, 12);
    }
  });

  it('a sample stored twice (same time, same value) adds nothing the second time', async () => {
    const { projectId, key } = await fresh();
    const start = H('00:30');
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [
      [H('01:00'), 7, start],
      [H('01:00'), 7, start],
      [H('02:00'), 9, start],
    ]);
    expect(await points(key, { metric_name: 'c', aggregation: 'sum' })).toEqual([
      ['01:00', 7],
      ['02:00', 2],
    ]);
  });

  it('the forecast history averages the increases too', async () => {
    const { projectId } = await fresh();
    const start = H('00:30');
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [
      [H('01:00'), 10, start],
      [H('01:30'), 14, start],
      [H('02:00'), 20, start],
    ]);
    await insertMetric(t, { projectId, name: 'g', type: 'gauge' }, [
      [H('01:00'), 10],
      [H('01:30'), 14],
    ]);
    const history = (name: string) =>
      t.ctx.telemetry.forecastHistory({ projectId, name, startMs: toMs(DAY_START), endMs: toMs(NOW), intervalMs: 3_600_000 });
    expect(await history('c')).toEqual([
      { ts: toMs(H('01:00')), value: 7 },
      { ts: toMs(H('02:00')), value: 6 },
    ]);
    expect(await history('g')).toEqual([{ ts: toMs(H('01:00')), value: 12 }]);
  });
});
