/**
 * ChMetricsWriter (and the ClickHouse-specific reads of ChMetricsQuery) against the run's ClickHouse
 * endpoint: group commit, failures without a transaction, every column read back, copies of rows the
 * engine keeps until a merge. The domain tests (domains/metrics, SVC_TEST_TELEMETRY=clickhouse) cover the
 * reads' behaviour; this file covers what only ClickHouse has. Timings are printed, not asserted.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetricRows, SeriesRow } from '../../../domains/metrics/rows.js';
import { PartialWriteError, WriterStoppedError } from '../../../lib/writer-stopped.js';
import { openTestChDb, type TestChDb } from '../../../testing/clickhouse.js';
import { chForecastHistory } from './forecast-history.js';
import { ChMetricsQuery } from './metrics-query.js';
import { ChMetricsWriter } from './metrics-writer.js';

let db: TestChDb;
let writer: ChMetricsWriter;
let inserts: { table: string; rows: number }[];
/** Makes the next inserts of a table fail (when `when` says so). */
let failInsert: ((table: string, rows: readonly object[]) => boolean) | undefined;

beforeEach(async () => {
  db = await openTestChDb();
  inserts = [];
  failInsert = undefined;
  const insert = db.client.insert.bind(db.client);
  db.client.insert = (table, rows) => {
    if (failInsert?.(table, rows)) return Promise.reject(new Error(`injected failure of an insert into ${table}`));
    inserts.push({ table, rows: rows.length });
    return insert(table, rows);
  };
  writer = new ChMetricsWriter(db);
});
afterEach(async () => {
  await writer.stop();
  await db.drop();
});

const series = (id: bigint, name = 'm', extra: Partial<SeriesRow> = {}): SeriesRow => ({
  seriesId: id,
  name,
  type: 'gauge',
  serviceName: 'svc',
  environment: null,
  labels: `{"i":"${id}"}`,
  ...extra,
});

function rowsOf(s: SeriesRow[], points: [number, number, number][], histograms = false): MetricRows {
  return {
    series: s,
    pointSeries: points.map(([i]) => i),
    pointTs: points.map(([, ts]) => ts),
    pointValue: points.map(([, , v]) => v),
    histograms: histograms
      ? [{ name: s[0].name, seriesId: s[0].seriesId, ts: 1000, startTs: null, temporality: 'delta', count: 3n, sum: 1.5, bounds: [1], counts: [1n, 2n] }]
      : [],
  };
}

const count = async (sql: string) => Number((await db.client.query<{ n: string }>(sql))[0].n);
const insertsInto = (table: string) => inserts.filter((i) => i.table === table).length;

