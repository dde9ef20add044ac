/**
 * DuckDB adapter of the metrics store port (domains/metrics/store.ts): the SQL of the metric reads and
 * of the durable delete. Every user value is a bound parameter; label keys reach `json_extract_string`
 * as bound JSON paths built from keys that passed the key pattern.
 *
 * Shape of the aggregate: the metric's series are selected on the small `metric_series` table (service,
 * environment, label filters, group values), then the points are filtered by project, name and time
 * range, joined by `series_id` and bucketed with integer arithmetic on `ts`. When the metric has
 * cumulative counter samples in the visible range, the points first go through counter-increases.ts
 * (each counter sample becomes its increase, a baseline-only sample no row); otherwise the plain scan runs.
 */
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import type {
  AggregateQuery,
  AggregateResult,
  Aggregation,
  HistogramQuery,
  HistogramSample,
  HistogramAggregateSample,
  LabelValues,
  MetricDescription,
  MetricNamesPage,
  SeriesSelector,
  MetricsStore,
  TimeWindow,
} from '../../../domains/metrics/store.js';
import { counterIncreasesSql, hasCounterSamples } from './counter-increases.js';
import type { TelemetryDb } from './open.js';
import { bound, deleteQueue, rows, type Params } from './statements.js';

const MIN_TS = -(2n ** 63n);
const MAX_TS = 2n ** 63n - 1n;

const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/** The JSON path of one label key. Keys are validated upstream; this refuses anything that could escape the quotes. */
function labelPath(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error('label key is not safe for a JSON path');
  return `$."${key}"`;
}

/** Fixed SQL per aggregation (the aggregation is an enum value, never user text). */
const AGGREGATE_SQL: Record<Aggregation, string> = {
  avg: 'avg(value)',
  sum: 'sum(value)',
  min: 'min(value)',
  max: 'max(value)',
  count: 'count(*)',
  // Exact continuous quantiles: linear interpolation between the two nearest samples.
  p50: 'quantile_cont(value, 0.5)',
  p95: 'quantile_cont(value, 0.95)',
  p99: 'quantile_cont(value, 0.99)',
  // Population statistics (divide by n).
  stddev: 'stddev_pop(value)',
  variance: 'var_pop(value)',
};



async function exec(c: DuckDBConnection, sql: string, all: Params): Promise<void> {
  await c.run(sql, ...bound(sql, all));
}

const ms = (v: unknown): number => Number(v as bigint);

async function tombstoneOf(c: DuckDBConnection, projectId: string, name: string): Promise<bigint | null> {
  const r = await rows(c, 'SELECT deleted_at_ms FROM metric_tombstones WHERE project_id = $project AND name = $name', { project: projectId, name });
  return r.length ? (r[0][0] as bigint) : null;
}

/** The visible range of one metric: the window, starting after the tombstone. Null when nothing can be visible. */
async function visibleRange(c: DuckDBConnection, projectId: string, name: string, w: TimeWindow): Promise<{ lo: bigint; hi: bigint } | null> {
  const tomb = await tombstoneOf(c, projectId, name);
  let lo = w.startMs !== undefined ? BigInt(w.startMs) : MIN_TS;
  const hi = w.endMs !== undefined ? BigInt(w.endMs) : MAX_TS;
  if (tomb !== null && tomb + 1n > lo) lo = tomb + 1n;
  return lo > hi ? null : { lo, hi };
}

 /**
 * The series of an aggregate, resolved on the small `metric_series` catalogue (service, environment,
 * label filters): CTE `s` with each series' group values and a dense integer group id `gid` (in the
 * order of the values, no-value last), so the big scans group on integers. `needSeries` is false when
 * nothing narrows or groups the series, so a scan may skip the join.
 */
function seriesSelection(q: SeriesSelector & { groupBy: string[] }) {
  const params: Params = { project: q.projectId, name: q.metricName };
  const groups = q.groupBy.map((_, i) => `g${i}`);
  q.groupBy.forEach((k, i) => (params[`g${i}k`] = labelPath(k)));
  const conds = ['project_id = $project', 'name = $name'];
  if (q.serviceName !== undefined) {
    conds.push('service_name = $service');
    params.service = q.serviceName;
  }
  if (q.environment !== undefined) {
    conds.push('environment = $environment');
    params.environment = q.environment;
  }
  q.filters.forEach((f, i) => {
    conds.push(`list_contains($f${i}v, json_extract_string(labels, $f${i}k))`);
    params[`f${i}k`] = labelPath(f.key);
    params[`f${i}v`] = listValue(f.values);
  });
  const needSeries = groups.length > 0 || conds.length > 2;
  const labelCols = groups.map((g) => `, json_extract_string(labels, $${g}k) AS ${g}`).join('');
  const gid = groups.length > 0 ? `dense_rank() OVER (ORDER BY ${groups.map((g) => `${g} ASC NULLS LAST`).join(', ')})` : '1';
  const seriesCte = `s AS (
        SELECT series_id${groups.map((g) => `, ${g}`).join('')}, ${gid} AS gid
        FROM (SELECT series_id${labelCols} FROM metric_series WHERE ${conds.join(' AND ')}))`;
  return { params, groups, needSeries, seriesCte };
}

