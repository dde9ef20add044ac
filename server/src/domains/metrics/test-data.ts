/**
 * Test-only: metric rows written through the telemetry port (`metricsWriter.write`, `metrics.deleteMetric`),
 * so the read endpoints can be tested without the OTLP ingestion path, on whichever engine the test app runs
 * (SVC_TEST_TELEMETRY). Two things the port cannot express go to the engine's tables directly: a series with
 * no type (ingest always gives one: these are rows at rest from before types were kept), and the checks of
 * rows at rest (`storedRows`, `tombstoneRows`).
 */
import { BIGINT, VARCHAR } from '@duckdb/node-api';
import { chOf } from '../../testing/clickhouse.js';
import type { TestApp } from '../../testing/app.js';
import type { MetricRows, MetricType, SeriesRow } from './rows.js';

let nextSeriesId = 1n;

export interface SeriesSpec {
  projectId: string;
  name: string;
  type?: 'counter' | 'gauge' | 'histogram' | 'summary' | null;
  serviceName?: string | null;
  environment?: string | null;
  labels?: Record<string, string>;
}

/** JSON object text with sorted keys and string values, as the schema requires. */
export function labelsJson(labels: Record<string, string> = {}): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** The series written so far, by project and id: a point or sample written later names its series. */
const written = new Map<string, SeriesRow>();
const seriesKey = (projectId: string, id: bigint) => `${projectId}/${id}`;

function seriesOf(projectId: string, seriesId: bigint): SeriesRow {
  const s = written.get(seriesKey(projectId, seriesId));
  if (!s) throw new Error(`series ${seriesId} of project ${projectId} was not written by insertSeries`);
  return s;
}

const emptyRows = (series: SeriesRow[]): MetricRows => ({ series, pointSeries: [], pointTs: [], pointValue: [], histograms: [] });

/** Rows through the port, as ingestion writes them. */
export function writeRows(t: TestApp, projectId: string, rows: MetricRows): Promise<void> {
  return t.ctx.telemetry.metricsWriter.write(projectId, rows);
}

export async function insertSeries(t: TestApp, s: SeriesSpec): Promise<bigint> {
  const id = nextSeriesId++;
  const row: SeriesRow = {
    seriesId: id,
    name: s.name,
    type: (s.type ?? null) as MetricType,
    serviceName: s.serviceName ?? null,
    environment: s.environment ?? null,
    labels: labelsJson(s.labels),
  };
  written.set(seriesKey(s.projectId, id), row);
  if (row.type === null) await untyped.series(t, s.projectId, row);
  else await writeRows(t, s.projectId, emptyRows([row]));
  return id;
}

/**
 * A point as [ISO time or ms, value], or [time, value, start] for a cumulative counter sample: `start` is
 * its start_ts (ISO time or ms; -1 is the unknown start, UNKNOWN_START). Without it start_ts is NULL.
 */
export type PointSpec = [string | number, number] | [string | number, number, string | number];

export async function insertPoints(t: TestApp, p: { projectId: string; name: string; seriesId: bigint }, points: PointSpec[]): Promise<void> {
  const series = seriesOf(p.projectId, p.seriesId);
  if (series.name !== p.name) throw new Error(`series ${p.seriesId} is of metric ${series.name}, not ${p.name}`);
  const rows = emptyRows([series]);
  rows.pointSeries = points.map(() => 0);
  rows.pointTs = points.map(([at]) => toMs(at));
  rows.pointValue = points.map(([, value]) => value);
  if (points.some((x) => x[2] !== undefined)) rows.pointStart = points.map((x) => (x[2] === undefined ? NaN : toMs(x[2])));
  if (series.type === null) await untyped.points(t, p.projectId, series, rows);
  else await writeRows(t, p.projectId, rows);
}

/** A series and its points in one call. */
export async function insertMetric(t: TestApp, s: SeriesSpec, points: PointSpec[]): Promise<bigint> {
  const seriesId = await insertSeries(t, s);
  await insertPoints(t, { projectId: s.projectId, name: s.name, seriesId }, points);
  return seriesId;
}

export interface HistogramRow {
  at: string | number;
  startAt?: string | number | null;
  temporality: 'delta' | 'cumulative';
  bounds: number[];
  counts: (number | bigint)[];
  /** Default 0; null for a sample that carried no sum. */
  sum?: number | null;
}

export async function insertHistograms(t: TestApp, h: { projectId: string; name: string; seriesId: bigint }, samples: HistogramRow[]): Promise<void> {
  const series = seriesOf(h.projectId, h.seriesId);
  const rows = emptyRows([series]);
  rows.histograms = samples.map((s) => {
    const counts = s.counts.map((c) => BigInt(c));
    return {
      name: h.name,
      seriesId: h.seriesId,
      ts: toMs(s.at),
      startTs: s.startAt === undefined || s.startAt === null ? null : toMs(s.startAt),
      temporality: s.temporality,
      count: counts.reduce((a, b) => a + b, 0n),
      sum: s.sum === undefined ? 0 : s.sum,
      bounds: s.bounds,
      counts,
    };
  });
  await writeRows(t, h.projectId, rows);
}

