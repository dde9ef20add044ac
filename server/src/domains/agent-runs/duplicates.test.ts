/**
 * A retried export (OTLP clients retry after a timeout) stores the same spans again; the agent reads count
 * each span once (the first ingested copy), so a run, its graph, its cost, its session and turn and its
 * agent events read the same as after a single export. Sightings count deliveries (documented on
 * SightingRow.sightingCount).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postTraces, span, traceId, traceRequest, tracesProtobuf } from '../../ingest/otlp/traces-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

const SCOPES = ['ingest:write', 'traces:read', 'agents:read'];
const ROOT = '1000000000000001';

type Obj = Record<string, unknown>;

/** A run with every kind of step the reads count: model calls (one with a reported cost), a failed tool call, a safety check, a memory write, a context event. */
function runSpans(tid: string, start: number): Obj[] {
  const step = (n: number, attributes: Obj, extra: Obj = {}) =>
    span({ traceId: tid, spanId: `20000000000000${String(n).padStart(2, '0')}`, parentSpanId: ROOT, name: `step ${n}`, startMs: start + n, endMs: start + n + 1, attributes: attributes as never, ...extra });
  return [
    span({
      traceId: tid,
      spanId: ROOT,
      name: 'invoke_agent bot',
      startMs: start,
      endMs: start + 100,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'bot', 'gen_ai.conversation.id': 'conv-1', 'svc.turn.id': 'turn-1', 'svc.agent.run.status': 'completed' },
    }),
    step(1, { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'dup-model', 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.output_tokens': 10, 'gen_ai.response.status': 'completed' }, {
      events: [
        { name: 'context.assembly', ms: start + 1, attributes: { 'svc.context.assembly.budget_tokens': 100, 'svc.context.assembly.source_ids': ['a'] } },
        { name: 'model.request', ms: start + 2 },
      ],
    }),
    step(2, { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'dup-model', 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.output_tokens': 10, 'gen_ai.response.status': 'completed' }),
    step(3, { 'gen_ai.operation.name': 'text_completion', 'gen_ai.request.model': 'other-model', 'svc.cost.nanos': 777, 'gen_ai.response.status': 'completed' }),
    step(4, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.response.status': 'failed' }, { events: [{ name: 'exception', ms: start + 5 }] }),
    step(5, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'guard', 'svc.safety.check': true, 'gen_ai.response.status': 'failed' }),
    step(6, { 'gen_ai.operation.name': 'upsert_memory', 'gen_ai.data_source.id': 'mem', 'svc.memory.item.id': 'item-1', 'gen_ai.response.status': 'completed' }),
  ];
}

/** Everything the agent reads answer about the project's one run. */
async function readAll(key: string, tid: string) {
  const get = async (url: string) => {
    const r = await t.call({ method: 'GET', url: `/api/v1${url}`, key });
    expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
    return r.json();
  };
  return {
    run: await get(`/agent-runs/${tid}`),
    list: await get('/agent-runs'),
    graph: await get(`/agent-runs/${tid}/graph`),
    events: await get(`/agent-events?run_id=${tid}`),
    sessions: await get('/agent-sessions'),
    session: await get('/agent-sessions/conv-1'),
    turns: await get('/agent-turns?session_key=conv-1'),
    trace: await get(`/traces/${tid}`),
  };
}

async function pricedProject() {
  const p = await projectWithKey(t, SCOPES);
  const priced = await t.call({
    method: 'PUT',
    url: `/api/v1/llm/pricing?project_id=${p.projectId}`,
    payload: { model: 'dup-model', input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 3 },
  });
  expect(priced.statusCode, priced.body).toBe(200);
  return p;
}

async function sightingCount(projectId: string): Promise<number> {
  const store = t.ctx.telemetry.agentRuns;
  const keys = await store.identityKeys(projectId, { limit: 100 });
  return (await store.sightings(projectId, keys)).reduce((n, s) => n + s.sightingCount, 0);
}

it('the same batch exported twice reads exactly like one export: run, counts, cost, graph, session, turn, events', async () => {
  const once = await pricedProject();
  const twice = await pricedProject();
  const tid = traceId();
  const body = tracesProtobuf(traceRequest({ 'service.name': 'svc' }, runSpans(tid, Date.now() - 60_000)));
  expect((await postTraces(t, body, { key: once.key })).statusCode).toBe(200);
  expect((await postTraces(t, body, { key: twice.key })).statusCode).toBe(200);
  expect((await postTraces(t, body, { key: twice.key })).statusCode).toBe(200); // the retry

  const single = await readAll(once.key, tid);
  expect(single.run).toMatchObject({ step_count: 7, model_calls: 3, tool_calls: 2, error_steps: 2, cost_nanos: 2 * (100 * 1000 + 10 * 3000) + 777 });
  expect(single.graph.steps).toHaveLength(7);
  expect(single.graph.counts).toMatchObject({ steps: 7, tool_calls: 2, model_calls: 3, error_steps: 2, memory_ops: 1, instrumented_steps: 1 });
  expect(single.events.events.map((e: { name: string }) => e.name)).toEqual(['model.request', 'context.assembly']);
  expect(single.session).toMatchObject({ run_count: 1, turn_count: 1 });
  expect(await readAll(twice.key, tid)).toEqual(single);

  // Sightings count deliveries: the retried invoke_agent span was delivered twice.
  expect(await sightingCount(once.projectId)).toBe(1);
  expect(await sightingCount(twice.projectId)).toBe(2);
});

it('a retry that re-sends part of the trace, and a span repeated within one request, are counted once too', async () => {
  const once = await pricedProject();
  const retried = await pricedProject();
  const tid = traceId();
  const spans = runSpans(tid, Date.now() - 60_000);
  expect((await postTraces(t, traceRequest({ 'service.name': 'svc' }, spans), { key: once.key })).statusCode).toBe(200);
  // First delivery: the run with its first chat twice; then a retry of the tool and model steps only.
  expect((await postTraces(t, traceRequest({ 'service.name': 'svc' }, [...spans, spans[1]]), { key: retried.key })).statusCode).toBe(200);
  expect((await postTraces(t, traceRequest({ 'service.name': 'svc' }, spans.slice(1, 5)), { key: retried.key, format: 'json' })).statusCode).toBe(200);
  expect(await readAll(retried.key, tid)).toEqual(await readAll(once.key, tid));
});
