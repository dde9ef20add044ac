import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors.js';
import { decodeJsonRequest, decodeProtobufRequest, type KeyValue, type Metric, type MetricsInput } from './decode.js';
import { attrs, gauge, ns, num, protobuf, request } from './test-fixtures.js';

const root = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js').opentelemetry.proto;

function collect(input: MetricsInput): { resource: Record<string, string>; name: string | null | undefined }[] {
  const out: { resource: Record<string, string>; name: string | null | undefined }[] = [];
  input.forEachMetric((a: KeyValue[], m: Metric) => out.push({ resource: Object.fromEntries(a.map((kv) => [kv.key, kv.value?.stringValue ?? ''])), name: m.name }));
  return out;
}

function varint(n: number): number[] {
  const b: number[] = [];
  while (n > 0x7f) {
    b.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  b.push(n);
  return b;
}
const field = (no: number, bytes: Uint8Array) => Buffer.from([(no << 3) | 2, ...varint(bytes.length), ...bytes]);

describe('protobuf decoding (generated code, walked metric by metric)', () => {
  it('gives every metric with its resource attributes, across resources and scopes', () => {
    const body = protobuf({
      resourceMetrics: [
        { resource: { attributes: attrs({ 'service.name': 'a' }) }, scopeMetrics: [{ metrics: [gauge('m1', [num(1, 1)])] }, { metrics: [gauge('m2', [num(1, 1)])] }] },
        { scopeMetrics: [{ metrics: [gauge('m3', [num(1, 1)])] }] },
      ],
    });
    expect(collect(decodeProtobufRequest(body))).toEqual([
      { resource: { 'service.name': 'a' }, name: 'm1' },
      { resource: { 'service.name': 'a' }, name: 'm2' },
      { resource: {}, name: 'm3' },
    ]);
  });

  it('a resource sent after the scope metrics still applies to them; unknown fields are skipped', () => {
    const scope = root.metrics.v1.ScopeMetrics.encode({ metrics: [{ name: 'late', gauge: { dataPoints: [] } }] }).finish();
    const resource = root.resource.v1.Resource.encode({ attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] }).finish();
    const unknown = Buffer.from([(15 << 3) | 0, 42]); // field 15, varint
    const rm = Buffer.concat([field(2, scope), unknown, field(1, resource), field(3, Buffer.from('schema'))]);
    const body = Buffer.concat([field(1, rm), unknown]);
    expect(collect(decodeProtobufRequest(body))).toEqual([{ resource: { 'service.name': 'svc' }, name: 'late' }]);
  });

  it('an empty body is an empty request', () => {
    expect(collect(decodeProtobufRequest(Buffer.alloc(0)))).toEqual([]);
  });

  it('a truncated or malformed body is a 400 invalid_request naming the problem', () => {
    const good = protobuf(request({ 'service.name': 'x' }, [gauge('g', [num(1, 1)])]));
    for (const bad of [good.subarray(0, good.length - 3), Buffer.from([0x0a, 0x05, 0x01]), Buffer.from([0x0f])]) {
      let err: unknown;
      try {
        collect(decodeProtobufRequest(bad));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(400);
      expect((err as ApiError).message).toMatch(/^request body is not a valid protobuf ExportMetricsServiceRequest: /);
    }
  });

  it('repeated short strings decode to the same text (interned), long and non-ASCII ones too', () => {
    const long = 'x'.repeat(200);
    const body = protobuf(request({ 'service.name': 'café' }, [gauge('g', [num(1, 1, { k: long })]), gauge('g', [num(1, 1, { k: 'v' })]), gauge('g', [num(1, 1, { k: 'v' })])]));
    const seen: string[] = [];
    decodeProtobufRequest(body).forEachMetric((a, m) => {
      seen.push(a[0].value!.stringValue!, m.gauge!.dataPoints[0].attributes[0].value!.stringValue!);
    });
    expect(seen).toEqual(['café', long, 'café', 'v', 'café', 'v']);
  });
});

describe('JSON decoding', () => {
  const json = (o: unknown) => Buffer.from(JSON.stringify(o));

  it('lowerCamelCase and snake_case field names give the same metrics; exemplars are ignored', () => {
    const camel = request({ 'service.name': 's' }, [gauge('g', [{ ...num(1, 1), exemplars: [{ traceId: '5b8efff798038103d269b633813fc60c', asDouble: 1 }] }])]);
    const snake = {
      resource_metrics: [{ resource: { attributes: attrs({ 'service.name': 's' }) }, scope_metrics: [{ metrics: [{ name: 'g', gauge: { data_points: [{ time_unix_nano: ns(1), as_double: 1 }] } }] }] }],
    };
    const points = (input: MetricsInput) => {
      const out: unknown[] = [];
      input.forEachMetric((_a, m) => out.push(m.gauge!.dataPoints.map((p) => [String(p.timeUnixNano), p.asDouble])));
      return out;
    };
    expect(points(decodeJsonRequest(json(camel)))).toEqual([[['1000000', 1]]]);
    expect(points(decodeJsonRequest(json(snake)))).toEqual([[['1000000', 1]]]);
  });

  it('refuses what is not an OTLP JSON object with 400', () => {
    for (const [body, message] of [
      ['nope', 'request body is not valid JSON'],
      ['null', 'request body must be a JSON object (an OTLP ExportMetricsServiceRequest)'],
      ['{"resourceMetrics": [{"scopeMetrics": "x"}]}', 'request body is not a valid OTLP JSON ExportMetricsServiceRequest: ResourceMetrics.scopeMetrics: array expected'],
    ]) {
      expect(() => decodeJsonRequest(Buffer.from(body))).toThrow(message);
    }
  });
});
