/**
 * Storage port of the log reads, the log delete and the live tail. Times are microseconds since the Unix
 * epoch (UTC); windows are closed. Severities are read as ranks 1..6 (trace, debug, info, warn, error,
 * fatal): from `severity_number` (OTel ranges 1-4, 5-8, ... 21-24), else from `severity_text` (see
 * severity.ts); null when neither says.
 */
import type { AttrFilter } from '../traces/query-rules.js';

/** Conditions on one log record; every present one must hold. */
export interface LogFilter {
  /** OR within. */
  serviceNames?: string[];
  /** At least this rank (1..6). */
  minSeverity?: number;
  /** Lower-cased; a substring of the lower-cased body. */
  text?: string;
  /**
   * With `text`: the content classes whose bodies the text may match (those the reader is served in
   * full); a content body of any other class never matches. Absent or empty: ordinary bodies only.
   */
  readableBodyClasses?: readonly string[];
  traceId?: string;
  logId?: string;
  attrs: AttrFilter[];
  /** Retention (docs/retention.md): records stamped before this (µs) are left out, whatever the window. */
  notBeforeUs?: number;
}

export interface LogRow {
  logId: string;
  tsUs: number;
  observedUs: number | null;
  severityNumber: number | null;
  severityText: string | null;
  /** 1..6 or null. */
  severityRank: number | null;
  body: string | null;
  /** The content class of a body that is recorded content (a GenAI event's), null for an ordinary body. */
  bodyClass: string | null;
  traceId: string | null;
  spanId: string | null;
  serviceName: string | null;
  environment: string | null;
  scopeName: string | null;
  attributes: string;
  resourceAttributes: string;
  ingestedUs: number;
}

export interface LogPosition {
  tsUs: number;
  logId: string;
}

export interface LogSearch {
  projectId: string;
  filter: LogFilter;
  fromUs: number;
  toUs: number;
  order: 'asc' | 'desc';
  /** Continue strictly after this position in `order`. */
  after?: LogPosition;
  limit: number;
}

/** A group dimension: the service, the severity rank (as text) or an attribute (attributes, else resource). */
export type GroupKey = { kind: 'service' } | { kind: 'severity' } | { kind: 'attr'; key: string };

export interface LogAggregateQuery {
  projectId: string;
  filter: LogFilter;
  fromUs: number;
  toUs: number;
  /** Buckets start at multiples of the step since the epoch; absent: one total per group. */
  stepUs?: number;
  groupBy: GroupKey[];
  /** More distinct groups than this: `too_many_series`, nothing materialised. */
  maxSeries: number;
}

export interface LogAggregateRow {
  group: (string | null)[];
  /** Bucket start (µs); absent without a step. */
  bucketUs?: number;
  count: number;
}

export type LogAggregateResult = { kind: 'rows'; rows: LogAggregateRow[] } | { kind: 'too_many_series' };

export interface FieldsQuery {
  projectId: string;
  filter: LogFilter;
  fromUs: number;
  toUs: number;
  /** The newest this many matching logs are read. */
  sample: number;
  maxKeys: number;
  topValues: number;
  /** Values longer than this are not listed as top values. */
  maxValueLength: number;
  /** Leave recorded-content keys out. */
  hideContentKeys: boolean;
}

export interface FieldRow {
  source: 'attributes' | 'resource_attributes';
  key: string;
  /** Logs (of those read) holding the key. */
  count: number;
  distinctValues: number;
  top: { value: string; count: number }[];
}

export interface FieldsResult {
  fields: FieldRow[];
  totalKeys: number;
  /** Logs read. */
  scanned: number;
  /** More logs matched than were read. */
  sampled: boolean;
}

export interface BodySample {
  logId: string;
  tsUs: number;
  serviceName: string | null;
  severityRank: number | null;
  /** At most the first `bodyChars` characters ('' when none). */
  body: string;
  /** As in LogRow. */
  bodyClass: string | null;
  /** The whole stored body's UTF-8 size. */
  bodyBytes: number;
}

export interface LogsStore {
  search(q: LogSearch): Promise<LogRow[]>;
  get(projectId: string, logId: string): Promise<LogRow | null>;
  /** Up to `n` logs of the same service (null: logs without one) strictly before or after `at`, nearest first. */
  neighbours(projectId: string, serviceName: string | null, at: LogPosition, side: 'before' | 'after', n: number): Promise<LogRow[]>;
  aggregate(q: LogAggregateQuery): Promise<LogAggregateResult>;
  fields(q: FieldsQuery): Promise<FieldsResult>;
  /** The newest `limit + 1` matching bodies (the extra one tells there were more). */
  bodies(q: { projectId: string; filter: LogFilter; fromUs: number; toUs: number; limit: number; bodyChars: number }): Promise<BodySample[]>;
  /** Deletes the matching logs (window optional for a `logId` delete) in one transaction; returns the count. */
  delete(q: { projectId: string; filter: LogFilter; fromUs?: number; toUs?: number }): Promise<number>;
  /** The latest ingest time in the project, or null with no logs. */
  maxIngested(projectId: string): Promise<number | null>;
  /** Log ids ingested in (`afterUs`, `upToUs`] (what a tail starting at `upToUs` takes as already seen). */
  idsIngestedBetween(projectId: string, afterUs: number, upToUs: number): Promise<{ logId: string; ingestedUs: number }[]>;
  /** Matching logs ingested in (`afterUs`, `upToUs`], excluding `exclude`, by ingest time then log time then id. */
  tail(q: { projectId: string; filter: LogFilter; afterUs: number; upToUs: number; exclude: string[]; limit: number }): Promise<LogRow[]>;
}
