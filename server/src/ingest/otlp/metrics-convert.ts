/**
 * OTLP metric kinds -> telemetry rows.
 *
 * - Sum: monotonic -> `counter`, non-monotonic -> `gauge`; Gauge -> `gauge`; Histogram and
 *   ExponentialHistogram -> `histogram`; Summary -> `summary`.
 * - Every sample is one metric_points row: gauges and sums their value; histograms and summaries their
 *   mean (sum / count) when count > 0 and a sum was sent, otherwise no point row.
 * - A monotonic Sum with CUMULATIVE temporality (UNSPECIFIED is read as cumulative, as for histograms)
 *   also stores its start time in ms as the point's `start_ts` (UNKNOWN_START when
 *   start_time_unix_nano is 0), so reads can turn its running totals into increases; every other point
 *   has none (NULL).
 * - Histograms (both kinds) also get a metric_histograms row with their buckets as explicit upper bounds.
 * - Resource attributes give only `service_name` (`service.name`) and `environment`
 *   (`deployment.environment.name`, else `deployment.environment`). Other resource attributes and the
 *   instrumentation scope are not labels: labels are the data point's own attributes, so a series does
 *   not split on host or SDK-version attributes that change on every deploy.
 * - A rejected point (time 0, NaN/infinite or missing value, malformed buckets, empty metric name) is
 *   counted and the first reason kept; the rest of the request is stored. A point flagged
 *   NoRecordedValue (flags bit 0) carries no sample and is skipped without being counted as rejected.
 */
import { UNKNOWN_START, type HistogramRow, type MetricRows, type MetricType, type SeriesRow } from '../../storage/telemetry/duckdb/metrics-writer.js';
import type {
  ExponentialHistogramDataPoint,
  HistogramDataPoint,
  Int64,
  KeyValue,
  Metric,
  MetricsInput,
  NumberDataPoint,
  SummaryDataPoint,
} from './decode.js';
import { exponentialToExplicit } from './exponential.js';
import { anyValueText, int64ToNumber, labelsJson, nanosToMs, resourceIdentity, seriesId, uint64ToBigInt } from './values.js';

export interface ConvertResult extends MetricRows {
  /** Data points in the request: stored, rejected or skipped. */
  total: number;
  rejected: number;
  /** The reason of the first rejected point. */
  firstRejection: string | undefined;
}

const NO_RECORDED_VALUE = 1;
const MIN_SCALE = -10;
const MAX_SCALE = 20;

type PointBase = { attributes: KeyValue[]; timeUnixNano?: Int64; startTimeUnixNano?: Int64; flags?: number | null };

/**
 * Series rows by (name, type, service, environment), then by the point's attributes as sent. A process
 * cache, so the canonical labels and the sha256 are computed once per series, not once per request.
 * Never stale (a series id is a pure function of its inputs); dropped whole when it grows past its bound.
 */
interface CachedSeries {
  row: SeriesRow;
  /** The last conversion that listed this series in its output, and where. */
  epoch: number;
  index: number;
}
/**
 * A trie over the attribute key and value texts in the order sent, one string per level, so lookups
 * need no key string built per point (decoded strings are mostly interned, see decode.ts, so each step
 * is a pointer comparison or a Map lookup with a cached hash). Most nodes have one child, kept inline.
 */
interface TrieNode {
  key: string | undefined;
  child: TrieNode | undefined;
  more: Map<string, TrieNode> | undefined;
  series: CachedSeries | undefined;
}
interface SeriesContext {
  root: TrieNode;
  /** By canonical labels JSON: attribute orders that differ share one entry. */
  byLabels: Map<string, CachedSeries>;
}
const MAX_CACHED_NODES = 500_000;
const seriesCache = new Map<string, SeriesContext>();
let cachedNodes = 0;
let epochs = 0;

const newNode = (): TrieNode => ({ key: undefined, child: undefined, more: undefined, series: undefined });
const newContext = (): SeriesContext => ({ root: newNode(), byLabels: new Map() });

function step(node: TrieNode, s: string): TrieNode | undefined {
  if (node.key === s) return node.child;
  return node.more?.get(s);
}

