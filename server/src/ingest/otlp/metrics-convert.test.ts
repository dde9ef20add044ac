import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { decodeJsonRequest, decodeProtobufRequest, type KeyValue } from './decode.js';
import { exponentialToExplicit } from './exponential.js';
import { convertMetrics } from './metrics-convert.js';
import { labelsJson, nanosToMs, seriesId, uint64ToBigInt } from './values.js';
import { attrs, gauge, ns, num, protobuf, request, sum } from './test-fixtures.js';

const Long = createRequire(createRequire(import.meta.url).resolve('@opentelemetry/otlp-transformer/build/src/generated/root.js'))('long') as {
  fromString(s: string, unsigned?: boolean): { low: number; high: number; unsigned: boolean };
};

describe('int64 handling (protobufjs Long objects, numbers, strings)', () => {
  it('time_unix_nano -> whole milliseconds, floor, exact (no double rounding of the nanoseconds)', () => {
    const ns = '1735689600123999999'; // 2025-01-01T00:00:00.123999999Z
    expect(nanosToMs(Long.fromString(ns, true))).toBe(1735689600123);
    expect(nanosToMs(Long.fromString(ns, false))).toBe(1735689600123);
    expect(nanosToMs(ns)).toBe(1735689600123);
    expect(nanosToMs(1735689600123000000)).toBe(1735689600123);
    expect(nanosToMs(Long.fromString('18446744073709551615', true))).toBe(18446744073709);
    expect(nanosToMs(null)).toBe(0);
    expect(nanosToMs('999999')).toBe(0);
  });

  it('counts -> bigint; negative or >= 2^63 (what "-5" becomes through fromObject) is refused', () => {
    expect(uint64ToBigInt(Long.fromString('9007199254740993', true))).toBe(9007199254740993n);
    expect(uint64ToBigInt(7)).toBe(7n);
    expect(uint64ToBigInt('12')).toBe(12n);
    expect(uint64ToBigInt(Long.fromString('-5', false))).toBeUndefined();
    expect(uint64ToBigInt(-1)).toBeUndefined();
    expect(uint64ToBigInt('x')).toBeUndefined();
  });
});

describe('labels', () => {
  const kv = (k: string, v: Record<string, unknown>): KeyValue => ({ key: k, value: v });

  it('JSON object with string values, keys sorted by code unit, a repeated key keeps its last value', () => {
    expect(labelsJson([])).toBe('{}');
    expect(labelsJson([kv('b', { stringValue: '1' }), kv('a', { intValue: 2 }), kv('b', { stringValue: '3' }), kv('B', { boolValue: false })])).toBe(
      '{"B":"false","a":"2","b":"3"}',
    );
    expect(labelsJson([kv('q"uote', { stringValue: 'line\nbreak' })])).toBe('{"q\\"uote":"line\\nbreak"}');
    expect(JSON.parse(labelsJson([kv('m', { kvlistValue: { values: [kv('x', { doubleValue: 1.5 })] } })]))).toEqual({ m: '{"x":1.5}' });
  });

  it('series_id is a stable 64-bit hash of (name, type, service_name, environment, labels)', () => {
    const id = seriesId('m', 'gauge', 's', 'e', '{}');
    expect(id).toBe(seriesId('m', 'gauge', 's', 'e', '{}'));
    expect(id).toBeLessThan(2n ** 64n);
    const others = [seriesId('n', 'gauge', 's', 'e', '{}'), seriesId('m', 'counter', 's', 'e', '{}'), seriesId('m', 'gauge', null, 'e', '{}'), seriesId('m', 'gauge', 's', null, '{}'), seriesId('m', 'gauge', 's', 'e', '{"a":"b"}')];
    expect(new Set([id, ...others]).size).toBe(6);
  });
});

