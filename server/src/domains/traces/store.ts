/**
 * Storage port of the trace and service reads and of the trace delete. Times are microseconds since the
 * Unix epoch (UTC); windows are closed. A span stored more than once (a retried export) counts once: rows
 * are told apart by span id (the first ingested copy is the one read).
 */
import type { AttrFilter } from './query-rules.js';

export const SPAN_STATUSES = ['ok', 'error', 'unset'] as const;
export type SpanStatus = (typeof SPAN_STATUSES)[number];

/** Conditions that must all hold on one span of a trace. */
export interface SpanConditions {
  /** OR within. */
  serviceNames?: string[];
  name?: string;
  status?: SpanStatus;
  attrs: AttrFilter[];
}

export interface TraceSearch extends SpanConditions {
  projectId: string;
  /** A matching span starts in the window. */
  fromUs: number;
  toUs: number;
  /** Trace duration bounds (first span start to last span end), inclusive. */
  minDurationUs?: number;
  maxDurationUs?: number;
  /** Continue after this trace in (start desc, trace id desc) order. */
  after?: { startUs: number; traceId: string };
  limit: number;
}

export interface TraceSummaryRow {
  traceId: string;
  startUs: number;
  endUs: number;
  spanCount: number;
  errorCount: number;
  services: string[];
  rootSpanId: string;
  rootName: string;
  rootService: string | null;
  /** No span of the trace is parentless (the root has not arrived, or was never sent). */
  rootMissing: boolean;
}

export interface SpanRow {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  startUs: number;
  endUs: number;
  statusCode: string;
  statusMessage: string | null;
  serviceName: string | null;
  environment: string | null;
  scopeName: string | null;
  attributes: string;
  resourceAttributes: string;
}

export interface SpanEventRow {
  spanId: string;
  index: number;
  tsUs: number;
  name: string;
  attributes: string;
}

export interface TraceSize {
  spans: number;
  events: number;
  /** The last span end (µs), from the trace's summary; 0 when the trace has no span. */
  endUs: number;
}

export interface ServiceRow {
  name: string;
  spanCount: number;
  errorSpanCount: number;
  logCount: number;
  firstSeenUs: number;
  lastSeenUs: number;
}

export interface ServicesQuery {
  projectId: string;
  fromUs: number;
  toUs: number;
  /** Which tables to read. */
  spans: boolean;
  logs: boolean;
  /** Retention (docs/retention.md): spans that started, or logs stamped, before these are left out. */
  notBeforeUs?: { spans?: number; logs?: number };
  limit: number;
}

export interface TracesStore {
  search(q: TraceSearch): Promise<TraceSummaryRow[]>;
  /** Distinct spans and span events of one trace (0 spans: no such trace in the project). */
  size(projectId: string, traceId: string): Promise<TraceSize>;
  /** Every span of the trace, once each, ordered by start then span id. */
  spans(projectId: string, traceId: string): Promise<SpanRow[]>;
  /** Every span event of the trace, once each, ordered by span id then position. */
  events(projectId: string, traceId: string): Promise<SpanEventRow[]>;
  /**
   * Removes the trace's spans and span events and, when it removed any, tombstones the trace (stamped
   * `atUs`), all in one transaction, so that spans of the trace ingested later (a retried or late export)
   * are left out; returns the rows removed.
   */
  deleteTrace(projectId: string, traceId: string, atUs: number): Promise<{ spans: number; events: number }>;
  /** Services seen in the window (non-null service names), ordered by name, at most `limit`, with the total. */
  services(q: ServicesQuery): Promise<{ rows: ServiceRow[]; total: number }>;
}
