/**
 * The data of `--peer` (bench/peer.ts): 1,000 series x 1,000 points of one gauge, its OTLP protobuf bodies (ours)
 * and Prometheus text bodies (VictoriaMetrics), the same points in both.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
export const ExportReq = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const { Writer } = require('protobufjs/minimal.js') as typeof import('protobufjs/minimal.js');

export const SERIES = 1000;
export const POINTS = 1000;
export const STEP_MS = 60_000;
export const HOUR = 3_600_000;
const GROUPS = 10;
export const METRIC = 'bench_gauge';
export const SMALL_METRIC = 'bench_small';
export const SMALL_POINTS = 200_000;

/** The hour-aligned origin: 18 h ago, so the last point (16 h 40 m later) is over an hour old. */
export const T0 = Math.floor(Date.now() / HOUR) * HOUR - 18 * HOUR;
const tsOf = (i: number) => T0 + 30_000 + i * STEP_MS;
function valueOf(s: number, i: number): number {
  let h = Math.imul(s * 1_000_003 + i, 0x9e3779b1) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  return (h % 10_000) / 100;
}

/** OTLP protobuf of minutes [from, to) of every series of `metric`, written field by field (fromObject takes ~40 s for 1M points). */
export function otlpBody(metric: string, from: number, to: number): Uint8Array {
  const w = Writer.create();
  const kv = (key: string, v: string) => {
    w.fork().uint32((1 << 3) | 2).string(key); // KeyValue.key
    w.uint32((2 << 3) | 2).fork().uint32((1 << 3) | 2).string(v).ldelim(); // KeyValue.value: AnyValue.string_value
    w.ldelim();
  };
  w.uint32((1 << 3) | 2).fork(); // ExportMetricsServiceRequest.resource_metrics
  w.uint32((1 << 3) | 2).fork(); // ResourceMetrics.resource
  w.uint32((1 << 3) | 2);
  kv('service.name', 'bench'); // Resource.attributes
  w.ldelim();
  w.uint32((2 << 3) | 2).fork(); // ResourceMetrics.scope_metrics
  w.uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).string('bench').ldelim(); // ScopeMetrics.scope.name
  w.uint32((2 << 3) | 2).fork(); // ScopeMetrics.metrics
  w.uint32((1 << 3) | 2).string(metric); // Metric.name
  w.uint32((5 << 3) | 2).fork(); // Metric.gauge
  for (let s = 0; s < SERIES; s++) {
    for (let i = from; i < to; i++) {
      w.uint32((1 << 3) | 2).fork(); // Gauge.data_points
      const ns = BigInt(tsOf(i)) * 1_000_000n;
      w.uint32((3 << 3) | 1).fixed32(Number(ns & 0xffffffffn)).fixed32(Number(ns >> 32n)); // time_unix_nano (fixed64)
      w.uint32((4 << 3) | 1).double(valueOf(s, i)); // as_double
      w.uint32((7 << 3) | 2);
      kv('host', `host-${s}`); // attributes
      w.uint32((7 << 3) | 2);
      kv('g', `g${s % GROUPS}`);
      w.ldelim();
    }
  }
  w.ldelim().ldelim().ldelim().ldelim();
  return w.finish();
}

/** The same request through the generated classes: what otlpBody is checked against. */
export function otlpBodyReference(metric: string, from: number, to: number): Uint8Array {
  const dataPoints = [];
  for (let s = 0; s < SERIES; s++) {
    const attributes = [
      { key: 'host', value: { stringValue: `host-${s}` } },
      { key: 'g', value: { stringValue: `g${s % GROUPS}` } },
    ];
    for (let i = from; i < to; i++) dataPoints.push({ attributes, timeUnixNano: (BigInt(tsOf(i)) * 1_000_000n).toString(), asDouble: valueOf(s, i) });
  }
  const msg = ExportReq.fromObject({
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeMetrics: [{ scope: { name: 'bench' }, metrics: [{ name: metric, gauge: { dataPoints } }] }],
      },
    ],
  });
  return ExportReq.encode(msg).finish();
}

/** Prometheus text exposition (with timestamps) of the same points. */
export function promBody(metric: string, from: number, to: number): Uint8Array {
  const lines: string[] = [];
  for (let s = 0; s < SERIES; s++) {
    const sel = `${metric}{host="host-${s}",g="g${s % GROUPS}"} `;
    for (let i = from; i < to; i++) lines.push(`${sel}${valueOf(s, i)} ${tsOf(i)}\n`);
  }
  return Buffer.from(lines.join(''));
}

export function bodies(encode: (m: string, from: number, to: number) => Uint8Array, metric: string, perRequest: number, points: number, firstMinute = 0) {
  const minutes = perRequest / SERIES;
  return Array.from({ length: points / perRequest }, (_, k) => encode(metric, firstMinute + k * minutes, firstMinute + (k + 1) * minutes));
}