/** A histogram sample from the columns series_id, ts, start_ts, temporality, count, sum, bounds, counts. */
function histogramSample([seriesId, ts, startTs, temporality, count, sum, bounds, counts]: unknown[]): HistogramSample {
  return {
    seriesId: seriesId as bigint,
    ts: ms(ts),
    startTs: startTs === null ? null : ms(startTs),
    temporality: temporality as string,
    count: count as bigint,
    sum: sum as number | null,
    bounds: bounds as number[],
    counts: counts as bigint[],
  };
}

const isConflict = (e: unknown) => e instanceof Error && /conflict/i.test(e.message);

export class DuckDbMetricsQuery implements MetricsStore {
  constructor(private readonly db: TelemetryDb) {}

  async tombstone(projectId: string, metricName: string): Promise<number | null> {
    const t = await this.db.read((c) => tombstoneOf(c, projectId, metricName));
    return t === null ? null : Number(t);
  }

  names(projectId: string, w: TimeWindow, limit: number): Promise<MetricNamesPage> {
    const sql = `
      WITH tomb AS (SELECT name, deleted_at_ms FROM metric_tombstones WHERE project_id = $project),
      visible AS (
        SELECT DISTINCT p.name, p.series_id FROM metric_points p LEFT JOIN tomb t ON t.name = p.name
        WHERE p.project_id = $project AND p.ts BETWEEN $lo AND $hi AND (t.deleted_at_ms IS NULL OR p.ts > t.deleted_at_ms)
        UNION
        SELECT DISTINCT h.name, h.series_id FROM metric_histograms h LEFT JOIN tomb t ON t.name = h.name
        WHERE h.project_id = $project AND h.ts BETWEEN $lo AND $hi AND (t.deleted_at_ms IS NULL OR h.ts > t.deleted_at_ms)
      ),
      named AS (
        SELECT v.name, min(s.type) AS type FROM visible v
        LEFT JOIN metric_series s ON s.project_id = $project AND s.series_id = v.series_id
        GROUP BY v.name
      )
      SELECT n.name, n.type, count(*) OVER () AS total, m.unit, m.description FROM named n
      LEFT JOIN metric_metadata m ON m.project_id = $project AND m.name = n.name
      ORDER BY n.name LIMIT $limit`;
    return this.db.read(async (c) => {
      const r = await rows(c, sql, {
        project: projectId,
        lo: w.startMs !== undefined ? BigInt(w.startMs) : MIN_TS,
        hi: w.endMs !== undefined ? BigInt(w.endMs) : MAX_TS,
        limit: BigInt(limit),
      });
      return {
        names: r.map(([name, type, , unit, description]) => ({
          name: name as string,
          type: (type as string | null) ?? null,
          ...(unit === null ? {} : { metadata: { unit: unit as string, description: description as string } }),
        })),
        totalCount: r.length ? ms(r[0][2]) : 0,
      };
    });
  }

  labels(projectId: string, metricName: string, w: TimeWindow): Promise<LabelValues[]> {
    const sql = `
      WITH visible AS (
        SELECT DISTINCT series_id FROM metric_points WHERE project_id = $project AND name = $name AND ts BETWEEN $lo AND $hi
        UNION
        SELECT DISTINCT series_id FROM metric_histograms WHERE project_id = $project AND name = $name AND ts BETWEEN $lo AND $hi
      ),
      kv AS (
        SELECT unnest(map_entries(CAST(s.labels::JSON AS MAP(VARCHAR, VARCHAR)))) AS e
        FROM metric_series s JOIN visible v ON v.series_id = s.series_id
        WHERE s.project_id = $project
      )
      SELECT e.key AS name, list_sort(list_distinct(list(e.value))) AS vals FROM kv WHERE e.value IS NOT NULL GROUP BY e.key ORDER BY e.key`;
    return this.db.read(async (c) => {
      const range = await visibleRange(c, projectId, metricName, w);
      if (!range) return [];
      const r = await rows(c, sql, { project: projectId, name: metricName, ...range });
      return r.map(([name, vals]) => ({ name: name as string, values: vals as string[] }));
    });
  }

