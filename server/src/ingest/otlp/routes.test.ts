import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { SAMPLING_DISABLED_MESSAGE } from './metrics-ingest.js';
import {
  decodeResponse,
  expHistogram,
  gauge,
  histogram,
  ns,
  num,
  postMetrics,
  protobuf,
  request,
  rows,
  sum,
  summary,
} from './test-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

/** A recent whole minute, so reads with the default retention see it. */
const T0 = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000;

async function project(scopes = ['ingest:write', 'metrics:read']) {
  return projectWithKey(t, scopes, `otlp-${Math.random().toString(36).slice(2, 8)}`);
}

const pointsOf = (projectId: string) =>
  rows(t, 'SELECT name, series_id, ts, value FROM metric_points WHERE project_id = $p ORDER BY name, ts, value', { p: projectId });
const seriesOf = (projectId: string) =>
  rows(t, 'SELECT name, type, service_name, environment, labels, series_id FROM metric_series WHERE project_id = $p ORDER BY name, labels', {
    p: projectId,
  });
const histogramsOf = (projectId: string) =>
  rows(t, 'SELECT name, ts, start_ts, temporality, count, sum, bounds, counts FROM metric_histograms WHERE project_id = $p ORDER BY name, ts', {
    p: projectId,
  });

describe('POST /v1/metrics: encodings', () => {
  it('stores a protobuf (application/x-protobuf) ExportMetricsServiceRequest', async () => {
    const p = await project();
    const res = await postMetrics(t, request({ 'service.name': 'api' }, [gauge('cpu', [num(T0, 0.5), num(T0 + 1000, 0.75)])]), { key: p.key });
    expect(res.statusCode).toBe(200);
    expect(await pointsOf(p.projectId)).toMatchObject([
      { name: 'cpu', ts: String(T0), value: 0.5 },
      { name: 'cpu', ts: String(T0 + 1000), value: 0.75 },
    ]);
  });

  it('stores the OTLP JSON encoding: lowerCamelCase names, int64 as string or number, enums as integers', async () => {
    const p = await project();
    const body = {
      resourceMetrics: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'web' } }] },
          scopeMetrics: [
            {
              metrics: [
                { name: 'a', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ timeUnixNano: ns(T0), asInt: '7' }] } },
                { name: 'b', gauge: { dataPoints: [{ timeUnixNano: T0 * 1e6, asDouble: 1.25 }] } },
              ],
            },
          ],
        },
      ],
    };
    const res = await postMetrics(t, body, { key: p.key, format: 'json' });
    expect(res.statusCode).toBe(200);
    expect(await pointsOf(p.projectId)).toMatchObject([
      { name: 'a', ts: String(T0), value: 7 },
      { name: 'b', ts: String(T0), value: 1.25 },
    ]);
    expect((await seriesOf(p.projectId)).map((s) => [s.name, s.type, s.service_name])).toEqual([
      ['a', 'counter', 'web'],
      ['b', 'gauge', 'web'],
    ]);
  });

  it('accepts the proto snake_case field names in JSON too', async () => {
    const p = await project();
    const body = {
      resource_metrics: [
        {
          scope_metrics: [
            {
              metrics: [
                {
                  name: 'snake',
                  histogram: {
                    aggregation_temporality: 1,
                    data_points: [{ time_unix_nano: ns(T0), start_time_unix_nano: ns(T0 - 60_000), count: '2', sum: 3, bucket_counts: ['1', '1'], explicit_bounds: [1] }],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await postMetrics(t, body, { key: p.key, format: 'json' });
    expect(res.statusCode).toBe(200);
    expect(await histogramsOf(p.projectId)).toMatchObject([
      { name: 'snake', ts: String(T0), start_ts: String(T0 - 60_000), temporality: 'delta', count: '2', sum: 3, bounds: [1], counts: ['1', '1'] },
    ]);
  });

  it('Content-Encoding: gzip is inflated (protobuf and JSON)', async () => {
    const p = await project();
    const req = request({}, [gauge('gz', [num(T0, 1)])]);
    expect((await postMetrics(t, req, { key: p.key, gzip: true })).statusCode).toBe(200);
    expect((await postMetrics(t, request({}, [gauge('gz', [num(T0 + 1, 2)])]), { key: p.key, gzip: true, format: 'json' })).statusCode).toBe(200);
    expect((await pointsOf(p.projectId)).map((r) => r.value)).toEqual([1, 2]);
  });

  it('the response uses the request content type: protobuf ExportMetricsServiceResponse or its JSON form', async () => {
    const p = await project();
    const req = request({}, [gauge('ct', [num(T0, 1)])]);
    const pb = await postMetrics(t, req, { key: p.key });
    expect(pb.headers['content-type']).toBe('application/x-protobuf');
    expect(pb.rawPayload.length).toBe(0); // everything accepted: partial_success unset, an empty message
    const pb2 = await postMetrics(t, req, { key: p.key, headers: { 'content-type': 'application/protobuf' } });
    expect(pb2.statusCode).toBe(200);
    expect(pb2.headers['content-type']).toBe('application/protobuf');
    const js = await postMetrics(t, req, { key: p.key, format: 'json', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(js.headers['content-type']).toMatch(/^application\/json/);
    expect(js.json()).toEqual({});
  });
});

describe('POST /v1/metrics: unit and description', () => {
  it('keeps the unit and description an instrument sends (the latest sent wins) and returns them with the name, the aggregate and the histogram', async () => {
    const p = await project();
    const names = async () => (await t.call({ method: 'GET', url: '/api/v1/metrics/names', key: p.key })).json().metrics;
    const lat = (unit: string, description: string) => ({ ...histogram('lat', [{ timeUnixNano: ns(T0), startTimeUnixNano: ns(T0 - 1000), count: '1', sum: 3, explicitBounds: [10], bucketCounts: ['1', '0'] }], 1), unit, description });
    expect((await postMetrics(t, request({}, [lat('s', 'old words'), gauge('plain', [num(T0, 1)])]), { key: p.key })).statusCode).toBe(200);
    expect((await postMetrics(t, request({}, [lat('ms', 'time to answer')]), { key: p.key, format: 'json' })).statusCode).toBe(200);
    expect(await names()).toEqual([
      { name: 'lat', type: 'histogram', unit: 'ms', description: 'time to answer' },
      { name: 'plain', type: 'gauge' },
    ]);
    const window = { start: new Date(T0 - 60_000).toISOString(), end: new Date(T0 + 60_000).toISOString() };
    const agg = await t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key: p.key, payload: { metric_name: 'lat', aggregation: 'count', time_range: window } });
    expect(agg.json()).toMatchObject({ unit: 'ms', description: 'time to answer', type: 'histogram', series: [{ points: [{ value: 2 }] }] });
    const hist = await t.call({ method: 'POST', url: '/api/v1/metrics/histogram', key: p.key, payload: { metric_name: 'lat', time_range: window } });
    expect(hist.json()).toMatchObject({ unit: 'ms', description: 'time to answer' });
    const plain = await t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key: p.key, payload: { metric_name: 'plain', time_range: window } });
    expect(plain.json()).not.toHaveProperty('unit');
    expect(plain.json()).not.toHaveProperty('description');
  });
});

describe('POST /v1/metrics: partial success', () => {
  it('rejected points are counted in partial_success with the first reason; the rest of the request is stored', async () => {
    const p = await project();
    const req = request({}, [
      gauge('ok', [num(T0, 1), num(0, 2) /* time_unix_nano 0 */, num(T0, NaN), num(T0, Infinity)]),
      gauge('novalue', [{ timeUnixNano: ns(T0) }]),
      gauge('', [num(T0, 1)]),
      histogram('badbuckets', [{ timeUnixNano: ns(T0), count: '3', sum: 3, bucketCounts: ['1', '2'], explicitBounds: [1, 2] }]),
      // NoRecordedValue (flags bit 0): skipped, not rejected
      gauge('ok', [{ timeUnixNano: ns(T0 + 5), flags: 1 }]),
    ]);
    for (const format of ['protobuf', 'json'] as const) {
      const q = await project();
      const res = await postMetrics(t, req, { key: q.key, format });
      expect(res.statusCode).toBe(200);
      const partial = format === 'json' ? res.json().partialSuccess : decodeResponse(res.rawPayload).partialSuccess;
      expect(Number(partial.rejectedDataPoints)).toBe(6);
      if (format === 'json') expect(typeof partial.rejectedDataPoints).toBe('string'); // int64 in proto3 JSON
      expect(partial.errorMessage).toBe('6 data points were rejected; the first: metric "ok": a data point has time_unix_nano 0 (or missing)');
      expect(await pointsOf(q.projectId)).toMatchObject([{ name: 'ok', ts: String(T0), value: 1 }]);
    }
    void p;
  });

  it('names each rejection reason: NaN/Inf, missing value, bucket_counts length, empty metric name', async () => {
    const p = await project();
    const cases: [object, string][] = [
      [gauge('x', [{ timeUnixNano: ns(T0), asDouble: 'NaN' }]), 'metric "x": a data point value is NaN or infinite'], // proto3 JSON spelling
      [gauge('x', [{ timeUnixNano: ns(T0), asDouble: '-Infinity' }]), 'metric "x": a data point value is NaN or infinite'],
      [gauge('x', [{ timeUnixNano: ns(T0) }]), 'metric "x": a data point has no value'],
      [
        histogram('x', [{ timeUnixNano: ns(T0), count: '1', bucketCounts: ['1'], explicitBounds: [1, 2] }]),
        'metric "x": a histogram has 1 bucket_counts for 2 explicit_bounds (needs 3)',
      ],
      [gauge('', [num(T0, 1)]), 'a metric has an empty name'],
    ];
    for (const [metric, reason] of cases) {
      const res = await postMetrics(t, request({}, [metric as Record<string, unknown>]), { key: p.key, format: 'json' });
      expect(res.json()).toEqual({ partialSuccess: { rejectedDataPoints: '1', errorMessage: `1 data point was rejected; the first: ${reason}` } });
    }
    expect(await pointsOf(p.projectId)).toEqual([]);
  });
});

describe('POST /v1/metrics: refusals', () => {
  it('400 invalid_request for a body that is not protobuf, not JSON, or not an OTLP request; nothing stored', async () => {
    const p = await project();
    const garbage = await postMetrics(t, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), { key: p.key });
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json().error).toBe('invalid_request');
    expect(garbage.json().message).toMatch(/^request body is not a valid protobuf ExportMetricsServiceRequest/);
    const badJson = await postMetrics(t, '{"resourceMetrics": [', { key: p.key, format: 'json' });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json()).toEqual({ error: 'invalid_request', message: 'request body is not valid JSON' });
    const wrongShape = await postMetrics(t, '{"resourceMetrics": 5}', { key: p.key, format: 'json' });
    expect(wrongShape.statusCode).toBe(400);
    expect(wrongShape.json().message).toMatch(/resourceMetrics: array expected/);
    const notObject = await postMetrics(t, '[1]', { key: p.key, format: 'json' });
    expect(notObject.statusCode).toBe(400);
    const badGzip = await postMetrics(t, Buffer.from('not gzip'), { key: p.key, headers: { 'content-encoding': 'gzip' } });
    expect(badGzip.statusCode).toBe(400);
    expect(badGzip.json().message).toBe('request body is not valid gzip');
    expect(await pointsOf(p.projectId)).toEqual([]);
  });

  it('415 for other content types and content encodings; errors keep the {error, message} JSON shape', async () => {
    const p = await project();
    for (const ct of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const res = await postMetrics(t, 'x', { key: p.key, headers: { 'content-type': ct } });
      expect(res.statusCode).toBe(415);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json().error).toBe('unsupported_media_type');
    }
    const br = await postMetrics(t, request({}, []), { key: p.key, headers: { 'content-encoding': 'br' } });
    expect(br.statusCode).toBe(415);
    expect(br.json().message).toBe('Content-Encoding "br" is not supported; send gzip or no encoding');
    const none = await t.call({ method: 'POST', url: '/v1/metrics', key: p.key });
    expect(none.statusCode).toBe(415);
  });

  it('413 payload_too_large over the body limit, before and after decompression (SVC_OTLP_BODY_LIMIT_BYTES)', async () => {
    const small = await testApp({ env: { SVC_OTLP_BODY_LIMIT_BYTES: '2048' } });
    try {
      const big = request({ 'service.name': 'x'.repeat(4000) }, [gauge('g', [num(T0, 1)])]);
      const raw = await postMetrics(small, big, {});
      expect(raw.statusCode).toBe(413);
      expect(raw.json().error).toBe('payload_too_large');
      expect(raw.json().message).toContain('SVC_OTLP_BODY_LIMIT_BYTES sets it for the OTLP routes');
      const zipped = protobuf(big);
      expect(gzipSync(zipped).length).toBeLessThan(2048);
      const inflated = await postMetrics(small, big, { gzip: true, query: `project_id=${small.projectId}` });
      expect(inflated.statusCode).toBe(413);
      expect(inflated.json()).toEqual({ error: 'payload_too_large', message: 'request body is larger than 2048 bytes after decompression' });
      const fits = await postMetrics(small, request({}, [gauge('g', [num(T0, 1)])]), { gzip: true, query: `project_id=${small.projectId}` });
      expect(fits.statusCode).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('401 without a credential; 403 permission_denied without scope ingest:write', async () => {
    const p = await project(['metrics:read']);
    const req = request({}, [gauge('g', [num(T0, 1)])]);
    expect((await postMetrics(t, req, { key: null })).statusCode).toBe(401);
    const res = await postMetrics(t, req, { key: p.key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'permission_denied', message: 'this request needs scope ingest:write' });
  });
});

describe('POST /v1/metrics: durability', () => {
  it('a 2xx means committed: a failed commit answers 503 unavailable (Retry-After), never 2xx, and stores nothing', async () => {
    if (t.ctx.telemetry.kind !== 'duckdb') return; // a transaction's all or nothing (ClickHouse: clickhouse/metrics-writer.test.ts)
    const p = await project();
    const writer = t.duck.writer;
    const run = writer.run;
    writer.run = ((sql: string, ...rest: never[]) =>
      sql === 'COMMIT' ? Promise.reject(new Error('I/O error')) : run.call(writer, sql, ...rest)) as typeof writer.run;
    try {
      const res = await postMetrics(t, request({}, [gauge('g', [num(T0, 1)])]), { key: p.key });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toEqual({ error: 'unavailable', message: 'the data points could not be committed; nothing was stored, retry' });
    } finally {
      writer.run = run;
    }
    expect(await pointsOf(p.projectId)).toEqual([]);
    const retry = await postMetrics(t, request({}, [gauge('g', [num(T0, 1)])]), { key: p.key });
    expect(retry.statusCode).toBe(200);
    expect(await pointsOf(p.projectId)).toHaveLength(1);
    expect(await seriesOf(p.projectId)).toHaveLength(1);
  });
});

describe('POST /v1/metrics: project selection', () => {
  const req = request({}, [gauge('sel', [num(T0, 1)])]);

  it('a project-scoped key writes to its own project without project_id (or with its own id)', async () => {
    const p = await project();
    expect((await postMetrics(t, req, { key: p.key })).statusCode).toBe(200);
    expect((await postMetrics(t, req, { key: p.key, query: `project_id=${p.projectId}` })).statusCode).toBe(200);
    expect(await pointsOf(p.projectId)).toHaveLength(2);
  });

  it('a project-scoped key naming another project is refused with 403', async () => {
    const p = await project();
    const other = await project();
    const res = await postMetrics(t, req, { key: p.key, query: `project_id=${other.projectId}` });
    expect(res.statusCode).toBe(403);
    expect(await pointsOf(other.projectId)).toEqual([]);
  });

  it('an organization-level key names project_id in the query: missing -> 400, unknown/foreign -> 404', async () => {
    const p = await project();
    const missing = await postMetrics(t, req, {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toBe('project_id is required for organization-level credentials');
    expect((await postMetrics(t, req, { query: 'project_id=00000000-0000-0000-0000-000000000000' })).statusCode).toBe(404);
    expect((await postMetrics(t, req, { query: `project_id=${p.projectId}` })).statusCode).toBe(200);
    expect(await pointsOf(p.projectId)).toHaveLength(1);
  });

  it('the query string takes only project_id (additionalProperties false), once', async () => {
    const p = await project();
    expect((await postMetrics(t, req, { key: p.key, query: 'foo=1' })).statusCode).toBe(400);
    expect((await postMetrics(t, req, { query: `project_id=${p.projectId}&project_id=${p.projectId}` })).statusCode).toBe(400);
  });
});

describe('POST /v1/metrics: sampling_rate', () => {
  it('sampling_rate 0 disables ingestion: nothing stored, every point reported rejected with the reason', async () => {
    const p = await project();
    await t.call({ method: 'PATCH', url: `/api/v1/projects/${p.projectId}`, payload: { sampling_rate: 0 } });
    const req = request({}, [gauge('g', [num(T0, 1), num(T0 + 1, 2)]), histogram('h', [{ timeUnixNano: ns(T0), count: '0' }])]);
    const res = await postMetrics(t, req, { key: p.key, format: 'json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ partialSuccess: { rejectedDataPoints: '3', errorMessage: SAMPLING_DISABLED_MESSAGE } });
    const pb = decodeResponse((await postMetrics(t, req, { key: p.key })).rawPayload);
    expect(pb).toEqual({ partialSuccess: { rejectedDataPoints: 3, errorMessage: SAMPLING_DISABLED_MESSAGE } });
    expect(await pointsOf(p.projectId)).toEqual([]);
    expect(await histogramsOf(p.projectId)).toEqual([]);
    expect(await seriesOf(p.projectId)).toEqual([]);
  });

  it('0 < sampling_rate < 1 does not sample metrics: every point is stored', async () => {
    const p = await project();
    await t.call({ method: 'PATCH', url: `/api/v1/projects/${p.projectId}`, payload: { sampling_rate: 0.01 } });
    const points = Array.from({ length: 200 }, (_, i) => num(T0 + i, i));
    const res = await postMetrics(t, request({}, [gauge('g', points)]), { key: p.key });
    expect(res.statusCode).toBe(200);
    expect(await pointsOf(p.projectId)).toHaveLength(200);
  });
});

describe('POST /v1/metrics: metric kinds', () => {
  it('Sum monotonic -> counter, Sum non-monotonic -> gauge, Gauge -> gauge (asDouble or asInt)', async () => {
    const p = await project();
    const res = await postMetrics(
      t,
      request({}, [
        sum('requests', [num(T0, 0, {}, { asDouble: undefined, asInt: '42' })], true),
        sum('queue', [num(T0, -3.5)], false),
        gauge('temp', [num(T0, 21.5)]),
      ]),
      { key: p.key },
    );
    expect(res.statusCode).toBe(200);
    expect((await seriesOf(p.projectId)).map((s) => [s.name, s.type])).toEqual([
      ['queue', 'gauge'],
      ['requests', 'counter'],
      ['temp', 'gauge'],
    ]);
    expect((await pointsOf(p.projectId)).map((r) => [r.name, r.value])).toEqual([
      ['queue', -3.5],
      ['requests', 42],
      ['temp', 21.5],
    ]);
  });

  it('a cumulative monotonic Sum keeps its start time as start_ts (-1 when 0; temporality unspecified is cumulative); delta and non-monotonic sums, gauges and histogram means leave it NULL', async () => {
    for (const format of ['protobuf', 'json'] as const) {
      const p = await project();
      const start = { startTimeUnixNano: ns(T0 - 30_000) };
      const res = await postMetrics(
        t,
        request({}, [
          sum('c_cumulative', [num(T0, 5, {}, start), num(T0 + 1000, 6, { s: 'nostart' })], true, 2),
          sum('c_unspecified', [num(T0, 1, {}, start)], true, 0),
          sum('c_delta', [num(T0, 2, {}, start)], true, 1),
          sum('updown', [num(T0, 3, {}, start)], false, 2),
          gauge('temp', [num(T0, 4, {}, start)]),
          histogram('latency', [{ timeUnixNano: ns(T0), ...start, count: '2', sum: 8, bucketCounts: ['2'], explicitBounds: [] }]),
        ]),
        { key: p.key, format },
      );
      expect(res.statusCode, format).toBe(200);
      const stored = await rows(t, 'SELECT name, ts, value, start_ts FROM metric_points WHERE project_id = $p ORDER BY name, ts', { p: p.projectId });
      expect(stored, format).toEqual([
        { name: 'c_cumulative', ts: String(T0), value: 5, start_ts: String(T0 - 30_000) },
        { name: 'c_cumulative', ts: String(T0 + 1000), value: 6, start_ts: '-1' },
        { name: 'c_delta', ts: String(T0), value: 2, start_ts: null },
        { name: 'c_unspecified', ts: String(T0), value: 1, start_ts: String(T0 - 30_000) },
        { name: 'latency', ts: String(T0), value: 4, start_ts: null },
        { name: 'temp', ts: String(T0), value: 4, start_ts: null },
        { name: 'updown', ts: String(T0), value: 3, start_ts: null },
      ]);
    }
  });

  it('start_ts lands on the right rows when a request spans several data chunks and mixes kinds', async () => {
    const p = await project();
    const gaugePoints = Array.from({ length: 3000 }, (_, i) => num(T0 + i, i));
    const counterPoints = Array.from({ length: 3000 }, (_, i) => num(T0 + i, i, {}, { startTimeUnixNano: ns(T0 - 1000 - i) }));
    const res = await postMetrics(t, request({}, [gauge('g1', gaugePoints.slice(0, 2500)), sum('c', counterPoints), gauge('g2', gaugePoints.slice(2500))]), {
      key: p.key,
    });
    expect(res.statusCode).toBe(200);
    const [check] = await rows(
      t,
      `SELECT count(*) FILTER (WHERE name <> 'c' AND start_ts IS NULL) AS gauges_null,
              count(*) FILTER (WHERE name = 'c' AND start_ts = $t0::BIGINT - 1000 - (ts - $t0::BIGINT)) AS counters_right,
              count(*) AS total
       FROM metric_points WHERE project_id = $p`,
      { p: p.projectId, t0: String(T0) },
    );
    expect(check).toEqual({ gauges_null: '3000', counters_right: '3000', total: '6000' });
  });

  it('Histogram -> histogram: explicit bounds and counts preserved, mean as the point, temporality, start_ts (NULL when 0)', async () => {
    const p = await project();
    const res = await postMetrics(
      t,
      request({}, [
        histogram(
          'latency',
          [
            { timeUnixNano: ns(T0), startTimeUnixNano: ns(T0 - 10_000), count: '6', sum: 12, bucketCounts: ['1', '2', '3'], explicitBounds: [0.5, 2.5] },
            { timeUnixNano: ns(T0 + 1000), count: '0', bucketCounts: ['0', '0', '0'], explicitBounds: [0.5, 2.5] },
          ],
          2,
        ),
        histogram('nobuckets', [{ timeUnixNano: ns(T0), count: '4', sum: 2 }], 0),
        histogram('deltas', [{ timeUnixNano: ns(T0), count: '1', bucketCounts: ['1'] }], 1),
      ]),
      { key: p.key },
    );
    expect(res.statusCode).toBe(200);
    expect(decodeResponse(res.rawPayload)).toEqual({}); // deltas: 1 bucket for 0 bounds is valid
    expect(await histogramsOf(p.projectId)).toEqual([
      { name: 'deltas', ts: String(T0), start_ts: null, temporality: 'delta', count: '1', sum: null, bounds: [], counts: ['1'] },
      { name: 'latency', ts: String(T0), start_ts: String(T0 - 10_000), temporality: 'cumulative', count: '6', sum: 12, bounds: [0.5, 2.5], counts: ['1', '2', '3'] },
      { name: 'latency', ts: String(T0 + 1000), start_ts: null, temporality: 'cumulative', count: '0', sum: null, bounds: [0.5, 2.5], counts: ['0', '0', '0'] },
      // no buckets at all (allowed by OTLP): one (-Inf, +Inf) bucket; temporality unspecified -> cumulative
      { name: 'nobuckets', ts: String(T0), start_ts: null, temporality: 'cumulative', count: '4', sum: 2, bounds: [], counts: ['4'] },
    ]);
    // sum/count when count > 0 and a sum was sent; otherwise no point
    expect((await pointsOf(p.projectId)).map((r) => [r.name, r.value])).toEqual([
      ['latency', 2],
      ['nobuckets', 0.5],
    ]);
    expect((await seriesOf(p.projectId)).map((s) => s.type)).toEqual(['histogram', 'histogram', 'histogram']);
  });

  it('ExponentialHistogram -> histogram with explicit bounds (hand-computed, scale 0 and scale 1)', async () => {
    const p = await project();
    const res = await postMetrics(
      t,
      request({}, [
        expHistogram('exp0', [
          {
            timeUnixNano: ns(T0),
            count: '10',
            sum: 5,
            scale: 0,
            zeroCount: '3',
            positive: { offset: 0, bucketCounts: ['1', '2'] },
            negative: { offset: 1, bucketCounts: ['4'] },
          },
        ]),
        expHistogram(
          'exp1',
          [{ timeUnixNano: ns(T0), count: '3', sum: 6, scale: 1, zeroThreshold: 0.5, zeroCount: '1', positive: { offset: 2, bucketCounts: ['2'] } }],
          2,
        ),
      ]),
      { key: p.key },
    );
    expect(res.statusCode).toBe(200);
    const h = await histogramsOf(p.projectId);
    // scale 0: base 2. negative index 1 covers [-4, -2); zero bucket up to 0; gap (0, 1]; (1, 2]; (2, 4]; +Inf empty
    expect(h[0]).toMatchObject({ name: 'exp0', temporality: 'delta', count: '10', sum: 5, bounds: [-4, -2, 0, 1, 2, 4], counts: ['0', '4', '3', '0', '1', '2', '0'] });
    // scale 1: base sqrt 2. index 2 covers (2, 2*sqrt 2]; zero bucket up to 0.5; gap (0.5, 2]
    expect(h[1]).toMatchObject({ name: 'exp1', temporality: 'cumulative', counts: ['1', '0', '2', '0'] });
    const bounds = h[1].bounds as number[];
    expect(bounds.slice(0, 2)).toEqual([0.5, 2]);
    expect(bounds[2]).toBeCloseTo(2 * Math.SQRT2, 12);
    expect((await pointsOf(p.projectId)).map((r) => [r.name, r.value])).toEqual([
      ['exp0', 0.5],
      ['exp1', 2],
    ]);
  });

  it('Summary -> summary: the mean as the point, no histogram row', async () => {
    const p = await project();
    const res = await postMetrics(
      t,
      request({}, [summary('rpc', [{ timeUnixNano: ns(T0), count: '4', sum: 10, quantileValues: [{ quantile: 0.5, value: 2 }] }])]),
      { key: p.key, format: 'json' },
    );
    expect(res.statusCode).toBe(200);
    expect((await seriesOf(p.projectId)).map((s) => [s.name, s.type])).toEqual([['rpc', 'summary']]);
    expect((await pointsOf(p.projectId)).map((r) => [r.name, r.value])).toEqual([['rpc', 2.5]]);
    expect(await histogramsOf(p.projectId)).toEqual([]);
  });

  it('ts is time_unix_nano in whole milliseconds (floor), exact for nanosecond timestamps', async () => {
    const p = await project();
    const res = await postMetrics(t, request({}, [gauge('g', [{ timeUnixNano: ns(T0 + 123, 999_999), asDouble: 1 }])]), { key: p.key });
    expect(res.statusCode).toBe(200);
    expect((await pointsOf(p.projectId))[0].ts).toBe(String(T0 + 123));
  });
});

describe('POST /v1/metrics: series', () => {
  it('service_name from service.name, environment from deployment.environment.name (else deployment.environment); other resource attributes are not labels', async () => {
    const p = await project();
    const body = {
      resourceMetrics: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }, { key: 'deployment.environment', value: { stringValue: 'old' } }, { key: 'deployment.environment.name', value: { stringValue: 'prod' } }, { key: 'host.name', value: { stringValue: 'h1' } }] },
          scopeMetrics: [{ metrics: [gauge('a', [num(T0, 1)])] }],
        },
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'legacy' } }, { key: 'deployment.environment', value: { stringValue: 'staging' } }] },
          scopeMetrics: [{ metrics: [gauge('b', [num(T0, 1)])] }],
        },
        { scopeMetrics: [{ metrics: [gauge('c', [num(T0, 1)])] }] },
      ],
    };
    expect((await postMetrics(t, body, { key: p.key })).statusCode).toBe(200);
    expect((await seriesOf(p.projectId)).map((s) => [s.name, s.service_name, s.environment, s.labels])).toEqual([
      ['a', 'checkout', 'prod', '{}'],
      ['b', 'legacy', 'staging', '{}'],
      ['c', null, null, '{}'],
    ]);
  });

  it('point attributes become labels: a JSON object, keys sorted, values stringified (arrays as JSON text)', async () => {
    const p = await project();
    const point = {
      timeUnixNano: ns(T0),
      asDouble: 1,
      attributes: [
        { key: 'z', value: { stringValue: 'last' } },
        { key: 'code', value: { intValue: '200' } },
        { key: 'ok', value: { boolValue: true } },
        { key: 'ratio', value: { doubleValue: 0.25 } },
        { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '2' }] } } },
        { key: '10', value: { stringValue: 'ten' } },
        { key: '9', value: { stringValue: 'nine' } },
      ],
    };
    expect((await postMetrics(t, request({}, [gauge('g', [point])]), { key: p.key, format: 'json' })).statusCode).toBe(200);
    expect((await seriesOf(p.projectId))[0].labels).toBe('{"10":"ten","9":"nine","code":"200","ok":"true","ratio":"0.25","tags":"[\\"a\\",2]","z":"last"}');
  });

  it('a series is stored once: the same labels in any order, within a request and across requests, give one series_id', async () => {
    const p = await project();
    const a = num(T0, 1, { host: 'a', region: 'eu' });
    const b = { ...num(T0 + 1, 2), attributes: [...(num(0, 0, { region: 'eu', host: 'a' }).attributes as object[])] };
    const c = num(T0 + 2, 3, { host: 'b', region: 'eu' });
    expect((await postMetrics(t, request({}, [gauge('g', [a, b, c])]), { key: p.key })).statusCode).toBe(200);
    expect((await postMetrics(t, request({}, [gauge('g', [num(T0 + 3, 4, { host: 'a', region: 'eu' })])]), { key: p.key })).statusCode).toBe(200);
    const series = await seriesOf(p.projectId);
    expect(series.map((s) => s.labels)).toEqual(['{"host":"a","region":"eu"}', '{"host":"b","region":"eu"}']);
    const points = await pointsOf(p.projectId);
    expect(points.map((r) => r.series_id)).toEqual([series[0].series_id, series[0].series_id, series[1].series_id, series[0].series_id]);
  });

  it('the same name with another type, service or environment is another series', async () => {
    const p = await project();
    const body = {
      resourceMetrics: [
        { resource: { attributes: [{ key: 'service.name', value: { stringValue: 's1' } }] }, scopeMetrics: [{ metrics: [gauge('m', [num(T0, 1)]), sum('m', [num(T0, 1)])] }] },
        { resource: { attributes: [{ key: 'service.name', value: { stringValue: 's2' } }] }, scopeMetrics: [{ metrics: [gauge('m', [num(T0, 1)])] }] },
      ],
    };
    expect((await postMetrics(t, body, { key: p.key })).statusCode).toBe(200);
    expect(new Set((await seriesOf(p.projectId)).map((s) => s.series_id)).size).toBe(3);
  });
});

describe('POST /v1/metrics: read back through the metrics API', () => {
  it('points ingested over OTLP are counted by POST /api/v1/metrics/aggregate', async () => {
    const p = await project();
    const points = Array.from({ length: 30 }, (_, i) => num(T0 + i * 1000, i, { shard: String(i % 3) }));
    expect((await postMetrics(t, request({ 'service.name': 'agg' }, [gauge('agg.g', points)]), { key: p.key })).statusCode).toBe(200);
    const res = await t.call({
      method: 'POST',
      url: '/api/v1/metrics/aggregate',
      key: p.key,
      payload: {
        metric_name: 'agg.g',
        aggregation: 'count',
        step: '1h',
        service_name: 'agg',
        time_range: { start: new Date(T0 - 3_600_000).toISOString(), end: new Date(T0 + 3_600_000).toISOString() },
      },
    });
    expect(res.statusCode).toBe(200);
    const total = res.json().series.flatMap((s: { points: { value: number }[] }) => s.points).reduce((a: number, x: { value: number }) => a + x.value, 0);
    expect(total).toBe(30);
  });
});
