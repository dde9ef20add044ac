/**
 * Cumulative counters read as increases on ClickHouse: the SQL shared by the aggregate (metrics-query.ts)
 * and the forecast history (forecast-history.ts). The rules are those of duckdb/counter-increases.ts
 * (domains/metrics/service.ts, "Counters"), to the letter:
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
import { UNKNOWN_START } from '../../../domains/metrics/rows.js';
import type { ChClient } from './client.js';

/**
 * A SELECT over `from` (a relation with series_id, ts, start_ts, value and the `keep` columns) giving the
 * rows (`keep`..., ts, value) with every counter sample replaced by its increase. `lo` is an SQL expression
 * for where the visible range starts; `from` must hold no row before it.
 *
 * One pass: the previous value of the chain comes from `lagInFrame` over an explicit whole-partition frame
 * (NULL when there is none: the value is made Nullable, so "no previous sample" is not read as a 0). Rows
 * without a start time share a partition per series but ignore what it gives them.
 */
export function counterIncreasesSql(from: string, keep: readonly string[], lo: string): string {
  const k = keep.map((c) => `${c}, `).join('');
  return `
    SELECT ${k}ts, if(start_ts IS NULL OR prev IS NULL OR v < prev, v, v - prev) AS value
    FROM (
      SELECT ${k}ts, start_ts, value AS v,
        lagInFrame(toNullable(value)) OVER (PARTITION BY series_id, start_ts ORDER BY ts, value ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS prev
      FROM ${from})
    WHERE start_ts IS NULL OR prev IS NOT NULL OR (start_ts >= ${lo} AND start_ts != ${UNKNOWN_START})`;
}

/**
 * Whether any point of the metric in [lo, hi] is a cumulative counter sample, so the increase SQL is
 * needed at all (gauges and delta sums keep the plain, faster query). One early-exit probe.
 */
export async function hasCounterSamples(client: ChClient, projectId: string, name: string, lo: bigint, hi: bigint): Promise<boolean> {
  const r = await client.query(
    `SELECT 1 AS one FROM metric_points
     WHERE project_id = {project:String} AND name = {name:String} AND ts BETWEEN {lo:Int64} AND {hi:Int64} AND start_ts IS NOT NULL LIMIT 1`,
    { project: projectId, name, lo, hi },
  );
  return r.length > 0;
}
