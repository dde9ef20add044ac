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
import { UNKNOWN_START, type HistogramRow, type MetricMetadataRow, type MetricRows, type MetricType } from '../../domains/metrics/rows.js';
import type { Int64, KeyValue, Metric, MetricsInput } from './decode.js';
import {
  exponentialValue,
  histogramValue,
  numberValue,
  summaryValue,
  temporality,
  type Rejected,
  type SampleValue,
} from './metrics-points.js';
import { addSeries, findSeries, newContext, nextEpoch, seriesContext, type CachedSeries, type SeriesContext } from './metrics-series-cache.js';
import { anyValueJson, nanosToMs, resourceIdentity, seriesId } from './values.js';
import { applyToKeyValues, type ContentAccess } from '../../domains/content-policy/access.js';

export interface ConvertResult extends MetricRows {
  metadata: MetricMetadataRow[];
  /** Data points in the request: stored, rejected or skipped. */
  total: number;
  rejected: number;
  /** The reason of the first rejected point. */
  firstRejection: string | undefined;
}

const NO_RECORDED_VALUE = 1;

type PointBase = { attributes: KeyValue[]; timeUnixNano?: Int64; startTimeUnixNano?: Int64; flags?: number | null };

const isRejected = (v: unknown): v is Rejected => typeof v === 'object' && v !== null && 'rejected' in v;

class Converter {
  readonly out: ConvertResult = {
    series: [],
    pointSeries: [],
    pointTs: [],
    pointValue: [],
    pointStart: undefined,
    histograms: [],
    metadata: [],
    total: 0,
    rejected: 0,
    firstRejection: undefined,
  };
  private readonly epoch = nextEpoch();
  private name = '';
  private type: MetricType = 'gauge';
  private serviceName: string | null = null;
  private environment: string | null = null;
  private contextKey = '';
  private context: SeriesContext = newContext();
  private lastResource: KeyValue[] | null = null;

  constructor(private readonly store?: ContentAccess) {}

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
    if ((m.unit || m.description) && this.name !== '') this.out.metadata.push({ name: this.name, unit: m.unit ?? '', description: m.description ?? '' });
    if (m.gauge) this.each(m.gauge.dataPoints, 'gauge', numberValue, (p, ts, v) => this.number(p, ts, v, false));
    else if (m.sum) {
      const cumulative = !!m.sum.isMonotonic && temporality(m.sum.aggregationTemporality) === 'cumulative';
      this.each(m.sum.dataPoints, m.sum.isMonotonic ? 'counter' : 'gauge', numberValue, (p, ts, v) => this.number(p, ts, v, cumulative));
    } else if (m.histogram) {
      const t = temporality(m.histogram.aggregationTemporality);
      this.each(m.histogram.dataPoints, 'histogram', histogramValue, (p, ts, v) => this.sample(p, ts, v, t));
    } else if (m.exponentialHistogram) {
      const t = temporality(m.exponentialHistogram.aggregationTemporality);
      this.each(m.exponentialHistogram.dataPoints, 'histogram', exponentialValue, (p, ts, v) => this.sample(p, ts, v, t));
    } else if (m.summary) this.each(m.summary.dataPoints, 'summary', summaryValue, (p, ts, v) => this.sample(p, ts, v, undefined));
  }

  private begin(type: MetricType): void {
    this.type = type;
    this.contextKey = JSON.stringify([this.name, type, this.serviceName, this.environment]);
    this.context = seriesContext(this.contextKey);
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
    // A label that is a recorded-content key is stored as the project's content policy lets it (left out, or its value a size marker).
    if (this.store) attrs = applyToKeyValues(attrs, this.store, (kv) => anyValueJson(kv.value));
    const c = findSeries(this.context, attrs) ?? this.addSeries(attrs);
    if (c.epoch !== this.epoch) {
      c.epoch = this.epoch;
      c.index = this.out.series.push(c.row) - 1;
    }
    return c;
  }

  private addSeries(attrs: KeyValue[]): CachedSeries {
    const { name, type, serviceName, environment } = this;
    const added = addSeries(this.context, this.contextKey, attrs, (labels) => ({
      seriesId: seriesId(name, type, serviceName, environment, labels),
      name,
      type,
      serviceName,
      environment,
      labels,
    }));
    this.context = added.context;
    return added.series;
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

  /** The points of one metric: each admitted, then read by its kind's rules, then stored or rejected. */
  private each<P extends PointBase, V>(points: P[], type: MetricType, read: (p: P) => V | Rejected, store: (p: P, ts: number, v: V) => void): void {
    this.begin(type);
    for (const p of points ?? []) {
      const ts = this.admit(p);
      if (ts < 0) continue;
      const v = read(p);
      if (isRejected(v)) {
        this.reject(v.rejected);
        continue;
      }
      store(p, ts, v);
    }
  }

  /** `cumulative`: a cumulative monotonic Sum, whose points keep their start time. */
  private number(p: PointBase, ts: number, value: number, cumulative: boolean): void {
    let start = NaN;
    if (cumulative) {
      const ms = nanosToMs(p.startTimeUnixNano);
      start = ms > 0 ? ms : UNKNOWN_START;
    }
    this.point(this.series(p.attributes), ts, value, start);
  }

  /**
   * A histogram or summary sample: its mean as a point (when count > 0 and a sum was sent), and a histogram's
   * buckets. `temporality` is undefined only for summaries, which have no buckets.
   */
  private sample(p: PointBase, ts: number, v: SampleValue, temporality: HistogramRow['temporality'] | undefined): void {
    const mean = v.count > 0n && v.sum !== null;
    if (!mean && !v.buckets) return; // an empty summary: no row, so no series row either
    const s = this.series(p.attributes);
    if (mean) this.point(s, ts, v.sum! / Number(v.count));
    if (v.buckets) {
      const start = nanosToMs(p.startTimeUnixNano);
      this.out.histograms.push({
        name: s.row.name,
        seriesId: s.row.seriesId,
        ts,
        startTs: start > 0 ? start : null,
        count: v.count,
        sum: v.sum,
        temporality: temporality!,
        bounds: v.buckets.bounds,
        counts: v.buckets.counts,
      });
    }
  }
}

/**
 * The rows of a request. Synchronous from start to end (the series cache's epochs rely on it). `store`:
 * what the project's content policy lets be stored of recorded-content labels (absent: everything).
 */
export function convertMetrics(input: MetricsInput, store?: ContentAccess): ConvertResult {
  const c = new Converter(store);
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
