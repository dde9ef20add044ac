/**
 * ClickHouse adapter of the metrics store port (domains/metrics/store.ts): the metric reads and the durable
 * delete, with the observable behaviour of duckdb/metrics-query.ts (the reference). Every user value is a
 * `{name:Type}` parameter; label keys reach `JSONExtract` as parameters too (a key is a literal key of the
 * flat labels object, never a path).
 *
 * Differences of the storage that the SQL absorbs:
 * - metric_series is a ReplacingMergeTree: a series may have identical copies until a merge, so series are
 *   read with DISTINCT (never joined raw, which would count a point once per copy);
 * - metric_metadata is a ReplacingMergeTree(version): read with argMax(…, version);
 * - metric_tombstones is an AggregatingMergeTree (max): read with max(deleted_at_ms) GROUP BY name. An
 *   aggregate over no rows is 0 on ClickHouse, not NULL, so "no tombstone" is told by the GROUP BY giving no
 *   row (or, in a LEFT JOIN, by a constant `has` column that is 0 on a miss);
 * - the delete is a tombstone row (visible to every read at once) plus lightweight DELETEs of the rows it
 *   hides (deleteTarget: the local tables in cluster mode). Reads filter by the tombstone, so a copy that
 *   arrives after the delete stays hidden whatever the DELETE saw.
 */
import type {
  AggregateQuery,
  AggregateResult,
  Aggregation,
  HistogramAggregateSample,
  HistogramQuery,
  HistogramSample,
  LabelValues,
  MetricDescription,
  MetricNamesPage,
  MetricsStore,
  SeriesSelector,
  TimeWindow,
} from '../../../domains/metrics/store.js';
import type { ChClient, QueryParams } from './client.js';
import { counterIncreasesSql, hasCounterSamples } from './counter-increases.js';
import type { ChTelemetryDb } from './db.js';

const MIN_TS = -(2n ** 63n);
const MAX_TS = 2n ** 63n - 1n;

const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/** A label key as a parameter value. Keys are validated upstream; this refuses anything else all the same. */
function labelKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error('label key is not safe');
  return key;
}

/** Fixed SQL per aggregation (the aggregation is an enum value, never user text). */
const AGGREGATE_SQL: Record<Aggregation, string> = {
  avg: 'avg(value)',
  sum: 'sum(value)',
  min: 'min(value)',
  max: 'max(value)',
  count: 'count()',
  // Exact continuous quantiles: linear interpolation between the two nearest samples (R-7, as DuckDB's quantile_cont).
  p50: 'quantileExactInclusive(0.5)(value)',
  p95: 'quantileExactInclusive(0.95)(value)',
  p99: 'quantileExactInclusive(0.99)(value)',
  // Population statistics (divide by n), with the numerically stable algorithms.
  stddev: 'stddevPopStable(value)',
  variance: 'varPopStable(value)',
};

/** Int64/UInt64 come back as JSON strings (client.ts); times and counts are below 2^53. */
const ms = (v: unknown): number => Number(v);

/**
 * A Float64 of a result read with `output_format_json_quote_denormals = 1`: a number, or "inf", "-inf",
 * "nan" (as DuckDB would give them; without the setting they would arrive as null).
 */
function float(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (s === 'inf' || s === '+inf') return Infinity;
    if (s === '-inf') return -Infinity;
    if (s === 'nan' || s === '+nan' || s === '-nan') return NaN;
    return Number(v);
  }
  return NaN;
}

/** A LIMIT goes into the SQL text (a number, never user text): refuse anything but a non-negative integer. */
function checkLimit(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error('a limit must be a non-negative integer');
}

const FLOAT_SETTINGS = 'SETTINGS output_format_json_quote_denormals = 1';

async function tombstoneOf(client: ChClient, projectId: string, name: string): Promise<bigint | null> {
  const r = await client.query<{ at: string }>(
    `SELECT max(deleted_at_ms) AS at FROM metric_tombstones
     WHERE project_id = {project:String} AND name = {name:String} GROUP BY project_id, name`,
    { project: projectId, name },
  );
  return r.length ? BigInt(r[0].at) : null;
}