  aggregate(q: AggregateQuery): Promise<AggregateResult> {
    const { params, groups, needSeries, seriesCte } = seriesSelection(q);
    Object.assign(params, { step: BigInt(q.stepMs), more: BigInt(q.maxSeries + 1) });
    // `origin` is the aligned bucket at or before the window start, so `ts - origin` is never negative and
    // integer division is the floor: bucket = origin + b * step = floor(ts / step) * step.
    const gidCol = needSeries ? 's.gid' : '1 AS gid';
    const seriesJoin = needSeries ? 'JOIN s ON mp.series_id = s.series_id' : '';
    const inRange = 'mp.project_id = $project AND mp.name = $name AND mp.ts BETWEEN $lo AND $hi';
    const plainPoints = `p AS (
        SELECT ${gidCol}, (mp.ts - $origin) // $step AS b, mp.value
        FROM metric_points mp ${seriesJoin}
        WHERE ${inRange})`;
    // Cumulative counter samples become increases within the visible range (which starts at $lo).
    const counterPoints = `raw AS (
        SELECT ${gidCol}, mp.series_id, mp.ts, mp.start_ts, mp.value
        FROM metric_points mp ${seriesJoin}
        WHERE ${inRange}),
      inc AS (${counterIncreasesSql('raw', ['gid'], '$lo')}),
      p AS (SELECT gid, (ts - $origin) // $step AS b, value FROM inc)`;
    const value = `(${AGGREGATE_SQL[q.aggregation]})::DOUBLE`;

    return this.db.read(async (c) => {
      const range = await visibleRange(c, q.projectId, q.metricName, { startMs: q.startMs, endMs: q.endMs });
      if (!range) return { kind: 'rows', rows: [] };
      const pointsCte = (await hasCounterSamples(c, q.projectId, q.metricName, range.lo, range.hi)) ? counterPoints : plainPoints;
      const cte = needSeries ? `WITH ${seriesCte}, ${pointsCte}` : `WITH ${pointsCte}`;
      const select =
        groups.length > 0
          ? `${cte},
             a AS (SELECT gid, b, ${value} AS value FROM p GROUP BY gid, b),
             g AS (SELECT DISTINCT gid, ${groups.join(', ')} FROM s)
             SELECT ${groups.map((x) => `g.${x}`).join(', ')}, a.b, a.value FROM a JOIN g ON g.gid = a.gid ORDER BY a.gid, a.b`
          : `${cte} SELECT b, ${value} AS value FROM p GROUP BY b ORDER BY b`;
      const step = BigInt(q.stepMs);
      const origin = range.lo - (((range.lo % step) + step) % step);
      Object.assign(params, range, { origin });
      if (groups.length > 0) {
        // The catalogue bounds the number of groups; only when it exceeds the limit are the groups that
        // really have points in the window counted (stopping at limit + 1), before anything is materialised.
        const [[catalogued]] = await rows(c, `${cte} SELECT count(DISTINCT gid) FROM s`, params);
        if (ms(catalogued) > q.maxSeries) {
          const [[withPoints]] = await rows(c, `${cte} SELECT count(*) FROM (SELECT DISTINCT gid FROM p LIMIT $more)`, params);
          if (ms(withPoints) > q.maxSeries) return { kind: 'too_many_series' };
        }
      }
      const r = await rows(c, select, params);
      const n = groups.length;
      const originMs = Number(origin);
      return {
        kind: 'rows',
        rows: r.map((row) => ({ group: row.slice(0, n) as (string | null)[], bucketMs: originMs + ms(row[n]) * q.stepMs, value: row[n + 1] as number })),
      };
    });
  }

  async describe(projectId: string, metricName: string): Promise<MetricDescription> {
    // One round trip: the catalogue's types and what the instrument said of the metric.
    const sql = `
      SELECT (SELECT list(DISTINCT type ORDER BY type) FILTER (WHERE type IS NOT NULL) FROM metric_series WHERE project_id = $project AND name = $name),
             (SELECT bool_or(type IS NULL) FROM metric_series WHERE project_id = $project AND name = $name),
             m.unit, m.description
      FROM (SELECT 1) LEFT JOIN metric_metadata m ON m.project_id = $project AND m.name = $name`;
    const [[types, untyped, unit, description]] = await this.db.read((c) => rows(c, sql, { project: projectId, name: metricName }));
    return {
      types: [...((types as string[] | null) ?? []), ...(untyped ? [null] : [])],
      metadata: unit === null ? null : { unit: unit as string, description: description as string },
    };
  }