function stepOrAdd(node: TrieNode, s: string): TrieNode {
  const found = step(node, s);
  if (found) return found;
  const n = newNode();
  cachedNodes++;
  if (node.key === undefined) {
    node.key = s;
    node.child = n;
  } else (node.more ??= new Map()).set(s, n);
  return n;
}

class Converter {
  readonly out: ConvertResult = {
    series: [],
    pointSeries: [],
    pointTs: [],
    pointValue: [],
    pointStart: undefined,
    histograms: [],
    total: 0,
    rejected: 0,
    firstRejection: undefined,
  };
  private readonly epoch = ++epochs;
  private name = '';
  private type: MetricType = 'gauge';
  private serviceName: string | null = null;
  private environment: string | null = null;
  private context: SeriesContext = newContext();
  private lastResource: KeyValue[] | null = null;

  input(input: MetricsInput): void {
    input.forEachMetric((resourceAttributes, metric) => {
      if (resourceAttributes !== this.lastResource) {
        const id = resourceIdentity(resourceAttributes);
        this.serviceName = id.serviceName;
        this.environment = id.environment;
        this.lastResource = resourceAttributes;
      }
      this.metric(metric);
    });
  }

  private metric(m: Metric): void {
    this.name = m.name ?? '';
    if (m.gauge) this.numbers(m.gauge.dataPoints, 'gauge');
    else if (m.sum)
      this.numbers(m.sum.dataPoints, m.sum.isMonotonic ? 'counter' : 'gauge', !!m.sum.isMonotonic && temporality(m.sum.aggregationTemporality) === 'cumulative');
    else if (m.histogram) this.histograms(m.histogram.dataPoints, temporality(m.histogram.aggregationTemporality));
    else if (m.exponentialHistogram)
      this.exponentials(m.exponentialHistogram.dataPoints, temporality(m.exponentialHistogram.aggregationTemporality));
    else if (m.summary) this.summaries(m.summary.dataPoints);
  }

  private begin(type: MetricType): void {
    this.type = type;
    const key = JSON.stringify([this.name, type, this.serviceName, this.environment]);
    let ctx = seriesCache.get(key);
    if (!ctx) seriesCache.set(key, (ctx = newContext()));
    this.context = ctx;
  }

  private reject(reason: string): void {
    this.out.rejected++;
    if (this.out.firstRejection === undefined)
      this.out.firstRejection = this.name === '' ? `a metric has an empty name` : `metric "${this.name}": ${reason}`;
  }

  /** Common checks; the point's time in ms, or -1 when the point is skipped or rejected. */
  private admit(p: PointBase): number {
    this.out.total++;
    if ((p.flags ?? 0) & NO_RECORDED_VALUE) return -1;
    if (this.name === '') {
      this.reject('empty name');
      return -1;
    }
    const ts = nanosToMs(p.timeUnixNano);
    if (!(ts > 0)) {
      this.reject('a data point has time_unix_nano 0 (or missing)');
      return -1;
    }
    return ts;
  }

  private series(attrs: KeyValue[]): CachedSeries {
    attrs ??= [];
    let node: TrieNode | undefined = this.context.root;
    for (let i = 0; i < attrs.length && node; i++) {
      node = step(node, attrs[i].key ?? '');
      if (node) node = step(node, anyValueText(attrs[i].value));
    }
    const c = node?.series ?? this.addSeries(attrs);
    if (c.epoch !== this.epoch) {
      c.epoch = this.epoch;
      c.index = this.out.series.push(c.row) - 1;
    }
    return c;
  }

  private addSeries(attrs: KeyValue[]): CachedSeries {
    if (cachedNodes >= MAX_CACHED_NODES) {
      seriesCache.clear();
      cachedNodes = 0;
      this.context = newContext();
      seriesCache.set(JSON.stringify([this.name, this.type, this.serviceName, this.environment]), this.context);
    }
    const ctx = this.context;
    const labels = labelsJson(attrs);
    let c = ctx.byLabels.get(labels);
    if (!c) {
      const { name, type, serviceName, environment } = this;
      c = { row: { seriesId: seriesId(name, type, serviceName, environment, labels), name, type, serviceName, environment, labels }, epoch: 0, index: 0 };
      ctx.byLabels.set(labels, c);
      cachedNodes++;
    }
    let node = ctx.root;
    for (const kv of attrs) node = stepOrAdd(stepOrAdd(node, kv.key ?? ''), anyValueText(kv.value));
    node.series = c;
    return c;
  }

