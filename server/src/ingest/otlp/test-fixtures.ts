/**
 * Test-only: OTLP metrics requests in their JSON form (lowerCamelCase, int64 as strings), and the same
 * request as protobuf bytes through the official generated code (`fromObject` + `encode`).
 */
import { gzipSync } from 'node:zlib';
import type { TestApp } from '../../testing/app.js';
import { otlpMetrics } from './decode.js';

type Attr = string | number | boolean | string[];
type Obj = Record<string, unknown>;

/** Nanoseconds since the epoch as the decimal string OTLP JSON uses. */
export const ns = (ms: number, extraNanos = 0) => (BigInt(ms) * 1_000_000n + BigInt(extraNanos)).toString();

export function attrs(o: Record<string, Attr>): Obj[] {
  return Object.entries(o).map(([key, v]) => ({
    key,
    value: Array.isArray(v)
      ? { arrayValue: { values: v.map((s) => ({ stringValue: s })) } }
      : typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: String(v) }
            : { doubleValue: v },
  }));
}

export function request(resource: Record<string, Attr>, metrics: Obj[]): Obj {
  return { resourceMetrics: [{ resource: { attributes: attrs(resource) }, scopeMetrics: [{ scope: { name: 'test' }, metrics }] }] };
}

export const gauge = (name: string, dataPoints: Obj[]): Obj => ({ name, gauge: { dataPoints } });
export const sum = (name: string, dataPoints: Obj[], isMonotonic = true, aggregationTemporality = 2): Obj => ({
  name,
  sum: { dataPoints, isMonotonic, aggregationTemporality },
});
export const histogram = (name: string, dataPoints: Obj[], aggregationTemporality = 2): Obj => ({
  name,
  histogram: { dataPoints, aggregationTemporality },
});
export const expHistogram = (name: string, dataPoints: Obj[], aggregationTemporality = 1): Obj => ({
  name,
  exponentialHistogram: { dataPoints, aggregationTemporality },
});
export const summary = (name: string, dataPoints: Obj[]): Obj => ({ name, summary: { dataPoints } });

/** A NumberDataPoint (asDouble unless `extra` says otherwise, e.g. `{ asDouble: undefined, asInt: '5' }`). */
export const num = (ms: number, value: number, labels: Record<string, Attr> = {}, extra: Obj = {}): Obj => ({
  attributes: attrs(labels),
  timeUnixNano: ns(ms),
  asDouble: value,
  ...extra,
});

export function protobuf(req: Obj): Buffer {
  const bytes = otlpMetrics.ExportMetricsServiceRequest.encode(otlpMetrics.ExportMetricsServiceRequest.fromObject(req)).finish();
  return Buffer.from(bytes);
}

export interface PostOptions {
  format?: 'protobuf' | 'json';
  key?: string | null;
  query?: string;
  gzip?: boolean;
  headers?: Record<string, string>;
}

/** POST of an OTLP request through app.inject: `req` as JSON or protobuf (`protobufOf`) unless already bytes or text. */
export function postOtlp(t: TestApp, path: string, req: Obj | Buffer | string, opts: PostOptions, protobufOf: (req: Obj) => Buffer) {
  const format = opts.format ?? 'protobuf';
  let payload: Buffer | string = Buffer.isBuffer(req) || typeof req === 'string' ? req : format === 'json' ? JSON.stringify(req) : protobufOf(req);
  if (opts.gzip) payload = gzipSync(payload);
  return t.call({
    method: 'POST',
    url: `${path}${opts.query ? `?${opts.query}` : ''}`,
    key: opts.key,
    payload,
    headers: {
      'content-type': format === 'json' ? 'application/json' : 'application/x-protobuf',
      ...(opts.gzip ? { 'content-encoding': 'gzip' } : {}),
      ...opts.headers,
    },
  });
}

/** POST /v1/metrics through app.inject. */
export const postMetrics = (t: TestApp, req: Obj | Buffer | string, opts: PostOptions = {}) => postOtlp(t, '/v1/metrics', req, opts, protobuf);

export function decodeResponse(body: Buffer): { partialSuccess?: { rejectedDataPoints?: unknown; errorMessage?: string } } {
  const m = otlpMetrics.ExportMetricsServiceResponse.decode(body) as { partialSuccess?: { rejectedDataPoints: unknown; errorMessage: string } };
  if (!m.partialSuccess) return {};
  return { partialSuccess: { rejectedDataPoints: Number(String(m.partialSuccess.rejectedDataPoints)), errorMessage: m.partialSuccess.errorMessage } };
}

export { rows } from '../../testing/rows-at-rest.js';