  histogramAggregateSamples(q: AggregateQuery, onSample: (s: HistogramAggregateSample) => void): Promise<'ok' | 'too_many_series'> {
    const { params, groups, seriesCte } = seriesSelection(q);
    params.more = BigInt(q.maxSeries + 1);
    const samples = `h AS (
        SELECT s.gid${groups.map((g) => `, s.${g}`).join('')}, h.series_id, h.ts, h.start_ts, h.temporality, h.count, h.sum, h.bounds, h.counts
        FROM metric_histograms h JOIN s ON s.series_id = h.series_id
        WHERE h.project_id = $project AND h.name = $name AND h.ts BETWEEN $lo AND $hi)`;
    const cte = `WITH ${seriesCte}, ${samples}`;
    return this.db.read(async (c) => {
      const range = await visibleRange(c, q.projectId, q.metricName, { startMs: q.startMs, endMs: q.endMs });
      if (!range) return 'ok';
      Object.assign(params, range);
      const [[groupsWithSamples]] = await rows(c, `${cte} SELECT count(*) FROM (SELECT DISTINCT gid FROM h LIMIT $more)`, params);
      if (ms(groupsWithSamples) > q.maxSeries) return 'too_many_series';
      const sql = `${cte} SELECT ${groups.map((g) => `${g}, `).join('')}series_id, ts, start_ts, temporality, count, sum, bounds, counts
        FROM h ORDER BY gid, series_id, temporality, bounds, ts, count`;
      const result = await c.stream(sql, ...bound(sql, params));
      const n = groups.length;
      for await (const chunk of result.yieldRowsJs())
        for (const row of chunk) onSample({ ...histogramSample(row.slice(n)), group: row.slice(0, n) as (string | null)[] });
      return 'ok';
    });
  }

  histogramSamples(q: HistogramQuery, onSample: (s: HistogramSample) => void): Promise<void> {
    const params: Params = { project: q.projectId, name: q.metricName };
    let join = '';
    if (q.environment !== undefined) {
      join = 'JOIN (SELECT series_id FROM metric_series WHERE project_id = $project AND name = $name AND environment = $environment) s ON s.series_id = h.series_id';
      params.environment = q.environment;
    }
    const sql = `
      SELECT h.series_id, h.ts, h.start_ts, h.temporality, h.count, h.sum, h.bounds, h.counts
      FROM metric_histograms h ${join}
      WHERE h.project_id = $project AND h.name = $name AND h.ts BETWEEN $lo AND $hi
      ORDER BY h.series_id, h.temporality, h.bounds, h.ts, h.count`;
    return this.db.read(async (c) => {
      const range = await visibleRange(c, q.projectId, q.metricName, { startMs: q.startMs, endMs: q.endMs });
      if (!range) return;
      Object.assign(params, range);
      const result = await c.stream(sql, ...bound(sql, params));
      for await (const chunk of result.yieldRowsJs()) {
        for (const row of chunk) onSample(histogramSample(row));
      }
    });
  }

  deleteMetric(projectId: string, metricName: string, atMs: number): Promise<number> {
    const p = { project: projectId, name: metricName, at: BigInt(atMs) };
    return deleteQueue(this.db).run(() =>
      this.db.read(async (c) => {
        for (let attempt = 1; ; attempt++) {
          await c.run('BEGIN TRANSACTION');
          try {
            const [[effective]] = await rows(
              c,
              `INSERT INTO metric_tombstones (project_id, name, deleted_at_ms) VALUES ($project, $name, $at)
               ON CONFLICT (project_id, name) DO UPDATE SET deleted_at_ms = greatest(deleted_at_ms, excluded.deleted_at_ms)
               RETURNING deleted_at_ms`,
              p,
            );
            const del = { project: projectId, name: metricName, at: effective as bigint };
            await exec(c, 'DELETE FROM metric_points WHERE project_id = $project AND name = $name AND ts <= $at', del);
            await exec(c, 'DELETE FROM metric_histograms WHERE project_id = $project AND name = $name AND ts <= $at', del);
            await c.run('COMMIT');
            return ms(effective);
          } catch (e) {
            await c.run('ROLLBACK').catch(() => undefined);
            // A concurrent writer touching the same rows: the delete is idempotent, so try again.
            if (attempt < 3 && isConflict(e)) continue;
            throw e;
          }
        }
      }),
    );
  }
}