  /** `start`: the start time of a cumulative counter sample (see MetricRows.pointStart), NaN for any other. */
  private point(s: CachedSeries, ts: number, value: number, start = NaN): void {
    const o = this.out;
    if (o.pointStart !== undefined) o.pointStart.push(start);
    else if (!Number.isNaN(start)) {
      // The first cumulative counter point of the request: the earlier points had no start.
      o.pointStart = new Array<number>(o.pointTs.length).fill(NaN);
      o.pointStart.push(start);
    }
    o.pointSeries.push(s.index);
    o.pointTs.push(ts);
    o.pointValue.push(value);
  }

  /** `cumulative`: a cumulative monotonic Sum, whose points keep their start time. */
  private numbers(points: NumberDataPoint[], type: MetricType, cumulative = false): void {
    this.begin(type);
    for (const p of points ?? []) {
      const ts = this.admit(p);
      if (ts < 0) continue;
      let value: number;
      if (p.asDouble !== null && p.asDouble !== undefined) value = p.asDouble;
      else if (p.asInt !== null && p.asInt !== undefined) value = int64ToNumber(p.asInt);
      else {
        this.reject('a data point has no value');
        continue;
      }
      if (!Number.isFinite(value)) {
        this.reject('a data point value is NaN or infinite');
        continue;
      }
      let start = NaN;
      if (cumulative) {
        const ms = nanosToMs(p.startTimeUnixNano);
        start = ms > 0 ? ms : UNKNOWN_START;
      }
      this.point(this.series(p.attributes), ts, value, start);
    }
  }

  /** A histogram or summary sample: its mean as a point (when count > 0 and a sum was sent), and its buckets. */
  private sample(p: PointBase, ts: number, count: bigint, sum: number | null, hist?: Omit<HistogramRow, 'name' | 'seriesId' | 'ts' | 'startTs' | 'count' | 'sum'>) {
    const mean = count > 0n && sum !== null;
    if (!mean && !hist) return; // an empty summary: no row, so no series row either
    const s = this.series(p.attributes);
    if (mean) this.point(s, ts, sum / Number(count));
    if (hist) {
      const start = nanosToMs(p.startTimeUnixNano);
      this.out.histograms.push({ name: s.row.name, seriesId: s.row.seriesId, ts, startTs: start > 0 ? start : null, count, sum, ...hist });
    }
  }

  private histograms(points: HistogramDataPoint[], temporality: HistogramRow['temporality']): void {
    this.begin('histogram');
    for (const p of points ?? []) {
      const ts = this.admit(p);
      if (ts < 0) continue;
      const count = uint64ToBigInt(p.count);
      const sum = p.sum ?? null;
      const bounds = p.explicitBounds ?? [];
      const raw = p.bucketCounts ?? [];
      if (count === undefined) {
        this.reject('a histogram count is not a non-negative integer');
        continue;
      }
      if (sum !== null && !Number.isFinite(sum)) {
        this.reject('a histogram sum is NaN or infinite');
        continue;
      }
      let counts: bigint[];
      // OTLP allows a histogram without buckets (count and sum only): one (-Inf, +Inf) bucket holds the count.
      if (raw.length === 0 && bounds.length === 0) counts = [count];
      else if (raw.length !== bounds.length + 1) {
        this.reject(`a histogram has ${raw.length} bucket_counts for ${bounds.length} explicit_bounds (needs ${bounds.length + 1})`);
        continue;
      } else {
        if (!ascending(bounds)) {
          this.reject('histogram explicit_bounds must be finite and strictly ascending');
          continue;
        }
        const c = bigints(raw);
        if (!c) {
          this.reject('a histogram bucket count is not a non-negative integer');
          continue;
        }
        counts = c;
      }
      this.sample(p, ts, count, sum, { temporality, bounds: Array.isArray(bounds) ? bounds : Array.from(bounds), counts });
    }
  }

