/**
 * Defect: a deeply nested OTLP attribute value answered 500 for the whole batch (a stack overflow when the
 * value was turned into text), or 400 with the engine's "Maximum call stack size exceeded". Rule now:
 * arrays and kvlists in an attribute value or log body nest at most MAX_VALUE_DEPTH levels; deeper is 400
 * `invalid_request` with our own message naming the limit, for the whole request, and nothing is stored.
 * Metrics, traces and logs; protobuf and JSON; bodies built with the generated OTLP encoders.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { MAX_VALUE_DEPTH } from './export-request.js';
import { gauge, num, postMetrics, protobuf, request, rows } from './test-fixtures.js';
import { logRequest, logsProtobuf, postLogs, postTraces, span, traceId, traceRequest, tracesProtobuf } from './traces-fixtures.js';
import { ns } from './test-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

type Obj = Record<string, unknown>;
type Kind = 'array' | 'kvlist';
const MARK = 'deep-value-placeholder';
const T0 = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;

/** Varint as protobuf writes it. */
function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

/**
 * The content of an AnyValue nesting `depth` arrays (or kvlists) around a string, built from the inside out
 * (the generated encoder recurses per level, so it cannot write 100,000 levels itself). Returned without the
 * outermost AnyValue tag: the ArrayValue / KeyValueList content that field 5 / 6 of the outer AnyValue holds.
 * Protobuf puts every length before its content, so the bytes are the prefixes, outermost first, then the leaf.
 */
function deepContainer(depth: number, kind: Kind): Buffer {
  const leaf = Buffer.concat([Buffer.from([0x0a, 4]), Buffer.from('leaf')]); // AnyValue { string_value = 1 }
  const prefixes: Buffer[] = [];
  let size = leaf.length; // of the value inside the current container
  for (let i = 0; i < depth; i++) {
    // ArrayValue { values = 1 } or KeyValueList { values = 1: KeyValue { key = 1: "k", value = 2 } }
    let container = Buffer.concat([Buffer.from([0x0a]), varint(size)]);
    if (kind === 'kvlist') {
      const kv = Buffer.concat([Buffer.from([0x0a, 1, 0x6b, 0x12]), varint(size)]);
      container = Buffer.concat([Buffer.from([0x0a]), varint(kv.length + size), kv]);
    }
    size += container.length;
    prefixes.push(container);
    if (i === depth - 1) break;
    const value = Buffer.concat([Buffer.from([kind === 'array' ? 0x2a : 0x32]), varint(size)]); // AnyValue { array_value = 5 | kvlist_value = 6 }
    size += value.length;
    prefixes.push(value);
  }
  return Buffer.concat([...prefixes.reverse(), leaf]);
}

/**
 * Protobuf: the request is encoded by the generated code with the value `{bytesValue: container}` (same
 * length as the deep value), then that one tag byte is turned into array_value (5) or kvlist_value (6).
 */
function protobufWithDeep(encode: (req: Obj) => Buffer, build: (v: Obj) => Obj, depth: number, kind: Kind): Buffer {
  const container = deepContainer(depth, kind);
  const bytes = encode(build({ bytesValue: container }));
  const at = bytes.indexOf(Buffer.concat([Buffer.from([0x3a]), varint(container.length), container.subarray(0, 16)]));
  expect(at).toBeGreaterThan(0);
  bytes[at] = kind === 'array' ? 0x2a : 0x32;
  return bytes;
}

/** JSON: the request is written by JSON.stringify with a placeholder, then the deep value (as text) goes in its place. */
function jsonWithDeep(build: (v: Obj) => Obj, depth: number, kind: Kind): string {
  const open = kind === 'array' ? '{"arrayValue":{"values":[' : '{"kvlistValue":{"values":[{"key":"k","value":';
  const close = kind === 'array' ? ']}}' : '}]}}';
  const deep = `${open.repeat(depth)}{"stringValue":"leaf"}${close.repeat(depth)}`;
  return JSON.stringify(build({ stringValue: MARK })).replace(`{"stringValue":"${MARK}"}`, deep);
}

const signals = {
  metrics: {
    post: postMetrics,
    encode: protobuf,
    build: (v: Obj) => request({ 'service.name': 'deep' }, [gauge('g', [{ ...num(T0, 1), attributes: [{ key: 'deep', value: v }] }])]),
    stored: (p: string) => rows(t, 'SELECT count(*) AS n FROM metric_points WHERE project_id = $p', { p }),
  },
  traces: {
    post: postTraces,
    encode: tracesProtobuf,
    build: (v: Obj) => traceRequest({ 'service.name': 'deep' }, [span({ traceId: traceId(), startMs: T0 }), { ...span({ traceId: traceId(), startMs: T0 }), attributes: [{ key: 'deep', value: v }] }]),
    stored: (p: string) => rows(t, 'SELECT count(*) AS n FROM spans WHERE project_id = $p', { p }),
  },
  logs: {
    post: postLogs,
    encode: logsProtobuf,
    build: (v: Obj) => logRequest({ 'service.name': 'deep' }, [{ timeUnixNano: ns(T0), body: { stringValue: 'ok' } }, { timeUnixNano: ns(T0), body: v }]),
    stored: (p: string) => rows(t, 'SELECT count(*) AS n FROM logs WHERE project_id = $p', { p }),
  },
} as const;

