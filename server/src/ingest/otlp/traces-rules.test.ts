/** POST /v1/traces: refusals, project selection, sampling, agent sightings, and a 2xx only after commit. */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { connectAgent } from '../../testing/oauth.js';
import { addPerson, signIn } from '../../testing/people.js';
import { rows } from './test-fixtures.js';
import { decodeSignalResponse, postTraces, span, traceId, traceRequest, tracesProtobuf } from './traces-fixtures.js';
import { TRACES_SAMPLING_DISABLED_MESSAGE } from './traces-ingest.js';
import { keepTrace } from './traces-sampling.js';
import { chOf } from '../../testing/clickhouse.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

const T0 = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;

async function project(scopes = ['ingest:write']) {
  return projectWithKey(t, scopes, `traces-${Math.random().toString(36).slice(2, 8)}`);
}

const spansOf = (p: string, cols = 'trace_id, span_id, name') => rows(t, `SELECT ${cols} FROM spans WHERE project_id = $p ORDER BY start_us, span_id`, { p });
const sightingsOf = (p: string) =>
  rows(t, 'SELECT observation_key, source, api_key_id, first_seen_us, last_seen_us, sighting_count FROM agent_sightings WHERE project_id = $p ORDER BY observation_key, source', { p });

describe('POST /v1/traces: refusals', () => {
  it('400 invalid_request for a body that is not protobuf, not JSON, or not an OTLP request', async () => {
    const p = await project();
    const garbage = await postTraces(t, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), { key: p.key });
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json().message).toMatch(/^request body is not a valid protobuf ExportTraceServiceRequest/);
    expect((await postTraces(t, '{"resourceSpans": [', { key: p.key, format: 'json' })).json()).toEqual({ error: 'invalid_request', message: 'request body is not valid JSON' });
    const wrongShape = await postTraces(t, '{"resourceSpans": 5}', { key: p.key, format: 'json' });
    expect(wrongShape.statusCode).toBe(400);
    expect(wrongShape.json().message).toMatch(/^request body is not a valid OTLP JSON ExportTraceServiceRequest: .*resourceSpans: array expected/);
    expect((await postTraces(t, '[1]', { key: p.key, format: 'json' })).statusCode).toBe(400);
    expect(await spansOf(p.projectId)).toEqual([]);
  });

  it('415 for other content types and encodings; errors are {error, message} JSON', async () => {
    const p = await project();
    const res = await postTraces(t, 'x', { key: p.key, headers: { 'content-type': 'text/plain' } });
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toBe('unsupported_media_type');
    const br = await postTraces(t, traceRequest({}, []), { key: p.key, headers: { 'content-encoding': 'br' } });
    expect(br.statusCode).toBe(415);
    expect((await t.call({ method: 'POST', url: '/v1/traces', key: p.key })).statusCode).toBe(415);
  });

  it('413 over the body limit, before and after decompression', async () => {
    const small = await testApp({ env: { SVC_OTLP_BODY_LIMIT_BYTES: '2048' } });
    try {
      const big = traceRequest({ 'service.name': 'x'.repeat(4000) }, [span({ traceId: traceId(), startMs: T0 })]);
      expect((await postTraces(small, big, { query: `project_id=${small.projectId}` })).statusCode).toBe(413);
      expect(gzipSync(tracesProtobuf(big)).length).toBeLessThan(2048);
      const inflated = await postTraces(small, big, { gzip: true, query: `project_id=${small.projectId}` });
      expect(inflated.statusCode).toBe(413);
      expect(inflated.json()).toEqual({ error: 'payload_too_large', message: 'request body is larger than 2048 bytes after decompression' });
    } finally {
      await small.close();
    }
  });

  it('401 without a credential; 403 without scope ingest:write', async () => {
    const p = await project(['metrics:read']);
    const req = traceRequest({}, [span({ traceId: traceId(), startMs: T0 })]);
    expect((await postTraces(t, req, { key: null })).statusCode).toBe(401);
    const res = await postTraces(t, req, { key: p.key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'permission_denied', message: 'this request needs scope ingest:write' });
  });

  it('a project-scoped key writes to its project (with or without project_id); another project is 403; org-level keys name one', async () => {
    const p = await project();
    const other = await project();
    const req = () => traceRequest({}, [span({ traceId: traceId(), startMs: T0 })]);
    expect((await postTraces(t, req(), { key: p.key })).statusCode).toBe(200);
    expect((await postTraces(t, req(), { key: p.key, query: `project_id=${p.projectId}` })).statusCode).toBe(200);
    expect((await postTraces(t, req(), { key: p.key, query: `project_id=${other.projectId}` })).statusCode).toBe(403);
    expect((await postTraces(t, req(), {})).statusCode).toBe(400); // owner key: organization-level
    expect((await postTraces(t, req(), { query: 'project_id=00000000-0000-0000-0000-000000000000' })).statusCode).toBe(404);
    expect((await postTraces(t, req(), { query: `project_id=${other.projectId}` })).statusCode).toBe(200);
    expect(await spansOf(p.projectId)).toHaveLength(2);
    expect(await spansOf(other.projectId)).toHaveLength(1);
  });
});