  private exponentials(points: ExponentialHistogramDataPoint[], temporality: HistogramRow['temporality']): void {
    this.begin('histogram');
    for (const p of points ?? []) {
      const ts = this.admit(p);
      if (ts < 0) continue;
      const scale = p.scale ?? 0;
      const zeroThreshold = p.zeroThreshold ?? 0;
      const count = uint64ToBigInt(p.count);
      const zeroCount = uint64ToBigInt(p.zeroCount);
      const sum = p.sum ?? null;
      const pos = bigints(p.positive?.bucketCounts ?? []);
      const neg = bigints(p.negative?.bucketCounts ?? []);
      if (!Number.isInteger(scale) || scale < MIN_SCALE || scale > MAX_SCALE) {
        this.reject(`an exponential histogram scale ${scale} is outside ${MIN_SCALE}..${MAX_SCALE}`);
        continue;
      }
      if (!(zeroThreshold >= 0 && Number.isFinite(zeroThreshold))) {
        this.reject('an exponential histogram zero_threshold is negative, NaN or infinite');
        continue;
      }
      if (count === undefined || zeroCount === undefined || !pos || !neg) {
        this.reject('an exponential histogram count is not a non-negative integer');
        continue;
      }
      if (sum !== null && !Number.isFinite(sum)) {
        this.reject('an exponential histogram sum is NaN or infinite');
        continue;
      }
      const { bounds, counts } = exponentialToExplicit(
        scale,
        zeroThreshold,
        zeroCount,
        { offset: p.positive?.offset ?? 0, counts: pos },
        { offset: p.negative?.offset ?? 0, counts: neg },
      );
      if (!bounds.every(Number.isFinite)) {
        this.reject('exponential histogram buckets lie beyond the range of a double');
        continue;
      }
      this.sample(p, ts, count, sum, { temporality, bounds, counts });
    }
  }

  private summaries(points: SummaryDataPoint[]): void {
    this.begin('summary');
    for (const p of points ?? []) {
      const ts = this.admit(p);
      if (ts < 0) continue;
      const count = uint64ToBigInt(p.count);
      const sum = p.sum ?? 0;
      if (count === undefined) {
        this.reject('a summary count is not a non-negative integer');
        continue;
      }
      if (!Number.isFinite(sum)) {
        this.reject('a summary sum is NaN or infinite');
        continue;
      }
      // Quantile values have no table; the sample is kept as its mean (and its series as type summary).
      this.sample(p, ts, count, sum);
    }
  }
}

/** AGGREGATION_TEMPORALITY_DELTA = 1, CUMULATIVE = 2; UNSPECIFIED (0) or unknown is read as cumulative. */
function temporality(t: number | null | undefined): HistogramRow['temporality'] {
  return t === 1 ? 'delta' : 'cumulative';
}

function ascending(bounds: ArrayLike<number>): boolean {
  for (let i = 0; i < bounds.length; i++) {
    if (!Number.isFinite(bounds[i])) return false;
    if (i > 0 && !(bounds[i] > bounds[i - 1])) return false;
  }
  return true;
}

function bigints(raw: Int64[]): bigint[] | undefined {
  const out = new Array<bigint>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const v = uint64ToBigInt(raw[i]);
    if (v === undefined) return undefined;
    out[i] = v;
  }
  return out;
}

/** The rows of a request. Synchronous from start to end (the series cache's epochs rely on it). */
export function convertMetrics(input: MetricsInput): ConvertResult {
  const c = new Converter();
  c.input(input);
  return c.out;
}

/** Data points in a request, of every kind (for answers that store nothing); decodes the whole body. */
export function countDataPoints(input: MetricsInput): number {
  let n = 0;
  input.forEachMetric((_attrs, m) => {
    n +=
      (m.gauge?.dataPoints?.length ?? 0) +
      (m.sum?.dataPoints?.length ?? 0) +
      (m.histogram?.dataPoints?.length ?? 0) +
      (m.exponentialHistogram?.dataPoints?.length ?? 0) +
      (m.summary?.dataPoints?.length ?? 0);
  });
  return n;
}