describe('exponential histogram -> explicit bounds', () => {
  it('scale -1 (base 4), positive buckets only, zero threshold 0', () => {
    // index 0 covers (1, 4], index 1 covers (4, 16]; the gap (0, 1] keeps the first bucket's lower edge
    expect(exponentialToExplicit(-1, 0, 0n, { offset: 0, counts: [2n, 5n] }, { offset: 0, counts: [] })).toEqual({
      bounds: [0, 1, 4, 16],
      counts: [0n, 0n, 2n, 5n, 0n],
    });
  });

  it('negative buckets only: mirrored, most negative first', () => {
    // scale 0: index 0 covers [-2, -1), index 1 covers [-4, -2)
    expect(exponentialToExplicit(0, 0, 1n, { offset: 0, counts: [] }, { offset: 0, counts: [3n, 4n] })).toEqual({
      bounds: [-4, -2, -1, 0],
      counts: [0n, 4n, 3n, 1n, 0n],
    });
  });

  it('a zero threshold wider than the nearest bucket edge folds that edge into the zero bucket', () => {
    // scale 0, positive offset -1: index -1 covers (0.5, 1]; zero threshold 0.75 > 0.5: no gap bucket
    expect(exponentialToExplicit(0, 0.75, 2n, { offset: -1, counts: [1n, 1n] }, { offset: 0, counts: [] })).toEqual({
      bounds: [0.75, 1, 2],
      counts: [2n, 1n, 1n, 0n],
    });
  });
});

describe('convertMetrics', () => {
  it('NoRecordedValue points are skipped silently: not stored, not rejected', () => {
    const out = convertMetrics(decodeProtobufRequest(protobuf(request({}, [gauge('g', [{ timeUnixNano: ns(5), flags: 1 }, num(6, 2)])]))));
    expect(out).toMatchObject({ total: 2, rejected: 0, pointTs: [6], pointValue: [2] });
  });

  it('pointStart: absent without a cumulative counter point; otherwise one entry per point, NaN but for cumulative counter points', () => {
    const start = { startTimeUnixNano: ns(1000) };
    const plain = convertMetrics(decodeProtobufRequest(protobuf(request({}, [gauge('g', [num(5000, 1, {}, start)]), sum('d', [num(5000, 2, {}, start)], true, 1)]))));
    expect(plain.pointStart).toBeUndefined();
    const mixed = convertMetrics(
      decodeProtobufRequest(
        protobuf(
          request({}, [
            gauge('g', [num(5000, 1, {}, start)]),
            sum('c', [num(5000, 2, {}, start), num(6000, 3)], true, 2),
            sum('u', [num(5000, 4, {}, start)], false, 2),
            sum('x', [num(5000, 5, {}, start)], true, 0),
          ]),
        ),
      ),
    );
    expect(mixed.pointValue).toEqual([1, 2, 3, 4, 5]);
    expect(mixed.pointStart).toEqual([NaN, 1000, -1, NaN, 1000]);
  });

  it('series are hashed once and listed once per request, in every request that uses them', () => {
    const body = protobuf(request({ 'service.name': 'cache' }, [gauge('cached', [num(1, 1, { a: '1', b: '2' }), num(2, 2, { b: '2', a: '1' }), num(3, 3, { a: '2' })])]));
    const first = convertMetrics(decodeProtobufRequest(body));
    const second = convertMetrics(decodeProtobufRequest(body));
    for (const out of [first, second]) {
      expect(out.series.map((s) => s.labels)).toEqual(['{"a":"1","b":"2"}', '{"a":"2"}']);
      expect(out.pointSeries).toEqual([0, 0, 1]);
    }
    expect(second.series[0]).toBe(first.series[0]); // the same cached row
    const json = convertMetrics(decodeJsonRequest(Buffer.from(JSON.stringify(request({ 'service.name': 'cache' }, [gauge('cached', [num(4, 1, { b: '2', a: '1' })])])))));
    expect(json.series[0].seriesId).toBe(first.series[0].seriesId);
  });

  it('attribute values of other types give the same labels as their text', () => {
    const a = convertMetrics(decodeProtobufRequest(protobuf(request({}, [gauge('t', [{ ...num(1, 1), attributes: attrs({ code: 200 }) }])]))));
    const b = convertMetrics(decodeProtobufRequest(protobuf(request({}, [gauge('t', [{ ...num(1, 1), attributes: attrs({ code: '200' }) }])]))));
    expect(a.series[0].labels).toBe('{"code":"200"}');
    expect(b.series[0].seriesId).toBe(a.series[0].seriesId);
  });
});