/** The durable delete of the name at `at` (a tombstone; the datapoints stamped at or before it are removed). */
export async function insertTombstone(t: TestApp, projectId: string, name: string, at: string | number): Promise<void> {
  await t.ctx.telemetry.metrics.deleteMetric(projectId, name, toMs(at));
}

export function toMs(at: string | number): number {
  return typeof at === 'number' ? at : Date.parse(at);
}

/** `count` distinct gauge names `<prefix>0000`, `<prefix>0001`, ... with one point each, in one write (for the name cap). */
export async function insertManyNames(t: TestApp, projectId: string, prefix: string, count: number, at: string | number): Promise<void> {
  const series: SeriesRow[] = Array.from({ length: count }, (_, i) => ({
    seriesId: nextSeriesId++,
    name: `${prefix}${String(i).padStart(4, '0')}`,
    type: 'gauge',
    serviceName: null,
    environment: null,
    labels: '{}',
  }));
  for (const s of series) written.set(seriesKey(projectId, s.seriesId), s);
  await writeRows(t, projectId, {
    series,
    pointSeries: series.map((_, i) => i),
    pointTs: series.map(() => toMs(at)),
    pointValue: series.map(() => 1),
    histograms: [],
  });
}

/** Datapoints (plain and histogram) of the name stored in the project, at rest (also those reads hide). */
export async function storedRows(t: TestApp, projectId: string, name: string): Promise<number> {
  const ch = chOf(t.ctx.telemetry);
  if (ch) {
    const [r] = await ch.client.query<{ n: string }>(
      `SELECT (SELECT count() FROM metric_points WHERE project_id = {p:String} AND name = {n:String})
            + (SELECT count() FROM metric_histograms WHERE project_id = {p:String} AND name = {n:String}) AS n`,
      { p: projectId, n: name },
    );
    return Number(r.n);
  }
  const r = await t.duck.read((c) =>
    c.runAndReadAll(
      `SELECT (SELECT count(*) FROM metric_points WHERE project_id = $p AND name = $n) + (SELECT count(*) FROM metric_histograms WHERE project_id = $p AND name = $n)`,
      { p: projectId, n: name },
    ),
  );
  return Number(r.getRowsJS()[0][0]);
}

/** Tombstones of the name at rest: logical rows (on ClickHouse, copies not yet merged count once). */
export async function tombstoneRows(t: TestApp, projectId: string, name: string): Promise<number> {
  const ch = chOf(t.ctx.telemetry);
  if (ch) {
    const [r] = await ch.client.query<{ n: string }>('SELECT count() AS n FROM metric_tombstones FINAL WHERE project_id = {p:String} AND name = {n:String}', {
      p: projectId,
      n: name,
    });
    return Number(r.n);
  }
  const r = await t.duck.read((c) => c.runAndReadAll('SELECT count(*) FROM metric_tombstones WHERE project_id = $p AND name = $n', { p: projectId, n: name }));
  return Number(r.getRowsJS()[0][0]);
}

/** Series without a type and their points, straight into the engine's tables (the port always carries a type). */
const untyped = {
  async series(t: TestApp, projectId: string, s: SeriesRow): Promise<void> {
    const ch = chOf(t.ctx.telemetry);
    if (ch) {
      await ch.client.insert('metric_series', [
        { project_id: projectId, series_id: s.seriesId.toString(), name: s.name, type: null, service_name: s.serviceName, environment: s.environment, labels: s.labels },
      ]);
      return;
    }
    await t.duck.writer.run(
      `INSERT INTO metric_series (project_id, series_id, name, type, service_name, environment, labels)
       VALUES ($project, $id, $name, NULL, $service, $environment, $labels)`,
      { project: projectId, id: s.seriesId, name: s.name, service: s.serviceName, environment: s.environment, labels: s.labels },
      { service: VARCHAR, environment: VARCHAR },
    );
  },
  async points(t: TestApp, projectId: string, s: SeriesRow, rows: MetricRows): Promise<void> {
    const ch = chOf(t.ctx.telemetry);
    const start = (i: number) => (rows.pointStart === undefined || Number.isNaN(rows.pointStart[i]) ? null : rows.pointStart[i]);
    if (ch) {
      await ch.client.insert(
        'metric_points',
        rows.pointTs.map((ts, i) => ({ project_id: projectId, name: s.name, series_id: s.seriesId.toString(), ts, value: rows.pointValue[i], start_ts: start(i) })),
      );
      return;
    }
    for (const [i, ts] of rows.pointTs.entries()) {
      const st = start(i);
      await t.duck.writer.run(
        'INSERT INTO metric_points (project_id, name, series_id, ts, value, start_ts) VALUES ($project, $name, $id, $ts, $value, $start)',
        { project: projectId, name: s.name, id: s.seriesId, ts: BigInt(ts), value: rows.pointValue[i], start: st === null ? null : BigInt(st) },
        { start: BIGINT },
      );
    }
  },
};