/** The visible range of one metric: the window, starting after the tombstone. Null when nothing can be visible. */
async function visibleRange(client: ChClient, projectId: string, name: string, w: TimeWindow): Promise<{ lo: bigint; hi: bigint } | null> {
  const tomb = await tombstoneOf(client, projectId, name);
  let lo = w.startMs !== undefined ? BigInt(w.startMs) : MIN_TS;
  const hi = w.endMs !== undefined ? BigInt(w.endMs) : MAX_TS;
  if (tomb !== null && tomb + 1n > lo) lo = tomb + 1n;
  return lo > hi ? null : { lo, hi };
}

/**
 * The series of an aggregate, resolved on the small `metric_series` catalogue (service, environment, label
 * filters): CTE `s` with each series' group values and a dense integer group id `gid` (in the order of the
 * values, no-value last), so the big scans group on integers. One row per series id (DISTINCT: copies of a
 * series row are equal). `needSeries` is false when nothing narrows or groups the series, so a scan may
 * skip the join.
 */
function seriesSelection(q: SeriesSelector & { groupBy: string[] }) {
  const params: QueryParams = { project: q.projectId, name: q.metricName };
  const groups = q.groupBy.map((_, i) => `g${i}`);
  q.groupBy.forEach((k, i) => (params[`g${i}k`] = labelKey(k)));
  const conds = ['project_id = {project:String}', 'name = {name:String}'];
  if (q.serviceName !== undefined) {
    conds.push('service_name = {service:String}');
    params.service = q.serviceName;
  }
  if (q.environment !== undefined) {
    conds.push('environment = {environment:String}');
    params.environment = q.environment;
  }
  q.filters.forEach((f, i) => {
    // A series lacking the key has NULL here, which no filter value equals.
    conds.push(`has({f${i}v:Array(String)}, JSONExtract(labels, {f${i}k:String}, 'Nullable(String)'))`);
    params[`f${i}k`] = labelKey(f.key);
    params[`f${i}v`] = f.values;
  });
  const needSeries = groups.length > 0 || conds.length > 2;
  const labelCols = groups.map((g) => `, JSONExtract(labels, {${g}k:String}, 'Nullable(String)') AS ${g}`).join('');
  const gid = groups.length > 0 ? `dense_rank() OVER (ORDER BY ${groups.map((g) => `${g} ASC NULLS LAST`).join(', ')})` : '1';
  const seriesCte = `s AS (
        SELECT series_id${groups.map((g) => `, ${g}`).join('')}, ${gid} AS gid
        FROM (SELECT DISTINCT series_id${labelCols} FROM metric_series WHERE ${conds.join(' AND ')}))`;
  return { params, groups, needSeries, seriesCte };
}

type HistogramRowJson = {
  series_id: string;
  ts: string;
  start_ts: string | null;
  temporality: string;
  count: string;
  sum: number | string | null;
  bounds: (number | string)[];
  counts: (string | number)[];
};

const HISTOGRAM_COLUMNS = 'series_id, ts, start_ts, temporality, count, sum, bounds, counts';

function histogramSample(r: HistogramRowJson): HistogramSample {
  return {
    seriesId: BigInt(r.series_id),
    ts: ms(r.ts),
    startTs: r.start_ts === null ? null : ms(r.start_ts),
    temporality: r.temporality,
    count: BigInt(r.count),
    sum: r.sum === null ? null : float(r.sum),
    bounds: r.bounds.map(float),
    counts: r.counts.map((c) => BigInt(c)),
  };
}

export class ChMetricsQuery implements MetricsStore {
  private readonly client: ChClient;
  /** Deletes of one (project, name) run one after another in this process: the later ones find nothing left to remove. */
  private readonly deletes = new Map<string, Promise<unknown>>();

  constructor(private readonly db: ChTelemetryDb) {
    this.client = db.client;
  }

  async tombstone(projectId: string, metricName: string): Promise<number | null> {
    const t = await tombstoneOf(this.client, projectId, metricName);
    return t === null ? null : Number(t);
  }

