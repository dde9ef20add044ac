/**
 * Cumulative counters read as increases: the SQL shared by the aggregate (metrics-query.ts) and the
 * forecast history (forecast-history.ts). The rules are those of domains/metrics/service.ts ("Counters").
 *
 * A metric_points row with `start_ts` NOT NULL is a sample of a cumulative monotonic Sum: its value is a
 * running total since `start_ts`. Its chain is (series_id, start_ts), ordered by ts (then value, so equal
 * times give a stable order). Its value becomes:
 * - value - previous value of the chain, when the chain has an earlier sample in the visible range;
 * - value, when that difference would be negative (a reset without a start change);
 * - value, when it is the chain's first sample in the visible range and start_ts lies inside it (the counter
 *   started there; a changed start time is a new chain, so a restart counts its first total whole);
 * - no row at all, when it is the first sample and the chain started before the visible range (or at an
 *   unknown time): it is only the baseline of the next one.
 * Rows with `start_ts` NULL keep their value.
 */
import { BIGINT, type DuckDBConnection } from '@duckdb/node-api';
import { UNKNOWN_START } from '../../../domains/metrics/rows.js';

/**
 * A SELECT over `from` (a relation with series_id, ts, start_ts, value and the `keep` columns) giving the
 * rows (`keep`..., ts, value) with every counter sample replaced by its increase. Only the samples of
 * cumulative counters go through the window function; the others pass as they are. `lo` is an SQL
 * expression for where the visible range starts (the window start, or just after the metric's tombstone);
 * `from` must hold no row before it.
 */
export function counterIncreasesSql(from: string, keep: readonly string[], lo: string): string {
  const k = keep.map((c) => `${c}, `).join('');
  return `
    SELECT ${k}ts, value FROM ${from} WHERE start_ts IS NULL
    UNION ALL
    SELECT ${k}ts, CASE WHEN prev IS NULL OR value < prev THEN value ELSE value - prev END AS value
    FROM (
      SELECT ${k}ts, start_ts, value, lag(value) OVER (PARTITION BY series_id, start_ts ORDER BY ts, value) AS prev
      FROM ${from} WHERE start_ts IS NOT NULL)
    WHERE prev IS NOT NULL OR (start_ts >= ${lo} AND start_ts <> ${UNKNOWN_START})`;
}

/**
 * Whether any point of the metric in [lo, hi] is a cumulative counter sample, so the increase SQL is
 * needed at all (gauges and delta sums keep the plain, faster query). One early-exit probe.
 */
export async function hasCounterSamples(c: DuckDBConnection, projectId: string, name: string, lo: bigint, hi: bigint): Promise<boolean> {
  const reader = await c.runAndReadAll(
    `SELECT 1 FROM metric_points
     WHERE project_id = $project AND name = $name AND ts BETWEEN $lo AND $hi AND start_ts IS NOT NULL LIMIT 1`,
    { project: projectId, name, lo, hi },
    { lo: BIGINT, hi: BIGINT },
  );
  return reader.currentRowCount > 0;
}
