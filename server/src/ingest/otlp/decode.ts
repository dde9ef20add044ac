/**
 * OTLP/HTTP metrics request bodies (protobuf and JSON) decoded into one shape: the message objects of
 * the official generated protobufjs code shipped by @opentelemetry/otlp-transformer (see
 * export-request.ts, which the trace and log requests share).
 *
 * Both are handed to the converter as a `MetricsInput`: a walk over (resource, metric) pairs. For
 * protobuf the walk decodes one Metric at a time (the generated `Metric.decode`) while stepping over the
 * three wrapper levels itself, so a 10,000-point request never exists as one object tree.
 */
import { jsonInput, otlpProto, protobufInput, type Decodable, type MessageType, type RequestKind, type SignalInput } from './export-request.js';

/** protobufjs gives int64 fields as `Long` objects when the `long` package is present, as numbers otherwise. */
export interface LongLike {
  low: number;
  high: number;
  unsigned: boolean;
}
export type Int64 = LongLike | number | string | null | undefined;

export interface AnyValue {
  stringValue?: string | null;
  boolValue?: boolean | null;
  intValue?: Int64;
  doubleValue?: number | null;
  arrayValue?: { values: AnyValue[] } | null;
  kvlistValue?: { values: KeyValue[] } | null;
  bytesValue?: Uint8Array | null;
}
export interface KeyValue {
  key: string;
  value?: AnyValue | null;
}
export interface NumberDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano?: Int64;
  timeUnixNano?: Int64;
  asDouble?: number | null;
  asInt?: Int64;
  flags?: number | null;
}
export interface HistogramDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano?: Int64;
  timeUnixNano?: Int64;
  count?: Int64;
  sum?: number | null;
  bucketCounts: Int64[];
  explicitBounds: number[];
  flags?: number | null;
}
export interface Buckets {
  offset?: number | null;
  bucketCounts: Int64[];
}
export interface ExponentialHistogramDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano?: Int64;
  timeUnixNano?: Int64;
  count?: Int64;
  sum?: number | null;
  scale?: number | null;
  zeroCount?: Int64;
  positive?: Buckets | null;
  negative?: Buckets | null;
  flags?: number | null;
  zeroThreshold?: number | null;
}
export interface SummaryDataPoint {
  attributes: KeyValue[];
  startTimeUnixNano?: Int64;
  timeUnixNano?: Int64;
  count?: Int64;
  sum?: number | null;
  flags?: number | null;
}
export interface Metric {
  name?: string | null;
  unit?: string | null;
  description?: string | null;
  gauge?: { dataPoints: NumberDataPoint[] } | null;
  sum?: { dataPoints: NumberDataPoint[]; aggregationTemporality?: number | null; isMonotonic?: boolean | null } | null;
  histogram?: { dataPoints: HistogramDataPoint[]; aggregationTemporality?: number | null } | null;
  exponentialHistogram?: { dataPoints: ExponentialHistogramDataPoint[]; aggregationTemporality?: number | null } | null;
  summary?: { dataPoints: SummaryDataPoint[] } | null;
}
export interface ScopeMetrics {
  metrics: Metric[];
}
export interface ResourceMetrics {
  resource?: { attributes: KeyValue[] } | null;
  scopeMetrics: ScopeMetrics[];
}
export interface MetricsRequest {
  resourceMetrics: ResourceMetrics[];
}

/** The metrics of a request with the attributes of their resource (empty when it has none). */
export interface MetricsInput {
  /** Throws ApiError 400 when the body turns out malformed part way. */
  forEachMetric(visit: (resourceAttributes: KeyValue[], metric: Metric) => void): void;
}

/** The generated message classes (also used by tests to build request bodies). */
export const otlpMetrics = (otlpProto.collector as unknown as { metrics: { v1: Record<string, MessageType<object>> } }).metrics.v1 as {
  ExportMetricsServiceRequest: MessageType<MetricsRequest>;
  ExportMetricsServiceResponse: MessageType<object>;
};

const METRICS: RequestKind<Metric> = {
  name: 'ExportMetricsServiceRequest',
  request: otlpMetrics.ExportMetricsServiceRequest,
  item: otlpProto.metrics.v1.Metric as Decodable<Metric>,
  levels: ['resourceMetrics', 'scopeMetrics', 'metrics'],
  walkNames: { resource: 'ResourceMetrics', scope: 'ScopeMetrics', item: 'a Metric' },
  scopeNames: false,
  typePrefix: /^\.opentelemetry\.proto\.(?:collector\.)?metrics\.v1\./,
  dropJsonField: 'exemplars',
};

function metricsInput(input: SignalInput<Metric>): MetricsInput {
  return { forEachMetric: (visit) => input.forEach((attrs, _scope, metric) => visit(attrs, metric)) };
}

/** A protobuf body, decoded metric by metric while it is walked (see the file comment). */
export function decodeProtobufRequest(bytes: Uint8Array): MetricsInput {
  return metricsInput(protobufInput(bytes, METRICS));
}

/** An OTLP/HTTP JSON body (export-request.ts). Exemplars are dropped before conversion: nothing stores them. */
export function decodeJsonRequest(bytes: Uint8Array): MetricsInput {
  return metricsInput(jsonInput(bytes, METRICS));
}