  async names(projectId: string, w: TimeWindow, limit: number): Promise<MetricNamesPage> {
    checkLimit(limit);
    const tomb = `(SELECT name, max(deleted_at_ms) AS at, 1 AS has FROM metric_tombstones WHERE project_id = {project:String} GROUP BY name)`;
    const visible = (table: string) => `
          SELECT d.name AS name, d.series_id AS series_id FROM ${table} AS d LEFT JOIN ${tomb} AS t ON t.name = d.name
          WHERE d.project_id = {project:String} AND d.ts BETWEEN {lo:Int64} AND {hi:Int64} AND (t.has = 0 OR d.ts > t.at)`;
    const sql = `
      SELECT n.name AS name, n.type AS type, count() OVER () AS total, m.has AS has_metadata, m.unit AS unit, m.description AS description
      FROM (
        SELECT v.name AS name, min(s.type) AS type
        FROM (SELECT DISTINCT name, series_id FROM (${visible('metric_points')} UNION ALL ${visible('metric_histograms')})) AS v
        LEFT JOIN (SELECT DISTINCT series_id, type FROM metric_series WHERE project_id = {project:String}) AS s ON s.series_id = v.series_id
        GROUP BY v.name
      ) AS n
      LEFT JOIN (
        SELECT name, argMax(unit, version) AS unit, argMax(description, version) AS description, 1 AS has
        FROM metric_metadata WHERE project_id = {project:String} GROUP BY name
      ) AS m ON m.name = n.name
      ORDER BY n.name LIMIT ${limit}`;
    const r = await this.client.query<{ name: string; type: string | null; total: string; has_metadata: number; unit: string; description: string }>(sql, {
      project: projectId,
      lo: w.startMs !== undefined ? BigInt(w.startMs) : MIN_TS,
      hi: w.endMs !== undefined ? BigInt(w.endMs) : MAX_TS,
    });
    return {
      names: r.map((row) => ({
        name: row.name,
        type: row.type ?? null,
        ...(Number(row.has_metadata) ? { metadata: { unit: row.unit, description: row.description } } : {}),
      })),
      totalCount: r.length ? ms(r[0].total) : 0,
    };
  }

  async labels(projectId: string, metricName: string, w: TimeWindow): Promise<LabelValues[]> {
    const range = await visibleRange(this.client, projectId, metricName, w);
    if (!range) return [];
    const inRange = 'project_id = {project:String} AND name = {name:String} AND ts BETWEEN {lo:Int64} AND {hi:Int64}';
    const sql = `
      SELECT kv.1 AS key, arraySort(groupUniqArray(kv.2)) AS vals
      FROM (
        SELECT arrayJoin(JSONExtractKeysAndValues(labels, 'String')) AS kv FROM metric_series
        WHERE project_id = {project:String}
          AND series_id IN (SELECT series_id FROM metric_points WHERE ${inRange} UNION ALL SELECT series_id FROM metric_histograms WHERE ${inRange})
      )
      GROUP BY key ORDER BY key`;
    const r = await this.client.query<{ key: string; vals: string[] }>(sql, { project: projectId, name: metricName, ...range });
    return r.map((row) => ({ name: row.key, values: row.vals }));
  }

