/**
 * The trace and log requests (traces-decode.ts, logs-decode.ts): their message types, what their decoding
 * shares (export-request.ts holds what the metrics request shares too), and the OTLP rules for their ids.
 * OTLP JSON sends trace and span ids as hex strings, which `fromObject` would read as base64: `hexField`
 * turns them into bytes first.
 */
import type { AnyValue, Int64, KeyValue } from './decode.js';
import { otlpProto, type Decodable, type MessageType, type RequestKind } from './export-request.js';

export type { SignalInput, Visit } from './export-request.js';

export interface SpanEventMessage {
  timeUnixNano?: Int64;
  name?: string | null;
  attributes: KeyValue[];
}
export interface SpanMessage {
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  parentSpanId?: Uint8Array | null;
  name?: string | null;
  kind?: number | null;
  startTimeUnixNano?: Int64;
  endTimeUnixNano?: Int64;
  attributes: KeyValue[];
  events: SpanEventMessage[];
  status?: { code?: number | null; message?: string | null } | null;
}
export interface LogRecordMessage {
  timeUnixNano?: Int64;
  observedTimeUnixNano?: Int64;
  severityNumber?: number | null;
  severityText?: string | null;
  body?: AnyValue | null;
  attributes: KeyValue[];
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  /** OTLP field 12 (`event_name`; `eventName` in OTLP JSON). */
  eventName?: string | null;
}
/** The generated collector messages (also used by tests to build bodies and read responses). */
export const otlpTraces = (otlpProto.collector as unknown as { trace: { v1: Record<string, MessageType<object>> } }).trace.v1 as {
  ExportTraceServiceRequest: MessageType<object>;
  ExportTraceServiceResponse: MessageType<object>;
};
export const otlpLogs = (otlpProto.collector as unknown as { logs: { v1: Record<string, MessageType<object>> } }).logs.v1 as {
  ExportLogsServiceRequest: MessageType<object>;
  ExportLogsServiceResponse: MessageType<object>;
};

/** What the trace and log requests have in common: items are visited with their scope name; span links are not stored. */
const SIGNAL = {
  walkNames: { resource: 'resource', scope: 'scope', item: 'an item' },
  scopeNames: true,
  typePrefix: /^\.opentelemetry\.proto\.(?:collector\.)?(?:trace|logs|common|resource)\.v1\./,
  dropJsonField: 'links',
};

export const TRACES: RequestKind<SpanMessage> = {
  ...SIGNAL,
  name: 'ExportTraceServiceRequest',
  request: otlpTraces.ExportTraceServiceRequest,
  item: otlpProto.trace.v1.Span as Decodable<SpanMessage>,
  levels: ['resourceSpans', 'scopeSpans', 'spans'],
};

export const LOGS: RequestKind<LogRecordMessage> = {
  ...SIGNAL,
  name: 'ExportLogsServiceRequest',
  request: otlpLogs.ExportLogsServiceRequest,
  item: otlpProto.logs.v1.LogRecord as Decodable<LogRecordMessage>,
  levels: ['resourceLogs', 'scopeLogs', 'logRecords'],
};

/** Bytes that no valid id has (wrong length, not zero): what a malformed hex id becomes, so it is refused like one. */
const MALFORMED_ID = Uint8Array.of(0xff);

/** Replaces a hex id field of a JSON item by its bytes (an empty string is no id; malformed hex is refused later). */
export function hexField(item: Record<string, unknown>, field: string): void {
  const v = item[field];
  if (typeof v !== 'string') return;
  item[field] = v.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(v) ? Buffer.from(v, 'hex') : MALFORMED_ID;
}

/** Lower-case hex of raw id bytes. */
export function hexOf(b: Uint8Array): string {
  return (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString('hex');
}

/** True when the id has `size` bytes and is not all zero (the OTLP rule for a valid trace or span id). */
export function validId(b: Uint8Array | null | undefined, size: number): b is Uint8Array {
  if (!b || b.length !== size) return false;
  for (let i = 0; i < size; i++) if (b[i] !== 0) return true;
  return false;
}

/** True when the field carries no id: absent, empty, or all zero bytes. */
export function noId(b: Uint8Array | null | undefined): boolean {
  if (!b || b.length === 0) return true;
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}