describe('POST /v1/traces: sampling_rate', () => {
  const setRate = (projectId: string, sampling_rate: number) => t.call({ method: 'PATCH', url: `/api/v1/projects/${projectId}`, payload: { sampling_rate } });

  it('sampling_rate 0: nothing stored (no sightings), every span reported rejected with the reason', async () => {
    const p = await project();
    await setRate(p.projectId, 0);
    const tid = traceId();
    const req = traceRequest({}, [
      span({ traceId: tid, startMs: T0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'a1' } }),
      span({ traceId: tid, startMs: T0 }),
      span({ traceId: 'bad', startMs: T0 }),
    ]);
    expect((await postTraces(t, req, { key: p.key, format: 'json' })).json()).toEqual({ partialSuccess: { rejectedSpans: '3', errorMessage: TRACES_SAMPLING_DISABLED_MESSAGE } });
    expect(decodeSignalResponse('traces', (await postTraces(t, req, { key: p.key })).rawPayload)).toEqual({ partialSuccess: { rejected: 3, errorMessage: TRACES_SAMPLING_DISABLED_MESSAGE } });
    expect(await spansOf(p.projectId)).toEqual([]);
    expect(await sightingsOf(p.projectId)).toEqual([]);
  });

  it('0 < rate < 1 keeps whole traces by the hash of the trace id: stable across requests, not rejected, sightings still counted', async () => {
    const p = await project();
    await setRate(p.projectId, 0.5);
    const ids = Array.from({ length: 60 }, () => traceId());
    // each trace's two spans travel in different requests, in two orders
    const first = traceRequest({}, ids.map((tid) => span({ traceId: tid, name: 'root', startMs: T0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'agent-x' } })));
    const second = traceRequest({}, ids.slice().reverse().map((tid) => span({ traceId: tid, name: 'child', startMs: T0 + 1 })));
    const r1 = await postTraces(t, first, { key: p.key, format: 'json' });
    const r2 = await postTraces(t, second, { key: p.key });
    expect(r1.json()).toEqual({}); // dropped spans are not rejected
    expect(r2.rawPayload.length).toBe(0);
    const kept = ids.filter((id) => keepTrace(id, 0.5)).sort();
    expect(kept.length).toBeGreaterThan(10);
    expect(kept.length).toBeLessThan(50);
    const stored = await rows(t, 'SELECT trace_id, count(*) AS n FROM spans WHERE project_id = $p GROUP BY trace_id ORDER BY trace_id', { p: p.projectId });
    expect(stored).toEqual(kept.map((trace_id) => ({ trace_id, n: '2' })));
    expect((await sightingsOf(p.projectId))[0].sighting_count).toBe('60');
  });

  it('rate 1 keeps everything', async () => {
    const p = await project();
    await setRate(p.projectId, 1);
    const req = traceRequest({}, Array.from({ length: 20 }, () => span({ traceId: traceId(), startMs: T0 })));
    expect((await postTraces(t, req, { key: p.key })).statusCode).toBe(200);
    expect(await spansOf(p.projectId)).toHaveLength(20);
  });
});

