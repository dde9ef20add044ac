/** POST /v1/logs: encodings, rows as stored, refusals, project selection, sampling (logs follow their trace). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { LOGS_SAMPLING_DISABLED_MESSAGE } from './logs-ingest.js';
import { attrs, ns, rows } from './test-fixtures.js';
import { decodeSignalResponse, logRequest, postLogs, postTraces, span, spanId, traceId, traceRequest } from './traces-fixtures.js';
import { keepTrace } from './traces-sampling.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const T0 = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function project(scopes = ['ingest:write']) {
  return projectWithKey(t, scopes, `logs-${Math.random().toString(36).slice(2, 8)}`);
}

const logsOf = (p: string) => rows(t, 'SELECT * EXCLUDE (project_id) FROM logs WHERE project_id = $p ORDER BY ts_us, body', { p });
const setRate = (projectId: string, sampling_rate: number) => t.call({ method: 'PATCH', url: `/api/v1/projects/${projectId}`, payload: { sampling_rate } });

describe('POST /v1/logs: stored rows', () => {
  const tid = '5b8efff798038103d269b633813fc60c';
  const sid = 'eee19b7ec3c1b174';
  const records = () => [
    {
      timeUnixNano: ns(T0),
      observedTimeUnixNano: ns(T0 + 5),
      severityNumber: 17,
      severityText: 'ERROR',
      body: { stringValue: 'payment failed' },
      attributes: attrs({ 'http.route': '/pay', attempt: 2 }),
      traceId: tid.toUpperCase(), // OTLP JSON hex is case-insensitive; the protobuf fixture reads it as hex too
      spanId: sid,
    },
    { observedTimeUnixNano: ns(T0 + 10), body: { kvlistValue: { values: [{ key: 'event', value: { stringValue: 'login' } }] } } },
    { severityNumber: 99, body: { intValue: '42' }, traceId: '0'.repeat(32), spanId: sid },
  ];

  for (const format of ['protobuf', 'json'] as const) {
    it(`${format}: every column; log_id a new UUID; ts falls back to observed, then ingest time; ids lower-case hex or NULL`, async () => {
      const p = await project();
      const before = Date.now() * 1000;
      const res = await postLogs(t, logRequest({ 'service.name': 'pay', 'deployment.environment': 'staging' }, records(), 'payments'), { key: p.key, format });
      expect(res.statusCode, res.body).toBe(200);
      expect(format === 'json' ? res.json() : res.rawPayload.length).toEqual(format === 'json' ? {} : 0);
      const stored = await logsOf(p.projectId);
      const after = Date.now() * 1000;
      expect(new Set(stored.map((r) => r.log_id)).size).toBe(3);
      for (const r of stored) {
        expect(r.log_id).toMatch(UUID);
        expect(Number(r.ingested_at_us)).toBeGreaterThanOrEqual(before);
        expect(Number(r.ingested_at_us)).toBeLessThanOrEqual(after);
      }
      const common = {
        service_name: 'pay',
        environment: 'staging',
        scope_name: 'payments',
        resource_attributes: '{"service.name":"pay","deployment.environment":"staging"}',
        body_class: null, // ordinary application logs: no GenAI event name
      };
      const [a, b, c] = stored.map(({ log_id, ingested_at_us, ...rest }) => (void log_id, { ...rest, ingested: ingested_at_us }));
      expect(a).toEqual({
        ts_us: String(T0 * 1000),
        observed_us: String((T0 + 5) * 1000),
        severity_number: 17,
        severity_text: 'ERROR',
        body: 'payment failed',
        trace_id: tid,
        span_id: sid,
        attributes: '{"http.route":"/pay","attempt":2}',
        ...common,
        ingested: a.ingested,
      });
      expect(b).toEqual({
        ts_us: String((T0 + 10) * 1000), // no time_unix_nano: the observed time
        observed_us: String((T0 + 10) * 1000),
        severity_number: null,
        severity_text: null,
        body: '{"event":"login"}',
        trace_id: null,
        span_id: null,
        attributes: '{}',
        ...common,
        ingested: b.ingested,
      });
      // no times at all: the ingest time; severity outside 1..24 unspecified; an all-zero trace id is no trace (and so no span)
      expect(c).toEqual({ ts_us: c.ingested, observed_us: null, severity_number: null, severity_text: null, body: '42', trace_id: null, span_id: null, attributes: '{}', ...common, ingested: c.ingested });
    });
  }

  it('a malformed hex trace id in JSON is "not associated with a trace" (stored, not rejected)', async () => {
    const p = await project();
    const res = await postLogs(t, logRequest({}, [{ timeUnixNano: ns(T0), body: { stringValue: 'x' }, traceId: 'not-hex', spanId: spanId() }]), { key: p.key, format: 'json' });
    expect(res.json()).toEqual({});
    expect((await logsOf(p.projectId)).map((r) => [r.body, r.trace_id, r.span_id])).toEqual([['x', null, null]]);
  });

  it('gzip, proto snake_case names, and the response content type', async () => {
    const p = await project();
    const body = { resource_logs: [{ scope_logs: [{ log_records: [{ time_unix_nano: ns(T0), severity_text: 'INFO', body: { string_value: 'snake' } }] }] }] };
    const res = await postLogs(t, body, { key: p.key, format: 'json', gzip: true });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const pb = await postLogs(t, logRequest({}, [{ timeUnixNano: ns(T0 + 1), body: { stringValue: 'pb' } }]), { key: p.key, gzip: true });
    expect(pb.headers['content-type']).toBe('application/x-protobuf');
    expect((await logsOf(p.projectId)).map((r) => [r.body, r.severity_text])).toEqual([
      ['snake', 'INFO'],
      ['pb', null],
    ]);
  });
});

describe('POST /v1/logs: refusals and project selection', () => {
  it('400 for a body that is not an OTLP request; 415 for another content type; 401; 403 without ingest:write', async () => {
    const p = await project();
    const garbage = await postLogs(t, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), { key: p.key });
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json().message).toMatch(/^request body is not a valid protobuf ExportLogsServiceRequest/);
    expect((await postLogs(t, '{"resourceLogs": 1}', { key: p.key, format: 'json' })).json().message).toMatch(/^request body is not a valid OTLP JSON ExportLogsServiceRequest/);
    expect((await postLogs(t, 'x', { key: p.key, headers: { 'content-type': 'text/plain' } })).statusCode).toBe(415);
    const req = logRequest({}, [{ timeUnixNano: ns(T0), body: { stringValue: 'x' } }]);
    expect((await postLogs(t, req, { key: null })).statusCode).toBe(401);
    const noScope = await postLogs(t, req, { key: (await project(['metrics:read'])).key });
    expect(noScope.statusCode).toBe(403);
    expect(noScope.json()).toEqual({ error: 'permission_denied', message: 'this request needs scope ingest:write' });
    expect(await logsOf(p.projectId)).toEqual([]);
  });

  it('413 over the body limit after decompression', async () => {
    const small = await testApp({ env: { SVC_OTLP_BODY_LIMIT_BYTES: '2048' } });
    try {
      const big = logRequest({}, [{ timeUnixNano: ns(T0), body: { stringValue: 'x'.repeat(5000) } }]);
      const res = await postLogs(small, big, { gzip: true, query: `project_id=${small.projectId}` });
      expect(res.statusCode).toBe(413);
      expect(res.json().error).toBe('payload_too_large');
    } finally {
      await small.close();
    }
  });

  it('a project-scoped key writes to its project; naming another is 403', async () => {
    const p = await project();
    const other = await project();
    const req = logRequest({}, [{ timeUnixNano: ns(T0), body: { stringValue: 'x' } }]);
    expect((await postLogs(t, req, { key: p.key })).statusCode).toBe(200);
    expect((await postLogs(t, req, { key: p.key, query: `project_id=${other.projectId}` })).statusCode).toBe(403);
    expect((await postLogs(t, req, { query: `project_id=${other.projectId}` })).statusCode).toBe(200);
    expect(await logsOf(p.projectId)).toHaveLength(1);
    expect(await logsOf(other.projectId)).toHaveLength(1);
  });
});

describe('POST /v1/logs: sampling_rate', () => {
  it('0: nothing stored, every record reported rejected with the reason', async () => {
    const p = await project();
    await setRate(p.projectId, 0);
    const req = logRequest({}, [{ body: { stringValue: 'a' } }, { body: { stringValue: 'b' }, traceId: traceId() }]);
    expect((await postLogs(t, req, { key: p.key, format: 'json' })).json()).toEqual({ partialSuccess: { rejectedLogRecords: '2', errorMessage: LOGS_SAMPLING_DISABLED_MESSAGE } });
    expect(decodeSignalResponse('logs', (await postLogs(t, req, { key: p.key })).rawPayload)).toEqual({ partialSuccess: { rejected: 2, errorMessage: LOGS_SAMPLING_DISABLED_MESSAGE } });
    expect(await logsOf(p.projectId)).toEqual([]);
  });

  it('0 < rate < 1: a record with a trace id follows its trace (kept exactly when its spans are); one without is kept', async () => {
    const p = await project();
    await setRate(p.projectId, 0.5);
    const ids = Array.from({ length: 40 }, () => traceId());
    const logs = ids.map((tid, i) => ({ timeUnixNano: ns(T0 + i), body: { stringValue: tid }, traceId: tid }));
    logs.push({ timeUnixNano: ns(T0 + 100), body: { stringValue: 'untraced' } } as never);
    expect((await postLogs(t, logRequest({}, logs), { key: p.key })).rawPayload.length).toBe(0); // dropped records are not rejected
    expect((await postTraces(t, traceRequest({}, ids.map((tid) => span({ traceId: tid, startMs: T0 }))), { key: p.key })).statusCode).toBe(200);
    const kept = ids.filter((id) => keepTrace(id, 0.5)).sort();
    const stored = await rows(t, 'SELECT trace_id FROM logs WHERE project_id = $p AND trace_id IS NOT NULL ORDER BY trace_id', { p: p.projectId });
    expect(stored.map((r) => r.trace_id)).toEqual(kept);
    const spans = await rows(t, 'SELECT trace_id FROM spans WHERE project_id = $p ORDER BY trace_id', { p: p.projectId });
    expect(spans.map((r) => r.trace_id)).toEqual(kept);
    expect(await rows(t, "SELECT body FROM logs WHERE project_id = $p AND body = 'untraced'", { p: p.projectId })).toHaveLength(1);
  });
});
