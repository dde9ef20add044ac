/**
 * Test-only: writes metric rows straight into the DuckDB tables (storage/telemetry/duckdb/schema.ts),
 * so the read endpoints can be tested without the OTLP ingestion path.
 */
import { BIGINT, DOUBLE, LIST, listValue, UBIGINT, VARCHAR } from '@duckdb/node-api';
import type { TestApp } from '../../testing/app.js';

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

export async function insertSeries(t: TestApp, s: SeriesSpec): Promise<bigint> {
  const id = nextSeriesId++;
  await t.duck.writer.run(
    `INSERT INTO metric_series (project_id, series_id, name, type, service_name, environment, labels)
     VALUES ($project, $id, $name, $type, $service, $environment, $labels)`,
    {
      project: s.projectId,
      id,
      name: s.name,
      type: s.type ?? null,
      service: s.serviceName ?? null,
      environment: s.environment ?? null,
      labels: labelsJson(s.labels),
    },
    // NULLs need a declared type.
    { type: VARCHAR, service: VARCHAR, environment: VARCHAR },
  );
  return id;
}

/**
 * A point as [ISO time or ms, value], or [time, value, start] for a cumulative counter sample: `start` is
 * its start_ts (ISO time or ms; -1 is the unknown start, see schema.ts). Without it start_ts is NULL.
 */
export type PointSpec = [string | number, number] | [string | number, number, string | number];

export async function insertPoints(t: TestApp, p: { projectId: string; name: string; seriesId: bigint }, points: PointSpec[]): Promise<void> {
  for (const [at, value, startAt] of points) {
    await t.duck.writer.run(
      'INSERT INTO metric_points (project_id, name, series_id, ts, value, start_ts) VALUES ($project, $name, $id, $ts, $value, $start)',
      { project: p.projectId, name: p.name, id: p.seriesId, ts: BigInt(toMs(at)), value, start: startAt === undefined ? null : BigInt(toMs(startAt)) },
      { start: BIGINT },
    );
  }
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

export async function insertHistograms(
  t: TestApp,
  h: { projectId: string; name: string; seriesId: bigint },
  samples: HistogramRow[],
): Promise<void> {
  for (const s of samples) {
    const counts = s.counts.map((c) => BigInt(c));
    await t.duck.writer.run(
      `INSERT INTO metric_histograms (project_id, name, series_id, ts, start_ts, temporality, count, sum, bounds, counts)
       VALUES ($project, $name, $id, $ts, $start, $temporality, $count, $sum, $bounds, $counts)`,
      {
        project: h.projectId,
        name: h.name,
        id: h.seriesId,
        ts: BigInt(toMs(s.at)),
        start: s.startAt === undefined || s.startAt === null ? null : BigInt(toMs(s.startAt)),
        temporality: s.temporality,
        count: counts.reduce((a, b) => a + b, 0n),
        sum: s.sum === undefined ? 0 : s.sum,
        bounds: listValue(s.bounds),
        counts: listValue(counts),
      },
      { id: UBIGINT, start: BIGINT, count: UBIGINT, sum: DOUBLE, bounds: LIST(DOUBLE), counts: LIST(UBIGINT) },
    );
  }
}

export async function insertTombstone(t: TestApp, projectId: string, name: string, at: string | number): Promise<void> {
  await t.duck.writer.run('INSERT INTO metric_tombstones (project_id, name, deleted_at_ms) VALUES ($project, $name, $at)', {
    project: projectId,
    name,
    at: BigInt(toMs(at)),
  });
}

export function toMs(at: string | number): number {
  return typeof at === 'number' ? at : Date.parse(at);
}

/** `count` distinct metric names `<prefix>0000`, `<prefix>0001`, ... with one point each (bulk, for the name cap). */
export async function insertManyNames(t: TestApp, projectId: string, prefix: string, count: number, at: string | number): Promise<void> {
  await t.duck.writer.run(
    `INSERT INTO metric_points (project_id, name, series_id, ts, value)
     SELECT $project, $prefix || lpad(i::VARCHAR, 4, '0'), 1000000 + i, $ts, 1 FROM range($count) r(i)`,
    { project: projectId, prefix, ts: BigInt(toMs(at)), count: BigInt(count) },
    { ts: BIGINT, count: BIGINT },
  );
}
