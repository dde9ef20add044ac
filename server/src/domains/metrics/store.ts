/**
 * Storage port of the metrics domain: the reads behind the metrics endpoints and the durable delete.
 *
 * Every read honours the tombstone of a metric: a datapoint (plain or histogram) of a deleted name
 * stamped at or before `metric_tombstones.deleted_at_ms` is invisible, also when it arrived after the
 * delete; datapoints stamped later are new data. Times are milliseconds since the Unix epoch (UTC);
 * windows are closed (`startMs <= ts <= endMs`).
 */
import type { Observation } from './forecast-model.js';

export const METRIC_TYPE_VALUES = ['counter', 'gauge', 'histogram', 'summary'] as const;
export type MetricType = (typeof METRIC_TYPE_VALUES)[number];

export const AGGREGATION_VALUES = ['avg', 'sum', 'min', 'max', 'count', 'p50', 'p95', 'p99', 'stddev', 'variance'] as const;
export type Aggregation = (typeof AGGREGATION_VALUES)[number];

/** A closed window; an absent end is unbounded on that side. */
export interface TimeWindow {
  startMs?: number;
  endMs?: number;
}

export interface MetricNameRow {
  name: string;
  /** As ingested; null when the data supplied none. */
  type: string | null;
  /** What the instrument last said of itself; absent when it never sent a unit or description. */
  metadata?: MetricMetadata;
}

export interface MetricDescription {
  /** The distinct types the name's series carry (null for a series without one): tells a histogram from a plain metric. */
  types: (string | null)[];
  /** Unit and description, or null when the instrument never sent either. */
  metadata: MetricMetadata | null;
}

/** OTLP Metric.unit and .description as last sent for the name ('' for one that was not sent). */
export interface MetricMetadata {
  unit: string;
  description: string;
}

export interface MetricNamesPage {
  /** Ordered by name (code point order), at most `limit`. */
  names: MetricNameRow[];
  /** Every name with a visible datapoint in the window. */
  totalCount: number;
}

export interface LabelValues {
  name: string;
  /** Distinct, sorted. */
  values: string[];
}

export interface LabelFilter {
  key: string;
  /** OR within one filter. */
  values: string[];
}

export interface SeriesSelector {
  projectId: string;
  metricName: string;
  serviceName?: string;
  environment?: string;
  /** AND across filters; a series lacking a filter's key does not match it. */
  filters: LabelFilter[];
}

export interface AggregateQuery extends SeriesSelector {
  startMs: number;
  endMs: number;
  /** Buckets start at multiples of the step since the epoch: bucket = floor(ts / step) * step. */
  stepMs: number;
  aggregation: Aggregation;
  /** Label keys; each row carries the series' value for each (null when the series lacks the key). */
  groupBy: string[];
  /** More distinct groups than this with points in the window: `too_many_series`, nothing materialised. */
  maxSeries: number;
}

export interface AggregateRow {
  /** One entry per `groupBy` key, in order. */
  group: (string | null)[];
  bucketMs: number;
  value: number;
}

export type AggregateResult = { kind: 'rows'; rows: AggregateRow[] } | { kind: 'too_many_series' };

export interface HistogramQuery {
  projectId: string;
  metricName: string;
  environment?: string;
  startMs: number;
  endMs: number;
}

export interface HistogramSample {
  seriesId: bigint;
  ts: number;
  startTs: number | null;
  temporality: string;
  /** Observations in the sample (cumulative samples: since their start). */
  count: bigint;
  /** Their sum; null when the sample did not carry one. */
  sum: number | null;
  /** Finite upper bounds; the last bucket is (last bound, +Inf). */
  bounds: number[];
  /** One more than `bounds`. */
  counts: bigint[];
}

/** A histogram sample read for an aggregate: with the values of the `groupBy` keys of its series. */
export interface HistogramAggregateSample extends HistogramSample {
  group: (string | null)[];
}

export interface MetricsStore {
  /** Names with at least one visible datapoint in the window, with the type their series carry. */
  names(projectId: string, window: TimeWindow, limit: number): Promise<MetricNamesPage>;
  /** Label keys and values of the series of one metric that have a visible datapoint in the window. */
  labels(projectId: string, metricName: string, window: TimeWindow): Promise<LabelValues[]>;
  /** The tombstone of a name (ms), or null when it was never deleted. */
  tombstone(projectId: string, metricName: string): Promise<number | null>;
  aggregate(q: AggregateQuery): Promise<AggregateResult>;
  /** What the catalogue knows of a name, whatever the window. */
  describe(projectId: string, metricName: string): Promise<MetricDescription>;
  /**
   * The visible histogram samples of the aggregate's series in its window, with their group values,
   * ordered by series, temporality, bounds layout and time (as `histogramSamples`). `too_many_series`
   * when more than `maxSeries` groups have samples; then `onSample` was not called.
   */
  histogramAggregateSamples(q: AggregateQuery, onSample: (s: HistogramAggregateSample) => void): Promise<'ok' | 'too_many_series'>;
  /**
   * Calls `onSample` for every visible histogram sample in the window, ordered by series, temporality,
   * bounds layout and time, so a caller can difference consecutive cumulative samples while streaming.
   */
  histogramSamples(q: HistogramQuery, onSample: (s: HistogramSample) => void): Promise<void>;
  /**
   * Tombstones the name at `atMs` (keeping a later existing tombstone) and physically removes its
   * datapoints stamped at or before the tombstone, in one transaction. Returns the tombstone in effect.
   */
  deleteMetric(projectId: string, metricName: string, atMs: number): Promise<number>;
}

/** What a forecast reads: one metric's samples over a window, on a grid of `intervalMs` (storage adapters: readForecastHistory). */
export interface HistoryQuery {
  projectId: string;
  name: string;
  environment?: string;
  startMs: number;
  endMs: number;
  intervalMs: number;
}

/** History for a forecast: one observation per grid bucket (the mean of its samples; counters as their increases). */
export type ForecastHistoryReader = (q: HistoryQuery) => Promise<Observation[]>;