const project = () => projectWithKey(t, ['ingest:write'], `deep-${Math.random().toString(36).slice(2, 8)}`);

describe(`OTLP values nest at most ${MAX_VALUE_DEPTH} levels (defect: deep values answered 500)`, () => {
  for (const [signal, s] of Object.entries(signals)) {
    for (const format of ['protobuf', 'json'] as const) {
      for (const depth of [100, 5_000, 100_000]) {
        for (const kind of ['array', 'kvlist'] as const) {
          it(`${signal} ${format}: ${kind} nested ${depth} levels is 400 invalid_request naming the limit; nothing of the request is stored`, async () => {
            const p = await project();
            const body = format === 'protobuf' ? protobufWithDeep(s.encode, s.build, depth, kind) : jsonWithDeep(s.build, depth, kind);
            const r = await s.post(t, body, { key: p.key, format });
            expect(r.statusCode, r.body).toBe(400);
            expect(r.json().error).toBe('invalid_request');
            expect(r.json().message).toContain(`${MAX_VALUE_DEPTH} levels`);
            expect(r.json().message).not.toMatch(/call stack|RangeError/i);
            expect(await s.stored(p.projectId)).toEqual([{ n: '0' }]);
          });
        }
      }
      it(`${signal} ${format}: exactly ${MAX_VALUE_DEPTH} levels is accepted and stored; ${MAX_VALUE_DEPTH + 1} is refused`, async () => {
        const p = await project();
        for (const kind of ['array', 'kvlist'] as const) {
          const ok = format === 'protobuf' ? protobufWithDeep(s.encode, s.build, MAX_VALUE_DEPTH, kind) : jsonWithDeep(s.build, MAX_VALUE_DEPTH, kind);
          expect((await s.post(t, ok, { key: p.key, format })).statusCode).toBe(200);
          const deeper = format === 'protobuf' ? protobufWithDeep(s.encode, s.build, MAX_VALUE_DEPTH + 1, kind) : jsonWithDeep(s.build, MAX_VALUE_DEPTH + 1, kind);
          expect((await s.post(t, deeper, { key: p.key, format })).statusCode).toBe(400);
        }
        const [{ n }] = (await s.stored(p.projectId)) as { n: string }[];
        expect(Number(n)).toBeGreaterThan(0);
      });
    }
  }

  it('deeply nested unknown protobuf groups (skipped fields) are 400 with our message, not the engine text', async () => {
    const p = await project();
    // An unknown field 15 of the request as 100,000 nested start groups (wire type 3), never closed.
    const groups = Buffer.alloc(100_000, (15 << 3) | 3);
    const r = await postTraces(t, Buffer.concat([tracesProtobuf(signals.traces.build({ stringValue: 'x' })), groups]), { key: p.key });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('invalid_request');
    expect(r.json().message).not.toMatch(/call stack|RangeError/i);
  });

  it('a JSON body nested deeper than any OTLP request (outside values too) is 400 with our message', async () => {
    const p = await project();
    const r = await postTraces(t, `{"resourceSpans":[{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`, { key: p.key, format: 'json' });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('invalid_request');
    expect(r.json().message).not.toMatch(/call stack|RangeError/i);
  });
});

describe('wide and long values stay accepted', () => {
  it('a flat list of 50,000 attributes and a 1 MB string value are stored (protobuf and JSON)', async () => {
    const p = await project();
    const wide = Array.from({ length: 50_000 }, (_, i) => ({ key: `k${i}`, value: { intValue: String(i) } }));
    const long = 'x'.repeat(1_000_000);
    for (const format of ['protobuf', 'json'] as const) {
      const req = traceRequest({ 'service.name': 'wide' }, [{ ...span({ traceId: traceId(), startMs: T0 }), attributes: [...wide, { key: 'long', value: { stringValue: long } }] }]);
      const r = await postTraces(t, req, { key: p.key, format });
      expect(r.statusCode, r.body.slice(0, 200)).toBe(200);
    }
    const [row] = (await rows(t, 'SELECT attributes FROM spans WHERE project_id = $p LIMIT 1', { p: p.projectId })) as { attributes: string }[];
    const attrs = JSON.parse(row.attributes) as Record<string, unknown>;
    expect([(attrs.long as string).length, attrs.k49999]).toEqual([1_000_000, 49999]);
  });
});
