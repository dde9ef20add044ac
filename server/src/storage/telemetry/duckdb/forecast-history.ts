/** History for a forecast: one observation per grid bucket (the mean of the bucket's samples). */
import type { Observation } from '../../../domains/metrics/forecast-model.js';
import type { TelemetryDb } from './open.js';

export interface HistoryQuery {
  projectId: string;
  name: string;
  environment?: string;
  startMs: number;
  endMs: number;
  intervalMs: number;
}

export async function readForecastHistory(db: TelemetryDb, q: HistoryQuery): Promise<Observation[]> {
  return db.read(async (c) => {
    const env = q.environment !== undefined;
    const stmt = await c.prepare(`
      WITH tomb AS (
        SELECT coalesce(max(deleted_at_ms), -9223372036854775808) AS at
        FROM metric_tombstones WHERE project_id = $1 AND name = $2)
      SELECT (p.ts // $5) * $5 AS bucket, avg(p.value) AS value
      FROM metric_points p, tomb
      WHERE p.project_id = $1 AND p.name = $2 AND p.ts >= $3 AND p.ts <= $4 AND p.ts > tomb.at
        ${env ? `AND p.series_id IN (SELECT series_id FROM metric_series WHERE project_id = $1 AND name = $2 AND environment = $6)` : ''}
      GROUP BY bucket
      ORDER BY bucket`);
    stmt.bindVarchar(1, q.projectId);
    stmt.bindVarchar(2, q.name);
    stmt.bindBigInt(3, BigInt(q.startMs));
    stmt.bindBigInt(4, BigInt(q.endMs));
    stmt.bindBigInt(5, BigInt(q.intervalMs));
    if (env) stmt.bindVarchar(6, q.environment!);
    const reader = await stmt.runAndReadAll();
    return reader.getRows().map(([bucket, value]) => ({ ts: Number(bucket as bigint), value: Number(value) }));
  });
}