describe('POST /v1/traces: agent sightings', () => {
  const agentRun = (ms: number, attrs: Record<string, string>) =>
    traceRequest({ 'service.name': 'bots' }, [
      span({ traceId: traceId(), startMs: ms, attributes: { 'gen_ai.operation.name': 'invoke_agent', ...attrs } }),
      span({ traceId: traceId(), startMs: ms, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.agent.id': 'not-a-sighting' } }),
    ]);

  it('every accepted invoke_agent span is a sighting of its key by the API key that sent it; counts add up, first/last seen are ingest times', async () => {
    const p = await project();
    const t1 = Date.now() * 1000;
    expect((await postTraces(t, agentRun(T0, { 'gen_ai.agent.id': 'agent-1' }), { key: p.key })).statusCode).toBe(200);
    expect((await postTraces(t, agentRun(T0 - 60_000, { 'gen_ai.agent.id': 'agent-1' }), { key: p.key })).statusCode).toBe(200);
    expect((await postTraces(t, agentRun(T0, { 'gen_ai.agent.name': 'helper' }), { key: p.key })).statusCode).toBe(200);
    const t2 = Date.now() * 1000;
    const s = await sightingsOf(p.projectId);
    expect(s.map((r) => [r.observation_key, r.source, r.api_key_id, r.sighting_count])).toEqual([
      ['agent-1', 'api_key', p.keyId, '2'],
      ['bots/helper', 'api_key', p.keyId, '1'],
    ]);
    expect(Number(s[0].first_seen_us)).toBeGreaterThanOrEqual(t1);
    expect(Number(s[0].last_seen_us)).toBeGreaterThan(Number(s[0].first_seen_us));
    expect(Number(s[0].last_seen_us)).toBeLessThanOrEqual(t2);
  });

  it('concurrent requests in one group commit add up in one row', async () => {
    const p = await project();
    const res = await Promise.all(Array.from({ length: 8 }, () => postTraces(t, agentRun(T0, { 'gen_ai.agent.id': 'busy' }), { key: p.key })));
    expect(res.map((r) => r.statusCode)).toEqual(new Array(8).fill(200));
    expect((await sightingsOf(p.projectId)).map((r) => r.sighting_count)).toEqual(['8']);
  });

  it('the deployment environment of each sighting is recorded per key (one row per environment, also from one group commit); none named adds none', async () => {
    const p = await project();
    const run = (env: Record<string, string>) =>
      traceRequest({ 'service.name': 'bots', ...env }, [span({ traceId: traceId(), startMs: T0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'env-bot' } })]);
    const envs: Record<string, string>[] = [{ 'deployment.environment.name': 'prod' }, { 'deployment.environment': 'dev' }, {}, { 'deployment.environment.name': '' }];
    const res = await Promise.all(Array.from({ length: 8 }, (_, i) => postTraces(t, run(envs[i % 4]), { key: p.key })));
    expect(res.map((r) => r.statusCode)).toEqual(new Array(8).fill(200));
    expect((await sightingsOf(p.projectId)).map((r) => r.sighting_count)).toEqual(['8']);
    const byEnv = await rows(t, 'SELECT environment, first_seen_us, last_seen_us FROM agent_sighting_environments WHERE project_id = $p ORDER BY environment', { p: p.projectId });
    expect(byEnv.map((r) => r.environment)).toEqual(['dev', 'prod']);
    expect(byEnv.every((r) => Number(r.last_seen_us) >= Number(r.first_seen_us))).toBe(true);
  });

  it('an OAuth access token is source bearer_token with no api_key_id', async () => {
    const member = await signIn(t, await addPerson(t, 'member'));
    const p = await project();
    const { tokens } = await connectAgent(t, member, { scope: 'ingest:write', projectId: p.projectId });
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/traces?project_id=${p.projectId}`,
      payload: tracesProtobuf(agentRun(T0, { 'gen_ai.agent.id': 'oauth-agent' })),
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/x-protobuf' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await sightingsOf(p.projectId)).map((r) => [r.observation_key, r.source, r.api_key_id, r.sighting_count])).toEqual([['oauth-agent', 'bearer_token', '', '1']]);
  });
});

describe('POST /v1/traces: a 2xx means committed', () => {
  it('a failed write on ClickHouse (no transaction) answers 503 with Retry-After and says so; the retry stores each span once', async () => {
    if (t.ctx.telemetry.kind !== 'clickhouse') return;
    const p = await project();
    const client = chOf(t.ctx.telemetry)!.client;
    const insert = client.insert;
    client.insert = (table, rows) => (table === 'span_events' ? Promise.reject(new Error('I/O error')) : insert.call(client, table, rows));
    const id = traceId();
    const req = traceRequest({}, [span({ traceId: id, startMs: T0 + 5, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'x' } })]);
    try {
      const res = await postTraces(t, req, { key: p.key });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toEqual({ error: 'unavailable', message: 'the spans could not all be stored; retry (a retry stores each once)' });
    } finally {
      client.insert = insert;
    }
    expect((await postTraces(t, req, { key: p.key })).statusCode).toBe(200);
    const read = await t.call({ method: 'GET', url: `/api/v1/traces/${id}?project_id=${p.projectId}` });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().spans).toHaveLength(1);
  });

  it('a failed commit answers 503 unavailable with Retry-After, stores nothing; the retry succeeds', async () => {
    if (t.ctx.telemetry.kind !== 'duckdb') return; // a transaction's all or nothing: the embedded engine
    const p = await project();
    expect((await postTraces(t, traceRequest({}, [span({ traceId: traceId(), startMs: T0 })]), { key: p.key })).statusCode).toBe(200); // opens the connection
    const conn = await (t.ctx.spansWriter as unknown as { gc: { conn: Promise<{ run(...args: unknown[]): Promise<unknown> }> } }).gc.conn;
    const run = conn.run;
    conn.run = (...args: unknown[]) => (args[0] === 'COMMIT' ? Promise.reject(new Error('I/O error')) : run.apply(conn, args));
    const req = traceRequest({}, [span({ traceId: traceId(), startMs: T0 + 5, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'x' } })]);
    try {
      const res = await postTraces(t, req, { key: p.key });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toEqual({ error: 'unavailable', message: 'the spans could not be committed; nothing was stored, retry' });
    } finally {
      conn.run = run;
    }
    expect(await spansOf(p.projectId)).toHaveLength(1);
    expect(await sightingsOf(p.projectId)).toEqual([]);
    expect((await postTraces(t, req, { key: p.key })).statusCode).toBe(200);
    expect(await spansOf(p.projectId)).toHaveLength(2);
    expect((await sightingsOf(p.projectId)).map((r) => r.sighting_count)).toEqual(['1']);
  });
});
