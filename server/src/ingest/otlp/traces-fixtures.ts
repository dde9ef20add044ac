/**
 * Test-only: OTLP trace and log requests in their JSON form (lowerCamelCase, hex ids, int64 as strings),
 * the same requests as protobuf bytes through the official generated code, and posting helpers.
 */
import { randomBytes } from 'node:crypto';
import type { TestApp } from '../../testing/app.js';
import { otlpLogs, otlpTraces } from './signal-decode.js';
import { attrs, ns, postOtlp, type PostOptions } from './test-fixtures.js';

type Obj = Record<string, unknown>;
type Attr = string | number | boolean | string[];

export const hexId = (bytes: number) => randomBytes(bytes).toString('hex');
export const traceId = () => hexId(16);
export const spanId = () => hexId(8);

export interface SpanSpec {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  startMs?: number;
  endMs?: number;
  attributes?: Record<string, Attr>;
  events?: { name: string; ms?: number; attributes?: Record<string, Attr> | Obj[] }[];
  status?: { code?: number; message?: string };
  raw?: Obj;
}

/** A Span in OTLP JSON form. */
export function span(s: SpanSpec): Obj {
  const start = s.startMs ?? Date.now() - 60_000;
  return {
    traceId: s.traceId,
    spanId: s.spanId ?? spanId(),
    ...(s.parentSpanId !== undefined ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name ?? 'op',
    kind: s.kind ?? 1,
    startTimeUnixNano: ns(start),
    endTimeUnixNano: ns(s.endMs ?? start + 100),
    attributes: attrs(s.attributes ?? {}),
    events: (s.events ?? []).map((e) => ({
      name: e.name,
      timeUnixNano: ns(e.ms ?? start + 1),
      attributes: Array.isArray(e.attributes) ? e.attributes : attrs(e.attributes ?? {}),
    })),
    ...(s.status ? { status: s.status } : {}),
    ...s.raw,
  };
}

export function traceRequest(resource: Record<string, Attr>, spans: Obj[], scope = 'test-scope'): Obj {
  return { resourceSpans: [{ resource: { attributes: attrs(resource) }, scopeSpans: [{ scope: { name: scope }, spans }] }] };
}

export function logRequest(resource: Record<string, Attr>, logRecords: Obj[], scope = 'test-scope'): Obj {
  return { resourceLogs: [{ resource: { attributes: attrs(resource) }, scopeLogs: [{ scope: { name: scope }, logRecords }] }] };
}

/** Hex ids -> bytes, as the generated fromObject wants them (it reads strings as base64). */
function idsToBytes(req: Obj, levels: [string, string, string], fields: string[]): Obj {
  const copy = structuredClone(req);
  for (const r of (copy[levels[0]] as Obj[]) ?? [])
    for (const s of (r[levels[1]] as Obj[]) ?? [])
      for (const item of (s[levels[2]] as Obj[]) ?? [])
        for (const f of fields) if (typeof item[f] === 'string') item[f] = Buffer.from(item[f] as string, 'hex');
  return copy;
}

export function tracesProtobuf(req: Obj): Buffer {
  const T = otlpTraces.ExportTraceServiceRequest;
  return Buffer.from(T.encode(T.fromObject(idsToBytes(req, ['resourceSpans', 'scopeSpans', 'spans'], ['traceId', 'spanId', 'parentSpanId']))).finish());
}

export function logsProtobuf(req: Obj): Buffer {
  const L = otlpLogs.ExportLogsServiceRequest;
  return Buffer.from(L.encode(L.fromObject(idsToBytes(req, ['resourceLogs', 'scopeLogs', 'logRecords'], ['traceId', 'spanId']))).finish());
}

export const postTraces = (t: TestApp, req: Obj | Buffer | string, opts: PostOptions = {}) => postOtlp(t, '/v1/traces', req, opts, tracesProtobuf);
export const postLogs = (t: TestApp, req: Obj | Buffer | string, opts: PostOptions = {}) => postOtlp(t, '/v1/logs', req, opts, logsProtobuf);

/** A protobuf Export{Trace,Logs}ServiceResponse as plain JSON (count as a number). */
export function decodeSignalResponse(signal: 'traces' | 'logs', body: Buffer): { partialSuccess?: { rejected: number; errorMessage: string } } {
  const type = signal === 'traces' ? otlpTraces.ExportTraceServiceResponse : otlpLogs.ExportLogsServiceResponse;
  const m = type.decode(body) as { partialSuccess?: { rejectedSpans?: unknown; rejectedLogRecords?: unknown; errorMessage: string } };
  if (!m.partialSuccess) return {};
  const n = signal === 'traces' ? m.partialSuccess.rejectedSpans : m.partialSuccess.rejectedLogRecords;
  return { partialSuccess: { rejected: Number(String(n ?? 0)), errorMessage: m.partialSuccess.errorMessage ?? '' } };
}