describe('ChMetricsWriter (group commit on ClickHouse)', () => {
  it('writes that arrive together go in one insert per table, and each waiter resolves after it', async () => {
    const writes = Array.from({ length: 20 }, (_, i) => writer.write(`p${i % 2}`, rowsOf([series(BigInt(i))], [[0, 1000 + i, i]], i === 3)));
    await Promise.all(writes);
    expect(inserts).toEqual([
      { table: 'metric_series', rows: 20 },
      { table: 'metric_points', rows: 20 },
      { table: 'metric_histograms', rows: 1 },
    ]);
    expect(await count('SELECT count() AS n FROM metric_points')).toBe(20);
    expect(await count('SELECT count() AS n FROM metric_series')).toBe(20);
  });

  it('writes queued while a flush runs go together in the next flush; a known series is not inserted again', async () => {
    const first = writer.write('p', rowsOf([series(1n)], [[0, 1, 1]]));
    await new Promise((r) => setImmediate(r)); // the first flush has started
    const more = Array.from({ length: 10 }, (_, i) => writer.write('p', rowsOf([series(1n)], [[0, 2 + i, 1]])));
    await Promise.all([first, ...more]);
    expect(insertsInto('metric_points')).toBe(2);
    expect(insertsInto('metric_series')).toBe(1);
    expect(await count('SELECT count() AS n FROM metric_points')).toBe(11);
  });

  it('a write issued right after the previous one resolved is stored (the loop never misses a wake-up)', async () => {
    for (let i = 0; i < 30; i++) await writer.write('p', rowsOf([series(BigInt(i % 3))], [[0, i, i]]));
    expect(await count('SELECT count() AS n FROM metric_points')).toBe(30);
    expect(await count('SELECT count() AS n FROM metric_series')).toBe(3);
  });

  it('a failed series insert refuses its requests and stores none of their points; the next write stores the series again', async () => {
    failInsert = (table) => table === 'metric_series';
    const results = await Promise.allSettled([writer.write('p', rowsOf([series(1n)], [[0, 1, 1]])), writer.write('p', rowsOf([series(2n)], [[0, 2, 2]]))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(results.map((r) => (r as PromiseRejectedResult).reason instanceof PartialWriteError)).toEqual([false, false]);
    expect(await count('SELECT count() AS n FROM metric_points')).toBe(0);
    failInsert = undefined;
    await writer.write('p', rowsOf([series(1n)], [[0, 3, 3]]));
    expect(await count('SELECT count() AS n FROM metric_series')).toBe(1);
    expect(await count('SELECT count() AS n FROM metric_points')).toBe(1);
  });

  it('a request whose rows cannot be stored fails alone: only the failed table is retried, request by request, so nothing is stored twice', async () => {
    // Histogram inserts holding request 5's sample fail; its points went in with the batch: a partial write.
    failInsert = (table, rows) => table === 'metric_histograms' && rows.some((r) => (r as { series_id: string }).series_id === '5');
    const results = await Promise.allSettled([
      writer.write('p', rowsOf([series(4n)], [[0, 1, 1]], true)),
      writer.write('p', rowsOf([series(5n)], [[0, 1, 1]], true)),
      writer.write('p', rowsOf([series(6n)], [[0, 2, 2]], true)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(PartialWriteError);
    expect(await count('SELECT count() AS n FROM metric_points')).toBe(3);
    expect(inserts.filter((i) => i.table === 'metric_points')).toEqual([{ table: 'metric_points', rows: 3 }]);
    expect(await db.client.query('SELECT series_id FROM metric_histograms ORDER BY series_id')).toEqual([{ series_id: '4' }, { series_id: '6' }]);
  });

  it('stop() stores what is queued, then refuses new writes', async () => {
    const pending = writer.write('p', rowsOf([series(1n)], [[0, 1, 1]]));
    await writer.stop();
    await pending;
    expect(await count('SELECT count() AS n FROM metric_points')).toBe(1);
    await expect(writer.write('p', rowsOf([series(1n)], [[0, 2, 1]]))).rejects.toBeInstanceOf(WriterStoppedError);
  });

  it('every column reads back as written: unicode names, series ids up to 2^64 - 1, large and negative times, start_ts NULL / -1 / set', async () => {
    const project = 'a-project-id-longer-than-twelve-bytes';
    const names = ['short', 'a.metric.name "quoted" \\ back', 'm\u00e9trique-\u00fcnicode-name\ttab'];
    const s = names.flatMap((name, k) => [series(BigInt(10 + 2 * k), name), series(2n ** 64n - 1n - BigInt(k), name, { type: 'counter', environment: 'prod', labels: '{"a":"\\"x\\""}' })]);
    const n = 3000;
    const rows = rowsOf(s, Array.from({ length: n }, (_, i) => [(i * 7) % s.length, 1_700_000_000_000 + i * 60_000 + (i % 2 ? 2 ** 40 : 0) - (i % 3 === 0 ? 2 ** 50 : 0), i / 4 - 3 + 1e-9]));
    rows.pointStart = Array.from({ length: n }, (_, i) => (i % 5 === 0 ? -1 : i % 5 === 1 ? NaN : 1_600_000_000_000 + i));
    rows.histograms = [{ name: names[2], seriesId: s[5].seriesId, ts: -5, startTs: 7, temporality: 'cumulative', count: 2n ** 63n, sum: null, bounds: [0.5, 1e300], counts: [1n, 2n ** 63n - 2n, 1n] }];
    await writer.write(project, rows);
    const got = await db.client.query<{ project_id: string; name: string; series_id: string; ts: string; value: number; start_ts: string | null }>(
      'SELECT project_id, name, series_id, ts, value, start_ts FROM metric_points ORDER BY ts, value',
    );
    const want = Array.from({ length: n }, (_, i) => {
      const r = s[(i * 7) % s.length];
      const start = rows.pointStart![i];
      return { project_id: project, name: r.name, series_id: String(r.seriesId), ts: String(rows.pointTs[i]), value: rows.pointValue[i], start_ts: Number.isNaN(start) ? null : String(start) };
    }).sort((a, b) => Number(BigInt(a.ts) - BigInt(b.ts)) || a.value - b.value);
    expect(got).toEqual(want);
    const stored = await db.client.query('SELECT series_id, name, type, service_name, environment, labels FROM metric_series ORDER BY series_id');
    expect(stored).toEqual(
      [...s].sort((a, b) => (a.seriesId < b.seriesId ? -1 : 1)).map((r) => ({ series_id: String(r.seriesId), name: r.name, type: r.type, service_name: r.serviceName, environment: r.environment, labels: r.labels })),
    );
    // Through the store port: the histogram sample as written.
    const samples: unknown[] = [];
    await new ChMetricsQuery(db).histogramSamples({ projectId: project, metricName: names[2], startMs: -10, endMs: 0 }, (x) => samples.push(x));
    expect(samples).toEqual([{ seriesId: s[5].seriesId, ts: -5, startTs: 7, temporality: 'cumulative', count: 2n ** 63n, sum: null, bounds: [0.5, 1e300], counts: [1n, 2n ** 63n - 2n, 1n] }]);
  });

  it('unit and description: the latest sent wins, also two sent in the same millisecond; an unchanged pair is not written again', async () => {
    const q = new ChMetricsQuery(db);
    const withMeta = (unit: string) => ({ ...rowsOf([series(1n, 'lat')], [[0, 1, 1]]), metadata: [{ name: 'lat', unit, description: 'latency' }] });
    await Promise.all([writer.write('p', withMeta('ms')), writer.write('p', withMeta('s'))]);
    expect((await q.describe('p', 'lat')).metadata).toEqual({ unit: 's', description: 'latency' });
    await writer.write('p', withMeta('us'));
    await writer.write('p', withMeta('us'));
    expect(insertsInto('metric_metadata')).toBe(2);
    expect((await q.describe('p', 'lat')).metadata).toEqual({ unit: 'us', description: 'latency' });
    expect((await q.names('p', {}, 10)).names).toEqual([{ name: 'lat', type: 'gauge', metadata: { unit: 'us', description: 'latency' } }]);
  });
});

describe('ChMetricsQuery over rows ClickHouse keeps in several copies until a merge', () => {
  it('copies of a series row (forgotten cache, several nodes) never count a point twice; copies of a tombstone are one', async () => {
    const q = new ChMetricsQuery(db);
    const s = series(1n, 'cpu', { labels: '{"host":"a"}' });
    await writer.write('p', rowsOf([s], [[0, 1000, 2], [0, 2000, 4]]));
    writer.forgetSeries('p');
    await writer.write('p', rowsOf([s], [[0, 3000, 6]]));
    writer.forgetSeries();
    await writer.write('p', rowsOf([s], []));
    expect(await count("SELECT count() AS n FROM metric_series WHERE project_id = 'p'")).toBe(3);
    const agg = (groupBy: string[], filters: { key: string; values: string[] }[] = []) =>
      q.aggregate({ projectId: 'p', metricName: 'cpu', startMs: 0, endMs: 10_000, stepMs: 10_000, aggregation: 'sum', groupBy, filters, maxSeries: 50 });
    expect(await agg([])).toEqual({ kind: 'rows', rows: [{ group: [], bucketMs: 0, value: 12 }] });
    expect(await agg(['host'], [{ key: 'host', values: ['a'] }])).toEqual({ kind: 'rows', rows: [{ group: ['a'], bucketMs: 0, value: 12 }] });
    expect(await q.labels('p', 'cpu', {})).toEqual([{ name: 'host', values: ['a'] }]);
    expect(await q.describe('p', 'cpu')).toEqual({ types: ['gauge'], metadata: null });
    expect(await chForecastHistory(db)({ projectId: 'p', name: 'cpu', startMs: 0, endMs: 10_000, intervalMs: 10_000 })).toEqual([{ ts: 0, value: 4 }]);

    expect(await Promise.all([q.deleteMetric('p', 'cpu', 1500), q.deleteMetric('p', 'cpu', 1200), q.deleteMetric('p', 'cpu', 1500)])).toEqual([1500, 1500, 1500]);
    expect(await q.tombstone('p', 'cpu')).toBe(1500);
    expect(await count("SELECT count() AS n FROM metric_points WHERE project_id = 'p'")).toBe(2);
    // A copy of old data arriving after the delete stays hidden; it is at rest until the next delete.
    await writer.write('p', rowsOf([s], [[0, 1000, 100]]));
    expect(await agg([])).toEqual({ kind: 'rows', rows: [{ group: [], bucketMs: 0, value: 10 }] });
    expect(await q.deleteMetric('p', 'cpu', 1400)).toBe(1500);
    expect(await count("SELECT count() AS n FROM metric_points WHERE project_id = 'p'")).toBe(2);
    expect(await q.tombstone('p', 'other')).toBeNull();
  });
});

describe('ChMetricsWriter throughput (printed, not asserted)', () => {
  it('requests of 10,000 points, one at a time and 8 at once', async () => {
    const POINTS = 10_000;
    const ss = Array.from({ length: 100 }, (_, i) => series(BigInt(100 + i), `load.${i % 10}`));
    const request = (k: number): MetricRows => {
      const rows = rowsOf(ss, []);
      for (let i = 0; i < POINTS; i++) {
        rows.pointSeries.push(i % ss.length);
        rows.pointTs.push(1_700_000_000_000 + k * POINTS + i);
        rows.pointValue.push(i * 0.25);
      }
      return rows;
    };
    await writer.write('p', request(0)); // series known from here on
    let started = performance.now();
    for (let k = 1; k <= 8; k++) await writer.write('p', request(k));
    const serial = (performance.now() - started) / 8;
    started = performance.now();
    await Promise.all(Array.from({ length: 8 }, (_, k) => writer.write('p', request(9 + k))));
    const concurrent = performance.now() - started;
    console.log(
      `ChMetricsWriter: ${POINTS} points per request: ${serial.toFixed(1)} ms each one at a time (${Math.round((POINTS / serial) * 1000)} points/s); ` +
        `8 at once: ${concurrent.toFixed(1)} ms (${Math.round(((8 * POINTS) / concurrent) * 1000)} points/s, ${insertsInto('metric_points') - 9} point insert(s))`,
    );
    expect(await count("SELECT count() AS n FROM metric_points WHERE project_id = 'p'")).toBe(17 * POINTS);
  });
});
