import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MetricsWriter } from './metrics-writer.js';
import type { MetricRows, SeriesRow } from '../../../domains/metrics/rows.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import { openTelemetryDb, type TelemetryDb } from './open.js';

let db: TelemetryDb;
let writer: MetricsWriter;
let statements: string[];

beforeEach(async () => {
  db = await openTelemetryDb({ memory: true });
  writer = new MetricsWriter(db);
  statements = [];
  const run = db.writer.run.bind(db.writer);
  db.writer.run = ((sql: string, ...rest: never[]) => {
    statements.push(sql);
    return run(sql, ...rest);
  }) as typeof db.writer.run;
});
afterEach(async () => {
  await writer.stop();
  await db.close();
});

const series = (id: bigint, name = 'm'): SeriesRow => ({ seriesId: id, name, type: 'gauge', serviceName: 'svc', environment: null, labels: `{"i":"${id}"}` });

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

const count = (sql: string) => db.read(async (c) => Number((await c.runAndReadAll(sql)).getRows()[0][0]));
const commits = () => statements.filter((s) => s === 'COMMIT').length;

describe('MetricsWriter (group commit)', () => {
  it('writes that arrive together are committed in one transaction, and each waiter resolves after COMMIT', async () => {
    const writes = Array.from({ length: 20 }, (_, i) => writer.write(`p${i % 2}`, rowsOf([series(BigInt(i))], [[0, 1000 + i, i]])));
    await Promise.all(writes);
    expect(commits()).toBe(1);
    expect(await count('SELECT count(*) FROM metric_points')).toBe(20);
    expect(await count('SELECT count(*) FROM metric_series')).toBe(20);
  });

  it('writes queued while a flush runs go together in the next flush', async () => {
    const first = writer.write('p', rowsOf([series(1n)], [[0, 1, 1]]));
    await new Promise((r) => setImmediate(r)); // the first flush has started
    const more = Array.from({ length: 10 }, (_, i) => writer.write('p', rowsOf([series(1n)], [[0, 2 + i, 1]])));
    await Promise.all([first, ...more]);
    expect(commits()).toBe(2);
    expect(await count('SELECT count(*) FROM metric_points')).toBe(11);
  });

  it('a write issued right after the previous one resolved is committed (the loop never misses a wake-up)', async () => {
    for (let i = 0; i < 50; i++) await writer.write('p', rowsOf([series(BigInt(i % 3))], [[0, i, i]]));
    expect(await count('SELECT count(*) FROM metric_points')).toBe(50);
    expect(await count('SELECT count(*) FROM metric_series')).toBe(3);
  });

  it('points reference their series; a series is inserted once (INSERT OR IGNORE plus the known-series cache)', async () => {
    const s = [series(10n, 'a'), series(11n, 'b')];
    await writer.write('p', rowsOf(s, [[0, 1, 1], [1, 1, 2], [0, 2, 3]], true));
    await writer.write('p', rowsOf(s, [[1, 3, 4]]));
    await writer.write('q', rowsOf([s[0]], [[0, 3, 4]])); // same series id in another project: its own row
    expect(await db.read(async (c) => (await c.runAndReadAll('SELECT project_id, name, series_id FROM metric_points ORDER BY project_id, ts, value')).getRows())).toEqual([
      ['p', 'a', 10n],
      ['p', 'b', 11n],
      ['p', 'a', 10n],
      ['p', 'b', 11n],
      ['q', 'a', 10n],
    ]);
    expect(await count('SELECT count(*) FROM metric_series')).toBe(3);
    expect(statements.filter((x) => x.startsWith('INSERT'))).toEqual([]); // series go through one prepared statement, not run()
    const h = await db.read(async (c) => (await c.runAndReadAll('SELECT count, sum, bounds, counts, start_ts, temporality FROM metric_histograms')).getRowsJson());
    expect(h).toEqual([['3', 1.5, [1], ['1', '2'], null, 'delta']]);
  });

  it('a failed commit rejects its waiters and stores none of it; the next flush stores its series again', async () => {
    const run = db.writer.run.bind(db.writer);
    let fail = true;
    db.writer.run = ((sql: string, ...rest: never[]) => (sql === 'COMMIT' && fail ? Promise.reject(new Error('disk full')) : run(sql, ...rest))) as typeof db.writer.run;
    const results = await Promise.allSettled([
      writer.write('p', rowsOf([series(1n)], [[0, 1, 1]])),
      writer.write('p', rowsOf([series(2n)], [[0, 2, 2]])),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await count('SELECT count(*) FROM metric_points')).toBe(0);
    expect(await count('SELECT count(*) FROM metric_series')).toBe(0);
    fail = false;
    await writer.write('p', rowsOf([series(1n)], [[0, 3, 3]]));
    expect(await count('SELECT count(*) FROM metric_series')).toBe(1);
    expect(await count('SELECT count(*) FROM metric_points')).toBe(1);
  });

  it('a request that cannot be committed fails alone: the others of its flush are retried one by one and stored', async () => {
    const bad = rowsOf([series(5n)], [[0, 1, 1]], true);
    bad.histograms[0].bounds = ['not a number' as unknown as number];
    const results = await Promise.allSettled([
      writer.write('p', rowsOf([series(4n)], [[0, 1, 1]])),
      writer.write('p', bad),
      writer.write('p', rowsOf([series(6n)], [[0, 2, 2]], true)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await count('SELECT count(*) FROM metric_points')).toBe(2);
    expect(await count('SELECT count(*) FROM metric_histograms')).toBe(1);
    expect(await db.read(async (c) => (await c.runAndReadAll('SELECT series_id FROM metric_series ORDER BY 1')).getRows())).toEqual([[4n], [6n]]);
  });

  it('exclusive() runs on the writer connection between flushes', async () => {
    const w = writer.write('p', rowsOf([series(1n)], [[0, 1, 1]]));
    const n = await writer.exclusive(async (c) => Number((await c.runAndReadAll('SELECT count(*) FROM metric_points')).getRows()[0][0]));
    await w;
    expect(n).toBe(0); // ran before the queued flush, not inside its transaction
  });

  it('stop() commits what is queued, then refuses new writes', async () => {
    const pending = writer.write('p', rowsOf([series(1n)], [[0, 1, 1]]));
    await writer.stop();
    await pending;
    expect(await count('SELECT count(*) FROM metric_points')).toBe(1);
    await expect(writer.write('p', rowsOf([series(1n)], [[0, 2, 1]]))).rejects.toBeInstanceOf(WriterStoppedError);
  });

  it('more than one statement-full of new series (200 per INSERT) in one flush', async () => {
    const many = Array.from({ length: 450 }, (_, i) => series(BigInt(1000 + i)));
    await writer.write('p', rowsOf(many, many.map((_s, i) => [i, i + 1, i])));
    expect(await count('SELECT count(*) FROM metric_series')).toBe(450);
    expect(await count('SELECT count(DISTINCT series_id) FROM metric_points')).toBe(450);
  });

  it('every column reads back as written: long and short strings, several names per chunk, large and negative int64s', async () => {
    const project = 'a-project-id-longer-than-twelve-bytes';
    const names = ['short', 'a.metric.name.longer.than.twelve.bytes', 'm\u00e9trique-\u00fcnicode-name'];
    const s = names.flatMap((name, k) => [series(BigInt(10 + 2 * k), name), series(2n ** 64n - 1n - BigInt(k), name)]);
    const n = 5000; // three chunks
    const rows = rowsOf(
      s,
      Array.from({ length: n }, (_, i) => [(i * 7) % s.length, 1_700_000_000_000 + i * 60_000 + (i % 2 ? 2 ** 40 : 0), i / 4 - 3]),
    );
    rows.pointStart = Array.from({ length: n }, (_, i) => (i % 5 === 0 ? -1 : i % 5 === 1 ? NaN : 1_600_000_000_000 + i));
    await writer.write(project, rows);
    const got = await db.read(async (c) =>
      (await c.runAndReadAll(`SELECT project_id, name, series_id::VARCHAR, ts, value, start_ts FROM metric_points ORDER BY ts, value`)).getRows(),
    );
    const want = Array.from({ length: n }, (_, i) => {
      const r = s[(i * 7) % s.length];
      const start = rows.pointStart![i];
      return [project, r.name, String(r.seriesId), BigInt(rows.pointTs[i]), rows.pointValue[i], Number.isNaN(start) ? null : BigInt(start)];
    }).sort((a, b) => Number((a[3] as bigint) - (b[3] as bigint)) || (a[4] as number) - (b[4] as number));
    expect(got).toEqual(want);
  });

  it('start_ts: NULL unless pointStart gives one (NaN is NULL), across chunk boundaries', async () => {
    const n = 5000;
    const rows = rowsOf([series(1n)], Array.from({ length: n }, (_, i) => [0, i, i] as [number, number, number]));
    rows.pointStart = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 100 + i : i % 3 === 1 ? NaN : -1));
    await writer.write('p', rows);
    await writer.write('q', rowsOf([series(2n)], [[0, 1, 1]]));
    const [[wrong, nulls, unknown, total]] = await db.read(async (c) =>
      (
        await c.runAndReadAll(`SELECT count(*) FILTER (WHERE project_id = 'p' AND ts % 3 = 0 AND start_ts IS DISTINCT FROM 100 + ts)
                                      + count(*) FILTER (WHERE project_id = 'p' AND ts % 3 = 2 AND start_ts IS DISTINCT FROM -1),
                                      count(*) FILTER (WHERE start_ts IS NULL), count(*) FILTER (WHERE start_ts = -1), count(*) FROM metric_points`)
      ).getRows(),
    );
    const third = (r: number) => BigInt(Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 === r).length);
    expect([wrong, nulls, unknown, total]).toEqual([0n, third(1) + 1n, third(2), BigInt(n + 1)]);
    // Chunks of counters only (no NULL at all).
    const counters = rowsOf([series(3n)], Array.from({ length: n }, (_, i) => [0, i, i] as [number, number, number]));
    counters.pointStart = Array.from({ length: n }, (_, i) => 7 + i);
    await writer.write('r', counters);
    expect(await count(`SELECT count(*) FROM metric_points WHERE project_id = 'r' AND start_ts = 7 + ts`)).toBe(n);
  });
});

