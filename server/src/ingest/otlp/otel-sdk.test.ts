/**
 * A real client: the official OpenTelemetry JS metrics SDK with its OTLP/HTTP exporters (protobuf and
 * JSON) sends counters, up-down counters, observable gauges and histograms (explicit and exponential)
 * to the server listening on a port; the values are read back through the metrics API.
 */
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationType, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
});

type Exporter = 'protobuf' | 'json';

/** One SDK pipeline: record, force a flush (the export must succeed), shut down. */
async function sendWithSdk(kind: Exporter, key: string, env: string, gzip: boolean) {
  const options = { url: `${base}/v1/metrics`, headers: { 'x-svc-api-key': key }, ...(gzip ? { compression: 'gzip' as never } : {}) };
  const exporter: PushMetricExporter = kind === 'protobuf' ? new ProtoExporter(options) : new JsonExporter(options);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': `sdk-${kind}`, 'deployment.environment.name': env, 'host.name': 'not-a-label' }),
    readers: [reader],
    views: [{ instrumentName: 'sdk.exp_latency', aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } }],
  });
  const meter = provider.getMeter('svc-test', '1.0.0');
  const requests = meter.createCounter('sdk.requests');
  requests.add(5, { route: '/a' });
  requests.add(3, { route: '/a' });
  requests.add(2, { route: '/b' });
  meter.createUpDownCounter('sdk.in_flight').add(-4, { pool: 'db' });
  meter.createObservableGauge('sdk.temperature').addCallback((r) => r.observe(21.5, { room: 'lab' }));
  const latency = meter.createHistogram('sdk.latency');
  for (const v of [0.1, 7, 20000]) latency.record(v, { route: '/a' });
  const exp = meter.createHistogram('sdk.exp_latency');
  for (const v of [1, 1, 3, 100]) exp.record(v);
  await provider.forceFlush(); // rejects when the export fails
  await provider.shutdown();
}

async function readBack(kind: Exporter, key: string, env: string) {
  const window = { start: new Date(Date.now() - 3_600_000).toISOString(), end: new Date(Date.now() + 3_600_000).toISOString() };
  const aggregate = async (metric_name: string, aggregation: string, group_by?: string[]) => {
    const res = await t.call({
      method: 'POST',
      url: '/api/v1/metrics/aggregate',
      key,
      payload: { metric_name, aggregation, step: '1d', time_range: window, environment: env, service_name: `sdk-${kind}`, ...(group_by ? { group_by } : {}) },
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().series as { labels: Record<string, string>; points: { value: number }[] }[])
      .map((s) => [s.labels, s.points.map((p) => p.value)])
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  };
  const histogram = async (metric_name: string) => {
    const res = await t.call({ method: 'POST', url: '/api/v1/metrics/histogram', key, payload: { metric_name, step: '1d', time_range: window, environment: env } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().cells as { upper_bound: number; upper_bound_infinite: boolean; count: number }[])
      .filter((c) => Number(c.count) > 0)
      .map((c) => [c.upper_bound_infinite ? 'inf' : c.upper_bound, Number(c.count)]);
  };
  const names = await t.call({ method: 'GET', url: '/api/v1/metrics/names', key });
  return { aggregate, histogram, names: names.json().metrics as { name: string; type?: string }[] };
}

describe('the OpenTelemetry JS SDK exporting to POST /v1/metrics', () => {
  for (const [kind, gzip] of [
    ['protobuf', true],
    ['json', false],
  ] as const) {
    it(`${kind} exporter (@opentelemetry/exporter-metrics-otlp-${kind === 'protobuf' ? 'proto' : 'http'}${gzip ? ', gzip' : ''}): counters, gauges and histograms read back`, async () => {
      const p = await projectWithKey(t, ['ingest:write', 'metrics:read'], `sdk-${kind}`);
      await sendWithSdk(kind, p.key, 'test', gzip);
      const r = await readBack(kind, p.key, 'test');

      expect(r.names).toEqual([
        { name: 'sdk.exp_latency', type: 'histogram' },
        { name: 'sdk.in_flight', type: 'gauge' }, // non-monotonic sum
        { name: 'sdk.latency', type: 'histogram' },
        { name: 'sdk.requests', type: 'counter' },
        { name: 'sdk.temperature', type: 'gauge' },
      ]);
      expect(await r.aggregate('sdk.requests', 'max', ['route'])).toEqual([
        [{ route: '/a' }, [8]],
        [{ route: '/b' }, [2]],
      ]);
      expect(await r.aggregate('sdk.in_flight', 'min')).toEqual([[{}, [-4]]]);
      expect(await r.aggregate('sdk.temperature', 'avg', ['room'])).toEqual([[{ room: 'lab' }, [21.5]]]);
      // histogram mean as the point: (0.1 + 7 + 20000) / 3
      expect((await r.aggregate('sdk.latency', 'avg'))[0][1]).toEqual([(0.1 + 7 + 20000) / 3]);
      // SDK default explicit bounds [0, 5, 10, 25, ...]: 0.1 in (0, 5], 7 in (5, 10], 20000 in (10000, +Inf)
      expect(await r.histogram('sdk.latency')).toEqual([
        [5, 1],
        [10, 1],
        ['inf', 1],
      ]);
      // exponential: every value lands in a bucket whose upper bound is at or above it, none in +Inf
      const exp = await r.histogram('sdk.exp_latency');
      expect(exp.reduce((a, [, c]) => a + (c as number), 0)).toBe(4);
      expect(exp.some(([b]) => b === 'inf')).toBe(false);
      const bound1 = exp.find(([b]) => (b as number) >= 1)!;
      expect(bound1[1]).toBe(2); // the two 1s share the bucket whose upper bound is 1
      expect(bound1[0]).toBeCloseTo(1, 9);
      // the SDK rescales to fit 160 buckets; at any scale >= 0 a bucket is at most 2x wide
      const bound100 = exp.find(([b]) => (b as number) >= 100)!;
      expect(bound100[1]).toBe(1);
      expect(bound100[0]).toBeLessThan(200);
      expect(exp.find(([b]) => (b as number) >= 3)![1]).toBe(1);
    });
  }
});
