/**
 * A trace delete is durable (spec 1 Authentication rule 10; ARCHITECTURE "Deletions the spec calls durable
 * ... are tombstones that also hide later or retried copies"): sending the deleted spans again (an OTLP
 * client retrying an export) does not bring back the trace, its run, graph, events or sightings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSignalResponse, postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { openTelemetryDb } from '../../storage/telemetry/duckdb/open.js';
import { SpansWriter } from '../../storage/telemetry/duckdb/spans-writer.js';
import type { SpanRow } from './rows.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { rows } from '../../testing/rows-at-rest.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

const SCOPES = ['ingest:write', 'traces:read', 'traces:delete', 'agents:read'];

async function count(sql: string, p: string): Promise<number> {
  return Number(Object.values((await rows(t, sql, { p }))[0])[0]);
}

/** An agent run: invoke_agent root, a chat with usage and events, a failed tool call. */
function runRequest(tid: string, agent = 'bot') {
  const start = Date.now() - 60_000;
  const root = '1111111111111111';
  return traceRequest({ 'service.name': 'svc' }, [
    span({
      traceId: tid,
      spanId: root,
      name: `invoke_agent ${agent}`,
      startMs: start,
      endMs: start + 100,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agent, 'gen_ai.conversation.id': `conv-${tid}` },
    }),
    span({
      traceId: tid,
      spanId: '2222222222222222',
      parentSpanId: root,
      name: 'chat',
      startMs: start + 10,
      endMs: start + 20,
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 5, 'gen_ai.response.status': 'completed' },
      events: [{ name: 'model.request', ms: start + 11 }, { name: 'exception', ms: start + 12 }],
    }),
    span({
      traceId: tid,
      spanId: '3333333333333333',
      parentSpanId: root,
      name: 'tool',
      startMs: start + 30,
      endMs: start + 40,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.response.status': 'failed' },
    }),
  ]);
}