describe('metric_points.start_ts schema upgrade', () => {
  it('a data file from before start_ts gains the column on open: old rows read NULL, new points append', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-upgrade-'));
    try {
      const old = await DuckDBInstance.create(path.join(dir, 'telemetry.duckdb'));
      const c = await old.connect();
      await c.run('CREATE TABLE metric_points (project_id VARCHAR NOT NULL, name VARCHAR NOT NULL, series_id UBIGINT NOT NULL, ts BIGINT NOT NULL, value DOUBLE NOT NULL)');
      await c.run("INSERT INTO metric_points VALUES ('p', 'm', 1, 1000, 2.5)");
      c.closeSync();
      old.closeSync();

      for (let open = 0; open < 2; open++) {
        const upgraded = await openTelemetryDb({ dataDir: dir });
        const w = new MetricsWriter(upgraded);
        try {
          const rows = rowsOf([series(1n)], [[0, 2000 + open, 3]]);
          rows.pointStart = [500];
          await w.write('p', rows);
          const got = await upgraded.read(async (r) => (await r.runAndReadAll('SELECT ts, value, start_ts FROM metric_points ORDER BY ts')).getRows());
          expect(got).toEqual([[1000n, 2.5, null], [2000n, 3, 500n], ...(open === 1 ? [[2001n, 3, 500n]] : [])]);
        } finally {
          await w.stop();
          await upgraded.close();
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
