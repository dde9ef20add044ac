/** The aggregate over ~200k points: results checked against a JS computation; query time printed, not asserted. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import type { MetricRows, SeriesRow } from './rows.js';
import { labelsJson, writeRows } from './test-data.js';

const T0 = Date.parse('2024-06-01T00:00:00Z');
const MINUTE = 60_000;
const SERIES = 200;
const POINTS = 1000; // per series, one a minute
const HOSTS = 20;

/** The value of point j of series i: small integers, so sums and means are exact. */
const valueOf = (i: number, j: number) => (i % 7) + (j % 13);

function quantileCont(sorted: number[], q: number): number {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

describe('metrics aggregate at volume', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock('2024-06-02T00:00:00Z') });
    const p = await projectWithKey(t, ['metrics:read']);
    key = p.key;
    // Through the port, in one write per 20 series (20k points), as ingestion would hand them over.
    const series: SeriesRow[] = Array.from({ length: SERIES }, (_, i) => ({
      seriesId: 5_000_000n + BigInt(i),
      name: 'load',
      type: 'gauge',
      serviceName: 'api',
      environment: 'prod',
      labels: labelsJson({ host: `h${i % HOSTS}`, i: String(i) }),
    }));
    const started = performance.now();
    for (let first = 0; first < SERIES; first += 20) {
      const part = series.slice(first, first + 20);
      const rows: MetricRows = { series: part, pointSeries: [], pointTs: [], pointValue: [], histograms: [] };
      part.forEach((_, k) => {
        for (let j = 0; j < POINTS; j++) {
          rows.pointSeries.push(k);
          rows.pointTs.push(T0 + j * MINUTE);
          rows.pointValue.push(valueOf(first + k, j));
        }
      });
      await writeRows(t, p.projectId, rows);
    }
    console.log(`wrote ${SERIES * POINTS} points through the ${t.ctx.telemetry.kind} metrics writer: ${(performance.now() - started).toFixed(1)} ms`);
  });
  afterAll(async () => t.close());

  const aggregate = (body: object) => t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key, payload: body });

  it(`avg by 1h grouped by one label over ${SERIES * POINTS} points matches a direct computation`, async () => {
    const expected = new Map<string, Map<number, { sum: number; n: number }>>();
    for (let i = 0; i < SERIES; i++) {
      const host = `h${i % HOSTS}`;
      if (!expected.has(host)) expected.set(host, new Map());
      const byBucket = expected.get(host)!;
      for (let j = 0; j < POINTS; j++) {
        const ts = T0 + j * MINUTE;
        const bucket = Math.floor(ts / 3_600_000) * 3_600_000;
        const acc = byBucket.get(bucket) ?? { sum: 0, n: 0 };
        acc.sum += valueOf(i, j);
        acc.n += 1;
        byBucket.set(bucket, acc);
      }
    }
    const body = { metric_name: 'load', step: '1h', aggregation: 'avg', group_by: ['host'], time_range: { start: '2024-06-01T00:00:00Z', end: '2024-06-01T23:59:59Z' } };
    await aggregate(body); // warm-up
    const started = performance.now();
    const r = await aggregate(body);
    const elapsed = performance.now() - started;
    console.log(`aggregate avg/1h group_by host over ${SERIES * POINTS} points: ${elapsed.toFixed(1)} ms (HTTP round trip, in-process)`);
    expect(r.statusCode).toBe(200);
    const series = r.json().series as { labels: { host: string }; points: { timestamp: string; value: number }[] }[];
    expect(series).toHaveLength(HOSTS);
    expect(series.map((s) => s.labels.host)).toEqual([...expected.keys()].sort());
    for (const s of series) {
      const want = expected.get(s.labels.host)!;
      expect(s.points.map((p) => Date.parse(p.timestamp))).toEqual([...want.keys()].sort((a, b) => a - b));
      for (const p of s.points) {
        const acc = want.get(Date.parse(p.timestamp))!;
        expect(p.value).toBeCloseTo(acc.sum / acc.n, 9);
      }
    }
  });

  it('p95 by 5m over a two-hour window matches exact continuous quantiles', async () => {
    const start = T0 + 60 * MINUTE;
    const end = T0 + 180 * MINUTE; // closed: the point at `end` opens one more bucket
    const buckets = new Map<number, number[]>();
    for (let i = 0; i < SERIES; i++)
      for (let j = 0; j < POINTS; j++) {
        const ts = T0 + j * MINUTE;
        if (ts < start || ts > end) continue;
        const b = Math.floor(ts / 300_000) * 300_000;
        if (!buckets.has(b)) buckets.set(b, []);
        buckets.get(b)!.push(valueOf(i, j));
      }
    const body = { metric_name: 'load', step: '5m', aggregation: 'p95', time_range: { start: new Date(start).toISOString(), end: new Date(end).toISOString() } };
    await aggregate(body); // warm-up
    const started = performance.now();
    const r = await aggregate(body);
    const elapsed = performance.now() - started;
    console.log(`aggregate p95/5m over a 2 h window (${SERIES} series): ${elapsed.toFixed(1)} ms (HTTP round trip, in-process)`);
    const points = r.json().series[0].points as { timestamp: string; value: number }[];
    expect(points).toHaveLength(buckets.size);
    for (const p of points) {
      const values = buckets.get(Date.parse(p.timestamp))!.sort((a, b) => a - b);
      expect(p.value).toBeCloseTo(quantileCont(values, 0.95), 9);
    }
  });
});
