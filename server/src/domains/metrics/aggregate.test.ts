/** POST /metrics/aggregate over HTTP (spec 1, "Metrics endpoints", "Aggregate body", "Limits"). */
import { allowAllContent } from '../../testing/content-policy.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { insertMetric, insertPoints, insertSeries, insertTombstone } from './test-data.js';

const NOW = '2024-06-01T12:00:00.000Z';
const DAY_START = '2024-06-01T00:00:00.000Z';

describe('metrics aggregate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  const aggregate = (key: string, body: object) => t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key, payload: body });
  const fresh = () => projectWithKey(t, ['metrics:read']);
  const window = { start: DAY_START, end: NOW };

  async function expect400(key: string, body: object, text: string) {
    const r = await aggregate(key, body);
    expect(r.statusCode, JSON.stringify(body)).toBe(400);
    expect(r.json().error).toBe('invalid_request');
    expect(r.json().message).toContain(text);
  }

  it('"Response {series:[{labels:{key:value}, points:[{timestamp, value}]}]} ordered by time"; buckets aligned to multiples of step since the Unix epoch', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'cpu' }, [
      ['2024-06-01T11:01:00Z', 7],
      ['2024-06-01T10:07:00Z', 1],
      ['2024-06-01T10:59:59.999Z', 3],
    ]);
    const r = await aggregate(key, { metric_name: 'cpu', time_range: window });
    expect(r.statusCode).toBe(200);
    expect(r.json().series).toEqual([
        {
          labels: {},
          points: [
            { timestamp: '2024-06-01T10:00:00.000Z', value: 2 },
            { timestamp: '2024-06-01T11:00:00.000Z', value: 7 },
          ],
        },
    ]);
  });

  it('a 7d step aligns to the epoch (Thursday 00:00 UTC), not to the window start', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'weekly' }, [
      ['2024-05-29T23:59:59Z', 1], // Wednesday: previous week bucket
      ['2024-05-30T00:00:00Z', 2], // Thursday: bucket start
      ['2024-06-01T10:00:00Z', 4],
    ]);
    const r = await aggregate(key, { metric_name: 'weekly', step: '7d', aggregation: 'sum', time_range: { start: '2024-05-20T00:00:00Z', end: NOW } });
    expect(r.json().series[0].points).toEqual([
      { timestamp: '2024-05-23T00:00:00.000Z', value: 1 },
      { timestamp: '2024-05-30T00:00:00.000Z', value: 6 },
    ]);
  });

  it('a time_range before 1970 is 400 (no OTLP timestamp is before the epoch; docs/api-conventions.md "Time"); one starting at the epoch is read', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'old' }, [
      ['1969-12-31T23:30:00Z', 2],
      ['1970-01-01T00:30:00Z', 4],
    ]);
    const r = await aggregate(key, { metric_name: 'old', aggregation: 'sum', time_range: { start: '1969-12-31T22:00:00Z', end: '1970-01-01T01:00:00Z' } });
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toContain('time_range.start must be an RFC 3339 timestamp from 1970-01-01T00:00:00Z');
    const epoch = await aggregate(key, { metric_name: 'old', aggregation: 'sum', time_range: { start: '1970-01-01T00:00:00Z', end: '1970-01-01T01:00:00Z' } });
    expect(epoch.json().series[0].points).toEqual([{ timestamp: '1970-01-01T00:00:00.000Z', value: 4 }]);
  });

  it('points stamped at or before the metric\'s tombstone are excluded; later ones are data', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'tomb' }, [
      ['2024-06-01T01:00:00Z', 1],
      ['2024-06-01T01:30:00Z', 2],
      ['2024-06-01T01:30:00.001Z', 4],
    ]);
    await insertTombstone(t, projectId, 'tomb', '2024-06-01T01:30:00Z');
    const r = await aggregate(key, { metric_name: 'tomb', aggregation: 'sum', time_range: window, group_by: ['x'] });
    expect(r.json().series).toEqual([{ labels: {}, points: [{ timestamp: '2024-06-01T01:00:00.000Z', value: 4 }] }]);
  });

  it('"a bucket with no points is absent, never zero"', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'gaps' }, [
      ['2024-06-01T01:30:00Z', 5],
      ['2024-06-01T04:10:00Z', 6],
    ]);
    const r = await aggregate(key, { metric_name: 'gaps', aggregation: 'count', time_range: window });
    expect(r.json().series[0].points.map((p: { timestamp: string }) => p.timestamp)).toEqual([
      '2024-06-01T01:00:00.000Z',
      '2024-06-01T04:00:00.000Z',
    ]);
  });

  it('each aggregation against hand-computed values; quantiles are exact continuous (linear interpolation), stddev and variance are population statistics', async () => {
    const { projectId, key } = await fresh();
    // One bucket of 1, 2, 3, 4, 10 (spread over two series: aggregation is over points, not series).
    await insertMetric(t, { projectId, name: 'lat', labels: { host: 'a' } }, [
      ['2024-06-01T05:00:00Z', 1],
      ['2024-06-01T05:10:00Z', 10],
    ]);
    await insertMetric(t, { projectId, name: 'lat', labels: { host: 'b' } }, [
      ['2024-06-01T05:20:00Z', 2],
      ['2024-06-01T05:30:00Z', 3],
      ['2024-06-01T05:40:00Z', 4],
    ]);
    // mean 4; squared deviations 9+4+1+0+36 = 50; population variance 50/5 = 10.
    // p95: position 0.95*(5-1) = 3.8 -> 4 + 0.8*(10-4) = 8.8; p99: 3.96 -> 4 + 0.96*6 = 9.76; p50: position 2 -> 3.
    const expected: Record<string, number> = {
      avg: 4,
      sum: 20,
      min: 1,
      max: 10,
      count: 5,
      p50: 3,
      p95: 8.8,
      p99: 9.76,
      stddev: Math.sqrt(10),
      variance: 10,
    };
    for (const [aggregation, value] of Object.entries(expected)) {
      const r = await aggregate(key, { metric_name: 'lat', aggregation, time_range: window });
      expect(r.statusCode, aggregation).toBe(200);
      const points = r.json().series[0].points;
      expect(points).toHaveLength(1);
      expect(points[0].timestamp).toBe('2024-06-01T05:00:00.000Z');
      expect(points[0].value, aggregation).toBeCloseTo(value, 12);
    }
  });

  it('aggregation defaults to avg and step to 1h; the default window is the 24 hours ending now', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'dflt' }, [
      ['2024-05-31T11:59:59.999Z', 1000], // just before now - 24h
      ['2024-05-31T12:00:00.000Z', 1], // exactly now - 24h: the window is closed
      ['2024-05-31T12:30:00.000Z', 3],
      ['2024-06-01T12:00:00.000Z', 5], // exactly now
      ['2024-06-01T12:00:00.001Z', 1000], // after now
    ]);
    const r = await aggregate(key, { metric_name: 'dflt' });
    expect(r.json().series[0].points).toEqual([
      { timestamp: '2024-05-31T12:00:00.000Z', value: 2 },
      { timestamp: '2024-06-01T12:00:00.000Z', value: 5 },
    ]);
  });

  it('"time_range.start, time_range.end": an RFC 3339 closed window (both ends included), any offset', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'edges' }, [
      ['2024-06-01T02:00:00Z', 1],
      ['2024-06-01T02:30:00Z', 2],
      ['2024-06-01T03:00:00Z', 4],
      ['2024-06-01T03:00:00.001Z', 8],
    ]);
    const r = await aggregate(key, {
      metric_name: 'edges',
      aggregation: 'sum',
      step: '1d',
      time_range: { start: '2024-06-01T04:00:00+02:00', end: '2024-06-01T03:00:00Z' },
    });
    expect(r.json().series[0].points).toEqual([{ timestamp: '2024-06-01T00:00:00.000Z', value: 7 }]);
  });

  it('only `end` given: the 24 hours ending there; only `start` given: from start to now', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'half' }, [
      ['2024-05-30T23:00:00Z', 1],
      ['2024-05-31T01:00:00Z', 2],
      ['2024-06-01T11:00:00Z', 4],
    ]);
    const onlyEnd = await aggregate(key, { metric_name: 'half', aggregation: 'sum', step: '1d', time_range: { end: '2024-05-31T12:00:00Z' } });
    expect(onlyEnd.json().series[0].points).toEqual([
      { timestamp: '2024-05-30T00:00:00.000Z', value: 1 },
      { timestamp: '2024-05-31T00:00:00.000Z', value: 2 },
    ]);
    const onlyStart = await aggregate(key, { metric_name: 'half', aggregation: 'sum', step: '1d', time_range: { start: '2024-05-31T00:00:00Z' } });
    expect(onlyStart.json().series[0].points).toEqual([
      { timestamp: '2024-05-31T00:00:00.000Z', value: 2 },
      { timestamp: '2024-06-01T00:00:00.000Z', value: 4 },
    ]);
  });

  it('"metric_name: exact name": no prefix or case-insensitive match', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'http.requests' }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'http.requests.total' }, [['2024-06-01T01:00:00Z', 100]]);
    await insertMetric(t, { projectId, name: 'HTTP.requests' }, [['2024-06-01T01:00:00Z', 1000]]);
    const r = await aggregate(key, { metric_name: 'http.requests', aggregation: 'sum', time_range: window });
    expect(r.json().series[0].points).toEqual([{ timestamp: '2024-06-01T01:00:00.000Z', value: 1 }]);
  });

  it('"a project with no data" and an unknown metric return {series: []}', async () => {
    const { key } = await fresh();
    const r = await aggregate(key, { metric_name: 'nothing', group_by: ['host'] });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ metric_name: 'nothing', aggregation: 'avg', estimated: false, series: [] });
  });

  it('"service_name: exact emitting-service filter" and "environment: exact deployment-environment filter"', async () => {
    const { projectId, key } = await fresh();
    const at = '2024-06-01T01:00:00Z';
    await insertMetric(t, { projectId, name: 'req', serviceName: 'api', environment: 'prod' }, [[at, 1]]);
    await insertMetric(t, { projectId, name: 'req', serviceName: 'api', environment: 'staging' }, [[at, 10]]);
    await insertMetric(t, { projectId, name: 'req', serviceName: 'web', environment: 'prod' }, [[at, 100]]);
    await insertMetric(t, { projectId, name: 'req', serviceName: 'api-gateway', environment: 'prod' }, [[at, 1000]]);
    const sum = async (extra: object) =>
      (await aggregate(key, { metric_name: 'req', aggregation: 'sum', time_range: window, ...extra })).json().series[0]?.points[0].value;
    expect(await sum({})).toBe(1111);
    expect(await sum({ service_name: 'api' })).toBe(11);
    expect(await sum({ environment: 'prod' })).toBe(1101);
    expect(await sum({ service_name: 'api', environment: 'prod' })).toBe(1);
    expect(await sum({ service_name: 'API' })).toBeUndefined();
  });

  it('"OR within one filter, AND across filters"', async () => {
    const { projectId, key } = await fresh();
    const at = '2024-06-01T01:00:00Z';
    await insertMetric(t, { projectId, name: 'f', labels: { region: 'eu', tier: 'gold' } }, [[at, 1]]);
    await insertMetric(t, { projectId, name: 'f', labels: { region: 'us', tier: 'gold' } }, [[at, 10]]);
    await insertMetric(t, { projectId, name: 'f', labels: { region: 'ap', tier: 'gold' } }, [[at, 100]]);
    await insertMetric(t, { projectId, name: 'f', labels: { region: 'eu', tier: 'free' } }, [[at, 1000]]);
    await insertMetric(t, { projectId, name: 'f', labels: { tier: 'gold' } }, [[at, 10000]]); // lacks region
    const sum = async (filters: object[]) =>
      (await aggregate(key, { metric_name: 'f', aggregation: 'sum', time_range: window, filters })).json().series[0]?.points[0].value;
    expect(await sum([{ key: 'region', values: ['eu', 'us'] }])).toBe(1011);
    expect(await sum([{ key: 'region', values: ['eu', 'us'] }, { key: 'tier', values: ['gold'] }])).toBe(11);
    expect(await sum([{ key: 'tier', values: ['gold'] }])).toBe(10111);
    expect(await sum([{ key: 'region', values: ['EU'] }])).toBeUndefined();
    expect(await sum([{ key: 'missing', values: ['x'] }])).toBeUndefined();
  });

  it('"group_by: up to two label keys": one series per group; labels holds the group keys; a series lacking a key omits it', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'g', labels: { host: 'b', region: 'eu', other: 'x' } }, [
      ['2024-06-01T01:00:00Z', 1],
      ['2024-06-01T02:00:00Z', 2],
    ]);
    await insertMetric(t, { projectId, name: 'g', labels: { host: 'a', region: 'eu', other: 'y' } }, [['2024-06-01T01:00:00Z', 10]]);
    await insertMetric(t, { projectId, name: 'g', labels: { host: 'a', region: 'us' } }, [['2024-06-01T01:00:00Z', 100]]);
    await insertMetric(t, { projectId, name: 'g', labels: { region: 'us' } }, [['2024-06-01T03:00:00Z', 1000]]);

    const one = await aggregate(key, { metric_name: 'g', aggregation: 'sum', time_range: window, group_by: ['host'] });
    expect(one.json().series).toEqual([
        { labels: { host: 'a' }, points: [{ timestamp: '2024-06-01T01:00:00.000Z', value: 110 }] },
        {
          labels: { host: 'b' },
          points: [
            { timestamp: '2024-06-01T01:00:00.000Z', value: 1 },
            { timestamp: '2024-06-01T02:00:00.000Z', value: 2 },
          ],
        },
        { labels: {}, points: [{ timestamp: '2024-06-01T03:00:00.000Z', value: 1000 }] },
    ]);

    const two = await aggregate(key, { metric_name: 'g', aggregation: 'sum', time_range: window, group_by: ['region', 'host'] });
    expect(two.json().series.map((s: { labels: object; points: { value: number }[] }) => [s.labels, s.points.map((p) => p.value)])).toEqual([
      [{ region: 'eu', host: 'a' }, [10]],
      [{ region: 'eu', host: 'b' }, [1, 2]],
      [{ region: 'us', host: 'a' }, [100]],
      [{ region: 'us' }, [1000]],
    ]);
  });

  it('"Aggregate query: 500 points per series": a request implying more is 400 invalid_request naming the limit; exactly 500 is answered', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'm' }, [['2024-06-01T00:00:00Z', 1]]);
    // The default window (24 h) with 1m steps implies 1441 buckets.
    const r = await aggregate(key, { metric_name: 'm', step: '1m' });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: 'invalid_request', details: { limit: 500, points_per_series: 1441 } });
    expect(r.json().message).toContain('500 points per series');
    // 00:00 .. 08:19 with 1m steps is exactly 500 buckets; one more millisecond of window reaches bucket 501.
    expect((await aggregate(key, { metric_name: 'm', step: '1m', time_range: { start: DAY_START, end: '2024-06-01T08:19:59.999Z' } })).statusCode).toBe(200);
    expect((await aggregate(key, { metric_name: 'm', step: '1m', time_range: { start: DAY_START, end: '2024-06-01T08:20:00Z' } })).statusCode).toBe(400);
    // Counted on the aligned grid: a window of 499 minutes that straddles 501 buckets is refused too.
    expect(
      (await aggregate(key, { metric_name: 'm', step: '1m', time_range: { start: '2024-06-01T00:00:59Z', end: '2024-06-01T08:20:00Z' } })).statusCode,
    ).toBe(400);
  });

  it('"Aggregate query: 50 grouped series": more than 50 is 429 result_too_large naming the limit, never truncated; 50 is answered', async () => {
    const { projectId, key } = await fresh();
    for (let i = 0; i < 51; i++)
      await insertMetric(t, { projectId, name: 'wide', labels: { host: `h${String(i).padStart(2, '0')}` } }, [['2024-06-01T01:00:00Z', i]]);
    const r = await aggregate(key, { metric_name: 'wide', time_range: window, group_by: ['host'] });
    expect(r.statusCode).toBe(429);
    expect(r.json()).toMatchObject({ error: 'result_too_large', details: { limit: 50 } });
    expect(r.json().message).toContain('50 grouped series');
    // Filtering to 50 groups answers all of them.
    const hosts = Array.from({ length: 50 }, (_, i) => `h${String(i).padStart(2, '0')}`);
    const ok = await aggregate(key, { metric_name: 'wide', time_range: window, group_by: ['host'], filters: [{ key: 'host', values: hosts }] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().series).toHaveLength(50);
    // Without group_by there is one series.
    expect((await aggregate(key, { metric_name: 'wide', time_range: window })).json().series).toHaveLength(1);
  });

  it('the 50-series limit counts groups with points in the window, not every group ever seen', async () => {
    const { projectId, key } = await fresh();
    for (let i = 0; i < 60; i++)
      await insertMetric(t, { projectId, name: 'catalogued', labels: { host: `h${i}` } }, [[i < 50 ? '2024-06-01T01:00:00Z' : '2024-05-20T01:00:00Z', 1]]);
    const r = await aggregate(key, { metric_name: 'catalogued', time_range: window, group_by: ['host'] });
    expect(r.statusCode).toBe(200);
    expect(r.json().series).toHaveLength(50);
  });

  it('"filters: up to two entries": a third is 400', async () => {
    const { key } = await fresh();
    const f = (k: string) => ({ key: k, values: ['x'] });
    await expect400(key, { metric_name: 'm', filters: [f('a'), f('b'), f('c')] }, 'filters');
  });

  it('"each has 1 to 50 non-empty, distinct values"', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'm', labels: { v: 'v49' } }, [['2024-06-01T01:00:00Z', 1]]);
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    await expect400(key, { metric_name: 'm', filters: [{ key: 'v', values: [] }] }, 'values');
    await expect400(key, { metric_name: 'm', filters: [{ key: 'v', values: values(51) }] }, 'values');
    await expect400(key, { metric_name: 'm', filters: [{ key: 'v', values: ['a', ''] }] }, 'values');
    await expect400(key, { metric_name: 'm', filters: [{ key: 'v', values: ['a', 'b', 'a'] }] }, 'duplicate');
    const ok = await aggregate(key, { metric_name: 'm', time_range: window, filters: [{ key: 'v', values: values(50) }] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().series).toHaveLength(1);
  });

  it('the same filter key twice is 400 (its values belong in one filter)', async () => {
    const { key } = await fresh();
    await expect400(key, { metric_name: 'm', filters: [{ key: 'a', values: ['x'] }, { key: 'a', values: ['y'] }] }, 'more than once');
  });

  it('"group_by: up to two label keys": three, or a repeated key, is 400', async () => {
    const { key } = await fresh();
    await expect400(key, { metric_name: 'm', group_by: ['a', 'b', 'c'] }, 'group_by');
    await expect400(key, { metric_name: 'm', group_by: ['a', 'a'] }, 'group_by');
  });

  it('"Filter and group keys start with a letter or underscore, then letters, digits, _, . or -, at most 128 characters"', async () => {
    const { projectId, key } = await fresh();
    const long = `k${'x'.repeat(127)}`;
    await insertMetric(t, { projectId, name: 'keys', labels: { [long]: 'v', _a: 'v', 'A.b-c_9': 'v' } }, [['2024-06-01T01:00:00Z', 1]]);
    for (const good of [long, '_a', 'A.b-c_9']) {
      const r = await aggregate(key, { metric_name: 'keys', time_range: window, group_by: [good], filters: [{ key: good, values: ['v'] }] });
      expect(r.statusCode, good).toBe(200);
      expect(r.json().series[0].labels).toEqual({ [good]: 'v' });
    }
    for (const bad of [`${long}x`, '9lives', '.a', '-a', 'a b', 'a/b', 'a"b', 'é', '']) {
      await expect400(key, { metric_name: 'keys', filters: [{ key: bad, values: ['v'] }] }, 'key');
      await expect400(key, { metric_name: 'keys', group_by: [bad] }, 'group_by');
    }
  });

  it('unknown body fields are refused (400 naming the field), also inside time_range and filters', async () => {
    const { key } = await fresh();
    await expect400(key, { metric_name: 'm', limit: 5 }, 'unknown field "limit"');
    await expect400(key, { metric_name: 'm', time_range: { start: DAY_START, stop: NOW } }, 'unknown field "stop"');
    await expect400(key, { metric_name: 'm', filters: [{ key: 'a', values: ['x'], op: 'eq' }] }, 'unknown field "op"');
  });

  it('"metric_name: required"', async () => {
    const { key } = await fresh();
    await expect400(key, { step: '1h' }, 'metric_name');
    await expect400(key, { metric_name: '' }, 'metric_name');
  });

  it('an unrecognized step or aggregation is 400 naming the allowed values', async () => {
    const { key } = await fresh();
    await expect400(key, { metric_name: 'm', step: '2h' }, '1s, 5s, 10s, 30s, 1m, 5m, 10m, 15m, 30m, 1h, 6h, 12h, 1d, 7d');
    await expect400(key, { metric_name: 'm', aggregation: 'median' }, 'avg, sum, min, max, count, p50, p95, p99, stddev, variance');
  });

  it('bad dates: an unparseable or zone-less timestamp, or start after end, is 400', async () => {
    const { key } = await fresh();
    await expect400(key, { metric_name: 'm', time_range: { start: 'yesterday' } }, 'time_range.start');
    await expect400(key, { metric_name: 'm', time_range: { start: '2024-06-01T00:00:00' } }, 'time_range.start');
    await expect400(key, { metric_name: 'm', time_range: { end: '2024-02-30T00:00:00Z' } }, 'time_range.end');
    await expect400(key, { metric_name: 'm', time_range: { start: 1717200000000 } }, 'time_range.start');
    await expect400(key, { metric_name: 'm', time_range: { start: NOW, end: DAY_START } }, 'must not be after');
  });

  it('"a filter or group_by on a denied classified dimension is refused before querying" (403 without agents:content:read)', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'llm', labels: { 'gen_ai.prompt': 'secret', model: 'm1' } }, [['2024-06-01T01:00:00Z', 1]]);
    for (const body of [
      { group_by: ['gen_ai.prompt'] },
      { filters: [{ key: 'gen_ai.prompt', values: ['secret'] }] },
      { filters: [{ key: 'gen_ai.prompt.0.content', values: ['x'] }] },
      { group_by: ['model', 'GEN_AI.Input.Messages'] },
    ]) {
      const r = await aggregate(key, { metric_name: 'llm', time_range: window, ...body });
      expect(r.statusCode, JSON.stringify(body)).toBe(403);
      expect(r.json().error).toBe('permission_denied');
    }
    // With the content scope and a project policy that allows reading the class, the same request is answered.
    const allowed = await projectWithKey(t, ['metrics:read', 'agents:content:read']);
    const scopeOnly = await aggregate(allowed.key, { metric_name: 'llm', time_range: window, group_by: ['gen_ai.prompt'] });
    expect(scopeOnly.statusCode, 'the scope alone, under no policy').toBe(403);
    await allowAllContent(t, allowed.projectId);
    await insertMetric(t, { projectId: allowed.projectId, name: 'llm', labels: { 'gen_ai.prompt': 'secret' } }, [['2024-06-01T01:00:00Z', 1]]);
    const ok = await aggregate(allowed.key, { metric_name: 'llm', time_range: window, group_by: ['gen_ai.prompt'] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().series[0].labels).toEqual({ 'gen_ai.prompt': 'secret' });
  });

  it('points of one series that sit outside the window or belong to another metric or project never leak into a bucket', async () => {
    const { projectId, key } = await fresh();
    const other = await fresh();
    const id = await insertSeries(t, { projectId, name: 'iso' });
    await insertPoints(t, { projectId, name: 'iso', seriesId: id }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId: other.projectId, name: 'iso' }, [['2024-06-01T01:00:00Z', 100]]);
    await insertMetric(t, { projectId, name: 'iso2' }, [['2024-06-01T01:00:00Z', 1000]]);
    const r = await aggregate(key, { metric_name: 'iso', aggregation: 'sum', time_range: window });
    expect(r.json().series).toEqual([{ labels: {}, points: [{ timestamp: '2024-06-01T01:00:00.000Z', value: 1 }] }]);
  });
});