  async aggregate(q: AggregateQuery): Promise<AggregateResult> {
    checkLimit(q.maxSeries);
    const { params, groups, needSeries, seriesCte } = seriesSelection(q);
    // Two probes at once: the tombstone, and whether the window holds counter samples. The second looks at
    // the whole window, not only after the tombstone: the counter SQL passes every other row through as it is,
    // so taking it when the only counter samples are hidden gives the same rows.
    const [range, counters] = await Promise.all([
      visibleRange(this.client, q.projectId, q.metricName, { startMs: q.startMs, endMs: q.endMs }),
      hasCounterSamples(this.client, q.projectId, q.metricName, BigInt(q.startMs), BigInt(q.endMs)),
    ]);
    if (!range) return { kind: 'rows', rows: [] };
    // `origin` is the aligned bucket at or before the window start, so `ts - origin` is never negative and
    // integer division is the floor: bucket = origin + b * step = floor(ts / step) * step.
    const step = BigInt(q.stepMs);
    const origin = range.lo - (((range.lo % step) + step) % step);
    Object.assign(params, range, { origin, step });
    const gidCol = needSeries ? 's.gid AS gid' : '1 AS gid';
    const seriesJoin = needSeries ? 'INNER JOIN s ON mp.series_id = s.series_id' : '';
    const inRange = 'mp.project_id = {project:String} AND mp.name = {name:String} AND mp.ts BETWEEN {lo:Int64} AND {hi:Int64}';
    const bucket = (ts: string) => `intDiv(${ts} - {origin:Int64}, {step:Int64})`;
    const plainPoints = `p AS (
        SELECT ${gidCol}, ${bucket('mp.ts')} AS b, mp.value AS value
        FROM metric_points AS mp ${seriesJoin}
        WHERE ${inRange})`;
    // Cumulative counter samples become increases within the visible range (which starts at {lo}).
    const counterPoints = `raw AS (
        SELECT ${gidCol}, mp.series_id AS series_id, mp.ts AS ts, mp.start_ts AS start_ts, mp.value AS value
        FROM metric_points AS mp ${seriesJoin}
        WHERE ${inRange}),
      inc AS (${counterIncreasesSql('raw', ['gid'], '{lo:Int64}')}),
      p AS (SELECT gid, ${bucket('ts')} AS b, value FROM inc)`;
    const pointsCte = counters ? counterPoints : plainPoints;
    const cte = needSeries ? `WITH ${seriesCte}, ${pointsCte}` : `WITH ${pointsCte}`;
    const value = `toFloat64(${AGGREGATE_SQL[q.aggregation]})`;
    if (groups.length > 0) {
      // The catalogue bounds the number of groups; only when it exceeds the limit are the groups that
      // really have points in the window counted (stopping at limit + 1), before anything is materialised.
      const [{ n: catalogued }] = await this.client.query<{ n: string }>(`${cte} SELECT count(DISTINCT gid) AS n FROM s`, params);
      if (ms(catalogued) > q.maxSeries) {
        const [{ n: withPoints }] = await this.client.query<{ n: string }>(
          `${cte} SELECT count() AS n FROM (SELECT DISTINCT gid FROM p LIMIT ${q.maxSeries + 1})`,
          params,
        );
        if (ms(withPoints) > q.maxSeries) return { kind: 'too_many_series' };
      }
    }
    const select =
      groups.length > 0
        ? `${cte},
           a AS (SELECT gid, b, ${value} AS agg FROM p GROUP BY gid, b),
           g AS (SELECT DISTINCT gid, ${groups.join(', ')} FROM s)
           SELECT ${groups.map((x) => `g.${x} AS ${x}`).join(', ')}, a.b AS b, a.agg AS agg FROM a INNER JOIN g ON g.gid = a.gid ORDER BY a.gid, a.b ${FLOAT_SETTINGS}`
        : `${cte} SELECT b, ${value} AS agg FROM p GROUP BY b ORDER BY b ${FLOAT_SETTINGS}`;
    const r = await this.client.query<Record<string, unknown>>(select, params);
    const originMs = Number(origin);
    return {
      kind: 'rows',
      rows: r.map((row) => ({
        group: groups.map((g) => (row[g] ?? null) as string | null),
        bucketMs: originMs + ms(row.b) * q.stepMs,
        value: float(row.agg),
      })),
    };
  }

  async describe(projectId: string, metricName: string): Promise<MetricDescription> {
    // One round trip: the catalogue's types and what the instrument said of the metric (the latest version).
    const series = 'FROM metric_series WHERE project_id = {project:String} AND name = {name:String}';
    const metadata = 'FROM metric_metadata WHERE project_id = {project:String} AND name = {name:String}';
    const sql = `
      SELECT
        (SELECT arraySort(groupUniqArray(assumeNotNull(type))) ${series} AND type IS NOT NULL) AS types,
        (SELECT countIf(type IS NULL) ${series}) AS untyped,
        (SELECT count() ${metadata}) AS has_metadata,
        (SELECT argMax(unit, version) ${metadata}) AS unit,
        (SELECT argMax(description, version) ${metadata}) AS description`;
    const [row] = await this.client.query<{ types: string[]; untyped: string; has_metadata: string; unit: string; description: string }>(sql, {
      project: projectId,
      name: metricName,
    });
    return {
      types: [...row.types, ...(ms(row.untyped) > 0 ? [null] : [])],
      metadata: ms(row.has_metadata) > 0 ? { unit: row.unit, description: row.description } : null,
    };
  }

