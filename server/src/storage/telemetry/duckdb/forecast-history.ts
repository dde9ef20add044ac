/**
 * History for a forecast: one observation per grid bucket (the mean of the bucket's samples). Cumulative
 * counter samples count as their increases, by the aggregate's rules (counter-increases.ts), so a counter
 * is forecast as its mean increase per sample, not as its running total.
 */
import type { Observation } from '../../../domains/metrics/forecast-model.js';
import type { HistoryQuery } from '../../../domains/metrics/store.js';
import { counterIncreasesSql, hasCounterSamples } from './counter-increases.js';
import type { TelemetryDb } from './open.js';

export async function readForecastHistory(db: TelemetryDb, q: HistoryQuery): Promise<Observation[]> {
  return db.read(async (c) => {
    const env = q.environment !== undefined;
    // The visible range starts just after the metric's tombstone.
    const tomb = await c.runAndReadAll('SELECT max(deleted_at_ms) FROM metric_tombstones WHERE project_id = $1 AND name = $2', [q.projectId, q.name]);
    const at = tomb.getRows()[0]?.[0] as bigint | null | undefined;
    const lo = at === null || at === undefined || at + 1n < BigInt(q.startMs) ? BigInt(q.startMs) : at + 1n;
    const hi = BigInt(q.endMs);
    if (lo > hi) return [];
    const counters = await hasCounterSamples(c, q.projectId, q.name, lo, hi);
    const points = `
      SELECT p.series_id, p.ts, p.start_ts, p.value FROM metric_points p
      WHERE p.project_id = $1 AND p.name = $2 AND p.ts >= $3 AND p.ts <= $4
        ${env ? `AND p.series_id IN (SELECT series_id FROM metric_series WHERE project_id = $1 AND name = $2 AND environment = $6)` : ''}`;
    const stmt = await c.prepare(`
      WITH raw AS (${points})${counters ? `, inc AS (${counterIncreasesSql('raw', [], '$3')})` : ''}
      SELECT (ts // $5) * $5 AS bucket, avg(value) AS value
      FROM ${counters ? 'inc' : 'raw'}
      GROUP BY bucket
      ORDER BY bucket`);
    stmt.bindVarchar(1, q.projectId);
    stmt.bindVarchar(2, q.name);
    stmt.bindBigInt(3, lo);
    stmt.bindBigInt(4, hi);
    stmt.bindBigInt(5, BigInt(q.intervalMs));
    if (env) stmt.bindVarchar(6, q.environment!);
    const reader = await stmt.runAndReadAll();
    return reader.getRows().map(([bucket, value]) => ({ ts: Number(bucket as bigint), value: Number(value) }));
  });
}
