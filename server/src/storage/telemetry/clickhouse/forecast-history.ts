/**
 * History for a forecast on ClickHouse (as duckdb/forecast-history.ts): one observation per grid bucket, the
 * mean of the bucket's samples. Cumulative counter samples count as their increases, by the aggregate's rules
 * (counter-increases.ts), so a counter is forecast as its mean increase per sample, not as its running total.
 */
import type { Observation } from '../../../domains/metrics/forecast-model.js';
import type { ForecastHistoryReader, HistoryQuery } from '../../../domains/metrics/store.js';
import type { QueryParams } from './client.js';
import { counterIncreasesSql, hasCounterSamples } from './counter-increases.js';
import type { ChTelemetryDb } from './db.js';

export async function readChForecastHistory(db: ChTelemetryDb, q: HistoryQuery): Promise<Observation[]> {
  const client = db.client;
  // The visible range starts just after the metric's tombstone (no row from the GROUP BY: never deleted).
  // With it, whether the window holds counter samples (over the whole window: the counter SQL passes every
  // other row through as it is, so taking it when the only counter samples are hidden changes nothing).
  const [tomb, counters] = await Promise.all([
    client.query<{ at: string }>(
      'SELECT max(deleted_at_ms) AS at FROM metric_tombstones WHERE project_id = {project:String} AND name = {name:String} GROUP BY project_id, name',
      { project: q.projectId, name: q.name },
    ),
    hasCounterSamples(client, q.projectId, q.name, BigInt(q.startMs), BigInt(q.endMs)),
  ]);
  const at = tomb.length ? BigInt(tomb[0].at) : null;
  const lo = at === null || at + 1n < BigInt(q.startMs) ? BigInt(q.startMs) : at + 1n;
  const hi = BigInt(q.endMs);
  if (lo > hi) return [];
  const params: QueryParams = { project: q.projectId, name: q.name, lo, hi, interval: BigInt(q.intervalMs) };
  let env = '';
  if (q.environment !== undefined) {
    env = 'AND series_id IN (SELECT series_id FROM metric_series WHERE project_id = {project:String} AND name = {name:String} AND environment = {environment:String})';
    params.environment = q.environment;
  }
  const points = `
      SELECT series_id, ts, start_ts, value FROM metric_points
      WHERE project_id = {project:String} AND name = {name:String} AND ts >= {lo:Int64} AND ts <= {hi:Int64} ${env}`;
  const rows = await client.query<{ bucket: string; mean: number | string }>(
    `WITH raw AS (${points})${counters ? `, inc AS (${counterIncreasesSql('raw', [], '{lo:Int64}')})` : ''}
     SELECT intDiv(ts, {interval:Int64}) * {interval:Int64} AS bucket, avg(value) AS mean
     FROM ${counters ? 'inc' : 'raw'}
     GROUP BY bucket
     ORDER BY bucket
     SETTINGS output_format_json_quote_denormals = 1`,
    params,
  );
  return rows.map((r) => ({ ts: Number(r.bucket), value: typeof r.mean === 'number' ? r.mean : Number(r.mean.replace(/^([+-]?)inf$/i, '$1Infinity')) }));
}

/** The ForecastHistoryReader of a ClickHouse store. */
export function chForecastHistory(db: ChTelemetryDb): ForecastHistoryReader {
  return (q) => readChForecastHistory(db, q);
}
