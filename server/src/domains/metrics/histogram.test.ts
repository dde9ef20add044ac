/** POST /metrics/histogram over HTTP (spec 1, "Metrics endpoints", "Histogram body", "Histogram cell"). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { insertHistograms, insertMetric, insertSeries, type HistogramRow } from './test-data.js';

const NOW = '2024-06-01T12:00:00.000Z';
const WINDOW = { start: '2024-06-01T00:00:00Z', end: NOW };

interface Cell {
  timestamp: string;
  upper_bound: number;
  upper_bound_infinite: boolean;
  count: number | string;
}

/** Cells as compact tuples: [hh:mm, bound or 'inf', count]. */
const compact = (cells: Cell[]) =>
  cells.map((c) => [c.timestamp.slice(11, 16), c.upper_bound_infinite ? `inf>${c.upper_bound}` : c.upper_bound, c.count]);

describe('metrics histogram', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  const histogram = (key: string, body: object) => t.call({ method: 'POST', url: '/api/v1/metrics/histogram', key, payload: body });
  const fresh = () => projectWithKey(t, ['metrics:read']);

  async function seed(projectId: string, name: string, rows: HistogramRow[], extra: { environment?: string } = {}) {
    const seriesId = await insertSeries(t, { projectId, name, type: 'histogram', ...extra });
    await insertHistograms(t, { projectId, name, seriesId }, rows);
    return seriesId;
  }

  it('"Response {metric_name, step, cells:[...]}"; delta counts are per bucket, not cumulative, and summed over series in a step bucket', async () => {
    const { projectId, key } = await fresh();
    await seed(projectId, 'lat', [
      { at: '2024-06-01T01:10:00Z', temporality: 'delta', bounds: [1, 5, 10], counts: [1, 2, 3, 4] },
      { at: '2024-06-01T02:05:00Z', temporality: 'delta', bounds: [1, 5, 10], counts: [0, 1, 0, 0] },
    ]);
    await seed(projectId, 'lat', [{ at: '2024-06-01T01:50:00Z', temporality: 'delta', bounds: [1, 5, 10], counts: [10, 20, 30, 40] }]);
    const r = await histogram(key, { metric_name: 'lat', time_range: WINDOW });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.metric_name).toBe('lat');
    expect(body.step).toBe('1h');
    expect(body.cells[0]).toEqual({ timestamp: '2024-06-01T01:00:00.000Z', upper_bound: 1, upper_bound_infinite: false, count: 11 });
    expect(compact(body.cells)).toEqual([
      ['01:00', 1, 11],
      ['01:00', 5, 22],
      ['01:00', 10, 33],
      ['01:00', 'inf>10', 44],
      ['02:00', 1, 0],
      ['02:00', 5, 1],
      ['02:00', 10, 0],
      ['02:00', 'inf>10', 0],
    ]);
  });

  it('cumulative samples become per-step increases; a decreased count or a changed start time is a reset; the first sample of a series that started before the window is only the baseline', async () => {
    const { projectId, key } = await fresh();
    const before = '2024-05-31T00:00:00Z';
    await seed(projectId, 'cum', [
      { at: '2024-06-01T01:00:00Z', startAt: before, temporality: 'cumulative', bounds: [1, 2], counts: [5, 5, 5] }, // baseline
      { at: '2024-06-01T02:00:00Z', startAt: before, temporality: 'cumulative', bounds: [1, 2], counts: [7, 6, 5] }, // +2 +1 +0
      { at: '2024-06-01T03:00:00Z', startAt: before, temporality: 'cumulative', bounds: [1, 2], counts: [8, 9, 5] }, // +1 +3 +0
      { at: '2024-06-01T03:30:00Z', startAt: before, temporality: 'cumulative', bounds: [1, 2], counts: [9, 9, 6] }, // +1 +0 +1
      { at: '2024-06-01T04:00:00Z', startAt: before, temporality: 'cumulative', bounds: [1, 2], counts: [1, 0, 0] }, // decreased: reset
      { at: '2024-06-01T05:00:00Z', startAt: '2024-06-01T04:30:00Z', temporality: 'cumulative', bounds: [1, 2], counts: [3, 3, 3] }, // new start: reset
      { at: '2024-06-01T06:00:00Z', startAt: '2024-06-01T04:30:00Z', temporality: 'cumulative', bounds: [1, 2], counts: [4, 4, 4] }, // +1 +1 +1
    ]);
    const r = await histogram(key, { metric_name: 'cum', time_range: WINDOW });
    expect(compact(r.json().cells)).toEqual([
      ['02:00', 1, 2],
      ['02:00', 2, 1],
      ['02:00', 'inf>2', 0],
      ['03:00', 1, 2],
      ['03:00', 2, 3],
      ['03:00', 'inf>2', 1],
      ['04:00', 1, 1],
      ['04:00', 2, 0],
      ['04:00', 'inf>2', 0],
      ['05:00', 1, 3],
      ['05:00', 2, 3],
      ['05:00', 'inf>2', 3],
      ['06:00', 1, 1],
      ['06:00', 2, 1],
      ['06:00', 'inf>2', 1],
    ]);
  });

  it('the first cumulative sample of a series that started inside the window counts in full', async () => {
    const { projectId, key } = await fresh();
    await seed(projectId, 'fresh', [
      { at: '2024-06-01T02:00:00Z', startAt: '2024-06-01T01:30:00Z', temporality: 'cumulative', bounds: [10], counts: [1, 2] },
      { at: '2024-06-01T03:00:00Z', startAt: '2024-06-01T01:30:00Z', temporality: 'cumulative', bounds: [10], counts: [4, 2] },
    ]);
    // Same data, window starting after the series started: the 02:00 sample is only the baseline.
    expect(compact((await histogram(key, { metric_name: 'fresh', time_range: WINDOW })).json().cells)).toEqual([
      ['02:00', 10, 1],
      ['02:00', 'inf>10', 2],
      ['03:00', 10, 3],
      ['03:00', 'inf>10', 0],
    ]);
    expect(
      compact((await histogram(key, { metric_name: 'fresh', time_range: { start: '2024-06-01T01:45:00Z', end: NOW } })).json().cells),
    ).toEqual([
      ['03:00', 10, 3],
      ['03:00', 'inf>10', 0],
    ]);
  });

  it('delta and cumulative series of one metric add up in the same step bucket', async () => {
    const { projectId, key } = await fresh();
    await seed(projectId, 'mix', [{ at: '2024-06-01T02:10:00Z', temporality: 'delta', bounds: [1], counts: [1, 1] }]);
    await seed(projectId, 'mix', [
      { at: '2024-06-01T01:50:00Z', startAt: '2024-05-01T00:00:00Z', temporality: 'cumulative', bounds: [1], counts: [10, 10] },
      { at: '2024-06-01T02:20:00Z', startAt: '2024-05-01T00:00:00Z', temporality: 'cumulative', bounds: [1], counts: [15, 11] },
    ]);
    expect(compact((await histogram(key, { metric_name: 'mix', time_range: WINDOW })).json().cells)).toEqual([
      ['02:00', 1, 6],
      ['02:00', 'inf>1', 2],
    ]);
  });

  it('mixed bounds layouts in one bucket: one cell per distinct bound; one +Inf cell whose upper_bound is the largest finite bound', async () => {
    const { projectId, key } = await fresh();
    await seed(projectId, 'layouts', [{ at: '2024-06-01T01:00:00Z', temporality: 'delta', bounds: [1, 5], counts: [1, 1, 1] }]);
    await seed(projectId, 'layouts', [{ at: '2024-06-01T01:30:00Z', temporality: 'delta', bounds: [1, 5, 10], counts: [2, 2, 2, 2] }]);
    await seed(projectId, 'layouts', [{ at: '2024-06-01T01:40:00Z', temporality: 'delta', bounds: [0.5], counts: [7, 0] }]);
    expect(compact((await histogram(key, { metric_name: 'layouts', time_range: WINDOW })).json().cells)).toEqual([
      ['01:00', 0.5, 7],
      ['01:00', 1, 3],
      ['01:00', 5, 3],
      ['01:00', 10, 2],
      ['01:00', 'inf>10', 3],
    ]);
  });

  it('a histogram without finite bounds has only its +Inf cell (upper_bound 0)', async () => {
    const { projectId, key } = await fresh();
    await seed(projectId, 'single', [{ at: '2024-06-01T01:00:00Z', temporality: 'delta', bounds: [], counts: [9] }]);
    expect((await histogram(key, { metric_name: 'single', time_range: WINDOW })).json().cells).toEqual([
      { timestamp: '2024-06-01T01:00:00.000Z', upper_bound: 0, upper_bound_infinite: true, count: 9 },
    ]);
  });

  it('"`count` (64-bit unsigned integer, possibly encoded as a JSON string)": counts above 2^53-1 are strings, others numbers', async () => {
    const { projectId, key } = await fresh();
    const max64 = 2n ** 64n - 1n;
    await seed(projectId, 'big', [
      { at: '2024-06-01T01:00:00Z', temporality: 'delta', bounds: [1, 2], counts: [9007199254740991n, 9007199254740992n, 0n] },
      { at: '2024-06-01T02:00:00Z', temporality: 'delta', bounds: [1], counts: [max64, 0n] },
    ]);
    await seed(projectId, 'big', [{ at: '2024-06-01T02:30:00Z', temporality: 'delta', bounds: [1], counts: [max64, 0n] }]);
    const r = await histogram(key, { metric_name: 'big', time_range: WINDOW });
    expect(r.statusCode).toBe(200);
    expect(compact(r.json().cells)).toEqual([
      ['01:00', 1, 9007199254740991],
      ['01:00', 2, '9007199254740992'],
      ['01:00', 'inf>2', 0],
      ['02:00', 1, (max64 * 2n).toString()],
      ['02:00', 'inf>1', 0],
    ]);
    // Exact on the wire: no float rounding of the large values.
    expect(r.body).toContain('"count":"9007199254740992"');
    expect(r.body).toContain('"count":9007199254740991');
  });

  it('cumulative differences stay exact above 2^53', async () => {
    const { projectId, key } = await fresh();
    const base = 2n ** 60n;
    await seed(projectId, 'bigcum', [
      { at: '2024-06-01T01:00:00Z', startAt: '2024-05-01T00:00:00Z', temporality: 'cumulative', bounds: [], counts: [base] },
      { at: '2024-06-01T02:00:00Z', startAt: '2024-05-01T00:00:00Z', temporality: 'cumulative', bounds: [], counts: [base + 3n] },
    ]);
    expect(compact((await histogram(key, { metric_name: 'bigcum', time_range: WINDOW })).json().cells)).toEqual([['02:00', 'inf>0', 3]]);
  });

  it('"A non-histogram metric, or old histogram data without preserved buckets, gives no cells"', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'gauge', type: 'gauge' }, [['2024-06-01T01:00:00Z', 1]]);
    // A histogram whose buckets were not preserved: only its mean point exists.
    await insertMetric(t, { projectId, name: 'old_hist', type: 'histogram' }, [['2024-06-01T01:00:00Z', 2.5]]);
    await seed(projectId, 'empty_layout', [{ at: '2024-06-01T01:00:00Z', temporality: 'delta', bounds: [], counts: [] }]);
    for (const name of ['gauge', 'old_hist', 'empty_layout', 'missing']) {
      const r = await histogram(key, { metric_name: name, time_range: WINDOW });
      expect(r.statusCode, name).toBe(200);
      expect(r.json(), name).toEqual({ metric_name: name, step: '1h', cells: [] });
    }
  });

  it('"Histogram body: metric_name, step, time_range, environment": environment filters exactly, step sets the buckets', async () => {
    const { projectId, key } = await fresh();
    await seed(projectId, 'env', [{ at: '2024-06-01T01:10:00Z', temporality: 'delta', bounds: [1], counts: [1, 0] }], { environment: 'prod' });
    await seed(projectId, 'env', [{ at: '2024-06-01T01:20:00Z', temporality: 'delta', bounds: [1], counts: [10, 0] }], { environment: 'staging' });
    expect(compact((await histogram(key, { metric_name: 'env', environment: 'prod', time_range: WINDOW })).json().cells)).toEqual([
      ['01:00', 1, 1],
      ['01:00', 'inf>1', 0],
    ]);
    const tenMinutes = await histogram(key, { metric_name: 'env', step: '10m', time_range: WINDOW });
    expect(tenMinutes.json().step).toBe('10m');
    expect(compact(tenMinutes.json().cells)).toEqual([
      ['01:10', 1, 1],
      ['01:10', 'inf>1', 0],
      ['01:20', 1, 10],
      ['01:20', 'inf>1', 0],
    ]);
  });

  it('samples outside the closed window are not counted; the window defaults to the 24 hours ending now', async () => {
    const { projectId, key } = await fresh();
    await seed(projectId, 'w', [
      { at: '2024-05-31T11:59:59.999Z', temporality: 'delta', bounds: [1], counts: [100, 0] },
      { at: '2024-05-31T12:00:00Z', temporality: 'delta', bounds: [1], counts: [1, 0] },
      { at: '2024-06-01T12:00:00Z', temporality: 'delta', bounds: [1], counts: [2, 0] },
      { at: '2024-06-01T12:00:00.001Z', temporality: 'delta', bounds: [1], counts: [100, 0] },
    ]);
    const cells: Cell[] = (await histogram(key, { metric_name: 'w' })).json().cells;
    expect(cells.filter((c) => !c.upper_bound_infinite).map((c) => [c.timestamp, c.count])).toEqual([
      ['2024-05-31T12:00:00.000Z', 1],
      ['2024-06-01T12:00:00.000Z', 2],
    ]);
  });

  it('"No aggregation or group-by": those fields, and any other unknown field, are 400', async () => {
    const { key } = await fresh();
    for (const extra of [{ aggregation: 'sum' }, { group_by: ['host'] }, { filters: [] }, { service_name: 'api' }]) {
      const r = await histogram(key, { metric_name: 'lat', ...extra });
      expect(r.statusCode, JSON.stringify(extra)).toBe(400);
      expect(r.json().message).toContain(`unknown field "${Object.keys(extra)[0]}"`);
    }
  });

  it('histogram step, time_range and points-per-series rules are those of the aggregate', async () => {
    const { key } = await fresh();
    const bad = async (body: object, text: string) => {
      const r = await histogram(key, { metric_name: 'lat', ...body });
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
      expect(r.json().message).toContain(text);
    };
    await bad({ step: '2m' }, 'must be one of');
    await bad({ step: '1m' }, '500 points per series');
    await bad({ time_range: { start: 'soon' } }, 'time_range.start');
    await bad({ time_range: { start: NOW, end: WINDOW.start } }, 'must not be after');
    expect((await histogram(key, {})).json().message).toContain('metric_name');
  });
});
