/** DELETE /metrics/{metric_name} over HTTP (spec 1, "Metrics endpoints": "Deleting a metric is durable"). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { insertHistograms, insertMetric, insertPoints, insertSeries, storedRows, tombstoneRows } from './test-data.js';

const NOW = '2024-06-01T12:00:00.000Z';
const WINDOW = { start: '2024-06-01T00:00:00Z', end: '2024-06-01T23:00:00Z' };

describe('metric delete', () => {
  const clock = fixedClock(NOW);
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock });
  });
  afterAll(async () => t.close());

  const fresh = () => projectWithKey(t, ['metrics:read', 'metrics:delete']);
  const del = (key: string, encodedName: string) => t.call({ method: 'DELETE', url: `/api/v1/metrics/${encodedName}`, key });
  const sum = async (key: string, name: string) =>
    (await t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key, payload: { metric_name: name, aggregation: 'sum', step: '1d', time_range: WINDOW } }))
      .json()
      .series.map((s: { points: { value: number }[] }) => s.points.map((p) => p.value));
  const names = async (key: string) => (await t.call({ method: 'GET', url: '/api/v1/metrics/names', key })).json().metrics.map((m: { name: string }) => m.name);
  const labels = async (key: string, name: string) =>
    (await t.call({ method: 'GET', url: `/api/v1/metrics/${encodeURIComponent(name)}/labels`, key })).json().labels;
  const cells = async (key: string, name: string) =>
    (await t.call({ method: 'POST', url: '/api/v1/metrics/histogram', key, payload: { metric_name: name, step: '1d', time_range: WINDOW } })).json().cells;
  const stored = (projectId: string, name: string) => storedRows(t, projectId, name);

  it('"removes every datapoint of that name in one project": 200 {metric_name, deleted: true, deleted_at}; the rows are gone', async () => {
    clock.set(NOW);
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'cpu', labels: { host: 'a' } }, [
      ['2024-06-01T01:00:00Z', 1],
      ['2024-06-01T11:59:59.999Z', 2],
    ]);
    const r = await del(key, 'cpu');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ metric_name: 'cpu', deleted: true, deleted_at: NOW });
    expect(await stored(projectId, 'cpu')).toBe(0);
    expect(await sum(key, 'cpu')).toEqual([]);
    expect(await names(key)).toEqual([]);
    expect(await labels(key, 'cpu')).toEqual([]);
  });

  it('"its datapoints disappear from queries, series" including histograms', async () => {
    clock.set(NOW);
    const { projectId, key } = await fresh();
    const seriesId = await insertSeries(t, { projectId, name: 'lat', type: 'histogram' });
    await insertHistograms(t, { projectId, name: 'lat', seriesId }, [{ at: '2024-06-01T01:00:00Z', temporality: 'delta', bounds: [1], counts: [1, 1] }]);
    await insertPoints(t, { projectId, name: 'lat', seriesId }, [['2024-06-01T01:00:00Z', 0.5]]);
    expect(await cells(key, 'lat')).toHaveLength(2);
    expect((await del(key, 'lat')).statusCode).toBe(200);
    expect(await cells(key, 'lat')).toEqual([]);
    expect(await stored(projectId, 'lat')).toBe(0);
  });

  it('"later or retried copies sent by clients stay hidden" (stamped at or before the delete) in every read; points stamped after it are new data', async () => {
    clock.set(NOW);
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'req', labels: { v: 'orig' } }, [['2024-06-01T10:00:00Z', 1]]);
    expect((await del(key, 'req')).statusCode).toBe(200);
    // A retried copy of old data and a point stamped exactly at the deletion arrive afterwards.
    await insertMetric(t, { projectId, name: 'req', labels: { v: 'retry' } }, [
      ['2024-06-01T10:00:00Z', 1],
      [NOW, 10],
    ]);
    const hseries = await insertSeries(t, { projectId, name: 'req', type: 'histogram', labels: { v: 'retry' } });
    await insertHistograms(t, { projectId, name: 'req', seriesId: hseries }, [{ at: '2024-06-01T10:00:00Z', temporality: 'delta', bounds: [1], counts: [1, 0] }]);
    expect(await sum(key, 'req')).toEqual([]);
    expect(await names(key)).toEqual([]);
    expect(await labels(key, 'req')).toEqual([]);
    expect(await cells(key, 'req')).toEqual([]);
    // New data stamped after the deletion is visible.
    await insertMetric(t, { projectId, name: 'req', labels: { v: 'new' } }, [['2024-06-01T12:00:00.001Z', 100]]);
    expect(await sum(key, 'req')).toEqual([[100]]);
    expect(await names(key)).toEqual(['req']);
    expect(await labels(key, 'req')).toEqual([{ name: 'v', values: ['new'] }]);
  });

  it('cumulative histograms restarting after a delete count only what follows it', async () => {
    clock.set('2024-06-01T02:30:00Z');
    const { projectId, key } = await fresh();
    const seriesId = await insertSeries(t, { projectId, name: 'h', type: 'histogram' });
    const sample = (at: string, startAt: string, c: number) => ({ at, startAt, temporality: 'cumulative' as const, bounds: [], counts: [c] });
    await insertHistograms(t, { projectId, name: 'h', seriesId }, [sample('2024-06-01T02:00:00Z', '2024-06-01T01:00:00Z', 5)]);
    expect((await del(key, 'h')).statusCode).toBe(200);
    // The series keeps reporting since 01:00 (before the delete): its first visible sample is only the baseline.
    await insertHistograms(t, { projectId, name: 'h', seriesId }, [
      sample('2024-06-01T03:00:00Z', '2024-06-01T01:00:00Z', 8),
      sample('2024-06-01T04:00:00Z', '2024-06-01T01:00:00Z', 10),
    ]);
    expect((await cells(key, 'h')).map((c: { count: number }) => c.count)).toEqual([2]);
    clock.set(NOW);
  });

  it('"Traces, logs, errors and other metrics are untouched", also the same name in another project', async () => {
    clock.set(NOW);
    const a = await fresh();
    const b = await fresh();
    await insertMetric(t, { projectId: a.projectId, name: 'cpu' }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId: a.projectId, name: 'cpu.total' }, [['2024-06-01T01:00:00Z', 2]]);
    await insertMetric(t, { projectId: a.projectId, name: 'CPU' }, [['2024-06-01T01:00:00Z', 3]]);
    await insertMetric(t, { projectId: b.projectId, name: 'cpu' }, [['2024-06-01T01:00:00Z', 4]]);
    expect((await del(a.key, 'cpu')).statusCode).toBe(200);
    expect(await names(a.key)).toEqual(['CPU', 'cpu.total']);
    expect(await sum(a.key, 'cpu.total')).toEqual([[2]]);
    expect(await sum(b.key, 'cpu')).toEqual([[4]]);
    expect(await stored(b.projectId, 'cpu')).toBe(1);
  });

  it('deleting a name with no data still answers 200 and tombstones it (idempotent); a repeat keeps the later deletion time', async () => {
    clock.set(NOW);
    const { projectId, key } = await fresh();
    expect((await del(key, 'never')).json()).toEqual({ metric_name: 'never', deleted: true, deleted_at: NOW });
    await insertMetric(t, { projectId, name: 'never' }, [['2024-06-01T11:00:00Z', 1]]);
    expect(await sum(key, 'never')).toEqual([]);
    // A clock that went backwards does not move the tombstone back.
    clock.set('2024-06-01T06:00:00Z');
    expect((await del(key, 'never')).json().deleted_at).toBe(NOW);
    clock.set('2024-06-01T13:00:00Z');
    expect((await del(key, 'never')).json().deleted_at).toBe('2024-06-01T13:00:00.000Z');
    clock.set(NOW);
  });

  it('defect: 20 concurrent identical deletes all answer the same 200 ("deleting must be idempotent and safe under concurrency"), one tombstone, the data gone', async () => {
    clock.set(NOW);
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'race' }, [['2024-06-01T01:00:00Z', 1]]);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => del(key, 'race')));
      expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      expect(new Set(answers.map((r) => r.body))).toEqual(new Set([JSON.stringify({ metric_name: 'race', deleted: true, deleted_at: NOW })]));
    }
    expect(await stored(projectId, 'race')).toBe(0);
    expect(await tombstoneRows(t, projectId, 'race')).toBe(1);
  });

  it('the metric name is URL-encoded in the path (a%2Fb deletes "a/b", not "a" or "b")', async () => {
    clock.set(NOW);
    const { projectId, key } = await fresh();
    for (const name of ['a/b', 'a', 'b', 'x y.z']) await insertMetric(t, { projectId, name }, [['2024-06-01T01:00:00Z', 1]]);
    expect((await del(key, 'a%2Fb')).json().metric_name).toBe('a/b');
    expect((await del(key, encodeURIComponent('x y.z'))).json().metric_name).toBe('x y.z');
    expect(await names(key)).toEqual(['a', 'b']);
  });

  it('an organization-level key deletes in the project it names', async () => {
    clock.set(NOW);
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'cpu' }, [['2024-06-01T01:00:00Z', 1]]);
    const r = await t.call({ method: 'DELETE', url: `/api/v1/metrics/cpu?project_id=${projectId}` });
    expect(r.statusCode).toBe(200);
    expect(await names(key)).toEqual([]);
  });
});
