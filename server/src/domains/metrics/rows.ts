/**
 * The rows an OTLP metrics request becomes, as ingestion hands them to the telemetry store, and the
 * store's write port. Engine-neutral: each telemetry engine has its own writer (storage/telemetry/*).
 */
import type { MetricType } from './store.js';

export type { MetricType };

export interface SeriesRow {
  seriesId: bigint;
  name: string;
  type: MetricType;
  serviceName: string | null;
  environment: string | null;
  /** JSON object text: string values, keys sorted. */
  labels: string;
}

export interface HistogramRow {
  name: string;
  seriesId: bigint;
  ts: number;
  startTs: number | null;
  temporality: 'delta' | 'cumulative';
  count: bigint;
  sum: number | null;
  /** Ascending upper bounds; the last bucket is (last bound, +Inf), so counts has bounds.length + 1 entries. */
  bounds: number[];
  counts: bigint[];
}

/** The rows of one request, columnar for the points (the bulk of the data) so no object is made per point. */
export interface MetricRows {
  /** Every series the rows reference (each once). */
  series: SeriesRow[];
  /** Per point: its series, as an index into `series`. */
  pointSeries: number[];
  /** Per point: milliseconds since the epoch. */
  pointTs: number[];
  pointValue: number[];
  /**
   * Per point: the start time in ms of a cumulative monotonic Sum sample (`UNKNOWN_START` when it gave
   * none), NaN for every other sample (stored as NULL). Absent when no point of the request has one.
   */
  pointStart?: number[];
  histograms: HistogramRow[];
  /** The unit and description of each metric of the request that sent one (the last one sent wins). */
  metadata?: MetricMetadataRow[];
}

/** What an instrument says of itself; kept per metric name, the latest sent wins. */
export interface MetricMetadataRow {
  name: string;
  unit: string;
  description: string;
}

/** metric_points.start_ts of a cumulative counter sample whose start time is unknown (the engines' schemas). */
export const UNKNOWN_START = -1;

/** Where ingested metric rows go: a 2xx is built on `write` having resolved (the rows are stored). */
export interface MetricsSink {
  /** Resolves once the rows are stored; rejects when they could not be or the writer is stopped (WriterStoppedError). */
  write(projectId: string, rows: MetricRows): Promise<void>;
  /** Forgets cached series ids (all, or one project's) after series rows were deleted. */
  forgetSeries(projectId?: string): void;
  /** Waits until everything handed over so far is stored (or failed). */
  flush(): Promise<void>;
  /** Refuses new writes, then stores what is queued. Idempotent. */
  stop(): Promise<void>;
}