  async histogramAggregateSamples(q: AggregateQuery, onSample: (s: HistogramAggregateSample) => void): Promise<'ok' | 'too_many_series'> {
    checkLimit(q.maxSeries);
    const { params, groups, seriesCte } = seriesSelection(q);
    const range = await visibleRange(this.client, q.projectId, q.metricName, { startMs: q.startMs, endMs: q.endMs });
    if (!range) return 'ok';
    Object.assign(params, range);
    const samples = `h AS (
        SELECT s.gid AS gid${groups.map((g) => `, s.${g} AS ${g}`).join('')}, ${HISTOGRAM_COLUMNS.split(', ').map((c) => `mh.${c} AS ${c}`).join(', ')}
        FROM metric_histograms AS mh INNER JOIN s ON s.series_id = mh.series_id
        WHERE mh.project_id = {project:String} AND mh.name = {name:String} AND mh.ts BETWEEN {lo:Int64} AND {hi:Int64})`;
    const cte = `WITH ${seriesCte}, ${samples}`;
    const [{ n }] = await this.client.query<{ n: string }>(`${cte} SELECT count() AS n FROM (SELECT DISTINCT gid FROM h LIMIT ${q.maxSeries + 1})`, params);
    if (ms(n) > q.maxSeries) return 'too_many_series';
    const rows = await this.client.query<HistogramRowJson & Record<string, unknown>>(
      `${cte} SELECT ${groups.map((g) => `${g}, `).join('')}${HISTOGRAM_COLUMNS}
       FROM h ORDER BY gid, series_id, temporality, bounds, ts, count ${FLOAT_SETTINGS}`,
      params,
    );
    for (const row of rows) onSample({ ...histogramSample(row), group: groups.map((g) => (row[g] ?? null) as string | null) });
    return 'ok';
  }

  async histogramSamples(q: HistogramQuery, onSample: (s: HistogramSample) => void): Promise<void> {
    const range = await visibleRange(this.client, q.projectId, q.metricName, { startMs: q.startMs, endMs: q.endMs });
    if (!range) return;
    const params: QueryParams = { project: q.projectId, name: q.metricName, ...range };
    let env = '';
    if (q.environment !== undefined) {
      env = 'AND series_id IN (SELECT series_id FROM metric_series WHERE project_id = {project:String} AND name = {name:String} AND environment = {environment:String})';
      params.environment = q.environment;
    }
    const rows = await this.client.query<HistogramRowJson>(
      `SELECT ${HISTOGRAM_COLUMNS} FROM metric_histograms
       WHERE project_id = {project:String} AND name = {name:String} AND ts BETWEEN {lo:Int64} AND {hi:Int64} ${env}
       ORDER BY series_id, temporality, bounds, ts, count ${FLOAT_SETTINGS}`,
      params,
    );
    for (const row of rows) onSample(histogramSample(row));
  }

  /**
   * The tombstone first (every read hides what it covers from then on, also copies that arrive later),
   * keeping a later existing one; then the rows it covers are removed with lightweight DELETEs, only when
   * there are any. Not one transaction as on DuckDB: a failure after the tombstone leaves rows that reads
   * already hide, and a retry (the delete is idempotent) removes them.
   */
  deleteMetric(projectId: string, metricName: string, atMs: number): Promise<number> {
    const key = JSON.stringify([projectId, metricName]);
    const previous = this.deletes.get(key) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => this.deleteNow(projectId, metricName, BigInt(atMs)));
    this.deletes.set(key, run);
    const cleanup = () => {
      if (this.deletes.get(key) === run) this.deletes.delete(key);
    };
    run.then(cleanup, cleanup);
    return run;
  }

  private async deleteNow(projectId: string, name: string, at: bigint): Promise<number> {
    const existing = await tombstoneOf(this.client, projectId, name);
    let effective = existing ?? at;
    if (existing === null || existing < at) {
      await this.client.insert('metric_tombstones', [{ project_id: projectId, name, deleted_at_ms: at.toString() }]);
      effective = at;
    }
    const p = { project: projectId, name, at: effective };
    const covered = 'project_id = {project:String} AND name = {name:String} AND ts <= {at:Int64}';
    const [present] = await this.client.query<{ points: string; histograms: string }>(
      `SELECT (SELECT count() FROM (SELECT 1 FROM metric_points WHERE ${covered} LIMIT 1)) AS points,
              (SELECT count() FROM (SELECT 1 FROM metric_histograms WHERE ${covered} LIMIT 1)) AS histograms`,
      p,
    );
    if (ms(present.points) > 0) await this.client.command(`DELETE FROM ${this.db.deleteTarget('metric_points')} WHERE ${covered}`, p);
    if (ms(present.histograms) > 0) await this.client.command(`DELETE FROM ${this.db.deleteTarget('metric_histograms')} WHERE ${covered}`, p);
    return Number(effective);
  }
}