describe('DELETE /traces/{traceId} is durable', () => {
  it('a retried export of the deleted spans is accepted (not rejected) and stores nothing: trace, run, graph and events stay gone', async () => {
    const p = await projectWithKey(t, SCOPES);
    const get = (url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key: p.key });
    const tid = traceId();
    const req = runRequest(tid);
    expect((await postTraces(t, req, { key: p.key })).statusCode).toBe(200);
    expect((await get(`/traces/${tid}`)).statusCode).toBe(200);
    expect((await get(`/agent-runs/${tid}`)).json()).toMatchObject({ step_count: 3, model_calls: 1, tool_calls: 1, error_steps: 1 });
    const sightings = `SELECT sum(sighting_count) FROM agent_sightings WHERE project_id = $p`;
    expect(await count(sightings, p.projectId)).toBe(1);

    const del = await t.call({ method: 'DELETE', url: `/api/v1/traces/${tid}`, key: p.key });
    expect(del.json()).toEqual({ trace_id: tid, deleted: true, spans_deleted: 3, events_deleted: 2 });
    expect(await count('SELECT count(*) FROM trace_tombstones WHERE project_id = $p', p.projectId)).toBe(1);

    // The client retries the export (e.g. after a timeout): 200 with no partial_success, nothing stored.
    const again = await postTraces(t, req, { key: p.key });
    expect(again.statusCode).toBe(200);
    expect(decodeSignalResponse('traces', again.rawPayload)).toEqual({});
    // A late span of the trace (another span id) stays out too.
    const late = traceRequest({ 'service.name': 'svc' }, [span({ traceId: tid, name: 'late', attributes: { 'gen_ai.operation.name': 'chat' } })]);
    expect((await postTraces(t, late, { key: p.key, format: 'json' })).json()).toEqual({});

    expect(await count('SELECT count(*) FROM spans WHERE project_id = $p', p.projectId)).toBe(0);
    expect(await count('SELECT count(*) FROM span_events WHERE project_id = $p', p.projectId)).toBe(0);
    expect((await get(`/traces/${tid}`)).statusCode).toBe(404);
    expect((await get(`/agent-runs/${tid}`)).statusCode).toBe(404);
    expect((await get(`/agent-runs/${tid}/graph`)).statusCode).toBe(404);
    expect((await get(`/agent-events?run_id=${tid}`)).json().events).toEqual([]);
    expect((await get('/agent-runs')).json().runs).toEqual([]);
    // The retried invoke_agent span is no new sighting either.
    expect(await count(sightings, p.projectId)).toBe(1);
    // Deleting again finds nothing.
    expect((await t.call({ method: 'DELETE', url: `/api/v1/traces/${tid}`, key: p.key })).statusCode).toBe(404);
  });

  it('only the deleted trace stays out: other traces of the same request, and the same trace id in another project, are stored', async () => {
    const p = await projectWithKey(t, SCOPES);
    const other = await projectWithKey(t, SCOPES);
    const tid = traceId();
    expect((await postTraces(t, runRequest(tid), { key: p.key })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/traces/${tid}`, key: p.key })).statusCode).toBe(200);

    const fresh = traceId();
    const mixed = runRequest(tid) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
    const freshSpans = (runRequest(fresh, 'other') as typeof mixed).resourceSpans[0].scopeSpans[0].spans;
    mixed.resourceSpans[0].scopeSpans[0].spans.push(...freshSpans);
    const r = await postTraces(t, mixed, { key: p.key });
    expect(decodeSignalResponse('traces', r.rawPayload)).toEqual({});
    const get = (url: string, key = p.key) => t.call({ method: 'GET', url: `/api/v1${url}`, key });
    expect((await get(`/traces/${tid}`)).statusCode).toBe(404);
    expect((await get(`/traces/${fresh}`)).json().span_count).toBe(3);
    expect((await get(`/agent-runs/${fresh}`)).json()).toMatchObject({ agent_name: 'other', step_count: 3 });
    expect((await get(`/agent-events?run_id=${fresh}`)).json().events).toHaveLength(1);
    // Sightings: bot once (before the delete; the retried one is left out), other once.
    const sightings = await rows(t, 'SELECT observation_key, sighting_count FROM agent_sightings WHERE project_id = $p ORDER BY 1', { p: p.projectId });
    expect(sightings.map((r) => [r.observation_key, Number(r.sighting_count)])).toEqual([
      ['svc/bot', 1],
      ['svc/other', 1],
    ]);

    // The tombstone is the project's: the same trace id is another trace in another project.
    expect((await postTraces(t, runRequest(tid), { key: other.key })).statusCode).toBe(200);
    expect((await get(`/traces/${tid}`, other.key)).json().span_count).toBe(3);
  });

  it('a delete racing a retried export never leaves the trace behind', async () => {
    const p = await projectWithKey(t, SCOPES);
    for (let i = 0; i < 10; i++) {
      const tid = traceId();
      const req = runRequest(tid);
      expect((await postTraces(t, req, { key: p.key })).statusCode).toBe(200);
      // The retry and the delete are in flight together; whichever commits first, the trace ends deleted.
      const [retry, del] = await Promise.all([
        postTraces(t, req, { key: p.key }),
        t.call({ method: 'DELETE', url: `/api/v1/traces/${tid}`, key: p.key }),
        postTraces(t, req, { key: p.key }),
      ]);
      expect(retry.statusCode).toBe(200);
      expect(del.statusCode).toBe(200);
      expect((await t.call({ method: 'GET', url: `/api/v1/traces/${tid}`, key: p.key })).statusCode).toBe(404);
    }
    expect(await count('SELECT count(*) FROM spans WHERE project_id = $p', p.projectId)).toBe(0);
  });

  it('20 concurrent identical deletes: one 200, the others 404 (already gone), never 5xx; one tombstone', async () => {
    const p = await projectWithKey(t, SCOPES);
    const tid = traceId();
    expect((await postTraces(t, runRequest(tid), { key: p.key })).statusCode).toBe(200);
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.call({ method: 'DELETE', url: `/api/v1/traces/${tid}`, key: p.key })));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, ...Array(19).fill(404)]);
    expect(await count('SELECT count(*) FROM trace_tombstones WHERE project_id = $p', p.projectId)).toBe(1);
    expect(await count('SELECT count(*) FROM spans WHERE project_id = $p', p.projectId)).toBe(0);
  });

  it('deleting the project removes its tombstones', async () => {
    const p = await projectWithKey(t, SCOPES);
    const tid = traceId();
    expect((await postTraces(t, runRequest(tid), { key: p.key })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/traces/${tid}`, key: p.key })).statusCode).toBe(200);
    expect(await count('SELECT count(*) FROM trace_tombstones WHERE project_id = $p', p.projectId)).toBe(1);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${p.projectId}` })).statusCode).toBeLessThan(300);
    expect(await count('SELECT count(*) FROM trace_tombstones WHERE project_id = $p', p.projectId)).toBe(0);
  });
});

describe('the spans writer and trace_tombstones', () => {
  const row = (tid: string, spanId: string): SpanRow => ({
    traceId: tid,
    spanId,
    parentSpanId: null,
    name: 'op',
    kind: 'internal',
    startUs: 1_700_000_000_000_000,
    endUs: 1_700_000_000_001_000,
    statusCode: 'unset',
    statusMessage: null,
    serviceName: 'svc',
    environment: null,
    scopeName: null,
    attributes: '{}',
    resourceAttributes: '{}',
    operationName: 'invoke_agent',
    canonicalOperation: 'CANONICAL_OPERATION_INVOKE_AGENT',
    responseStatus: null,
    outcome: null,
    agentName: 'a',
    agentId: null,
    observationKey: 'svc/a',
    sessionKey: null,
    turnId: null,
    runStatus: null,
    terminalReason: null,
    toolName: null,
    model: null,
    provider: null,
    inputTokens: null,
    outputTokens: null,
    reportedCostNanos: null,
    safetyCheck: false,
    memoryItemId: null,
    memoryStore: null,
    memoryProvenance: null,
    memoryTrustLabel: null,
    contextEvents: 0,
  });

  it('reads the tombstones already in the store (a restart): their spans, events and sightings (and their environments) are left out and counted', async () => {
    const db = await openTelemetryDb({ memory: true });
    try {
      const dead = traceId();
      const alive = traceId();
      await db.writer.run(`INSERT INTO trace_tombstones VALUES ('p1', '${dead}', 1)`);
      const writer = new SpansWriter(db);
      const event = (tid: string) => ({ traceId: tid, spanId: 'aaaaaaaaaaaaaaaa', index: 0, tsUs: 1, name: 'e', attributes: '{}', category: null, contextKind: null, contextDetail: null, contextSourceIds: null });
      const batch = (project: string) =>
        writer.write(project, {
          spans: [row(dead, 'aaaaaaaaaaaaaaaa'), row(alive, 'bbbbbbbbbbbbbbbb')],
          events: [event(dead), event(alive)],
          sightings: [
            { traceId: dead, observationKey: 'svc/a', environment: 'staging' },
            { traceId: alive, observationKey: 'svc/a', environment: 'prod' },
            { traceId: dead, observationKey: 'svc/dropped-by-sampling', environment: null },
          ],
          credential: { source: 'bearer_token', apiKeyId: '' },
          ingestedAtUs: 5,
        });
      const [p1, p2] = await Promise.all([batch('p1'), batch('p2')]); // one commit: the tombstone is p1's only
      expect(p1).toEqual({ tombstoned: 1 });
      expect(p2).toEqual({ tombstoned: 0 });
      const q = async (sql: string) => (await db.writer.runAndReadAll(sql)).getRowsJS();
      expect(await q('SELECT project_id, trace_id FROM spans ORDER BY 1, 2')).toEqual([['p1', alive], ...[dead, alive].sort().map((x) => ['p2', x])]);
      expect(await q('SELECT project_id, count(*) FROM span_events GROUP BY 1 ORDER BY 1')).toEqual([
        ['p1', 1n],
        ['p2', 2n],
      ]);
      expect(await q('SELECT project_id, observation_key, sighting_count FROM agent_sightings ORDER BY 1, 2')).toEqual([
        ['p1', 'svc/a', 1n],
        ['p2', 'svc/a', 2n],
        ['p2', 'svc/dropped-by-sampling', 1n],
      ]);
      // Where they were seen: the environments of the tombstoned trace's sightings are left out too.
      expect(await q('SELECT project_id, observation_key, environment, last_seen_us FROM agent_sighting_environments ORDER BY 1, 2, 3')).toEqual([
        ['p1', 'svc/a', 'prod', 5n],
        ['p2', 'svc/a', 'prod', 5n],
        ['p2', 'svc/a', 'staging', 5n],
      ]);
      await writer.stop();
    } finally {
      await db.close();
    }
  });
});
