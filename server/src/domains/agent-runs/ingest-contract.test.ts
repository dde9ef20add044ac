/**
 * The contract between trace ingestion and the agent reads (docs/agent-model.md): spans sent through
 * OTLP come back as a run, its graph, its events and its identity; the price table prices the run.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

it('an OTLP trace with an invoke_agent span reads back as a run, a graph, agent events and an identity', async () => {
  const p = await projectWithKey(t, ['ingest:write', 'agents:read']);
  const tid = traceId();
  const root = '1111111111111111';
  const chat = '2222222222222222';
  const start = Date.parse('2026-03-01T10:00:00Z');
  const req = traceRequest({ 'service.name': 'svc', 'deployment.environment.name': 'prod' }, [
    span({
      traceId: tid,
      spanId: chat,
      parentSpanId: root,
      name: 'chat',
      startMs: start + 10,
      endMs: start + 20,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.response.status': 'incomplete',
        'gen_ai.request.model': 'contract-model',
        'gen_ai.usage.input_tokens': 5,
        'gen_ai.usage.output_tokens': 2,
        'gen_ai.prompt': 'secret',
      },
      events: [
        { name: 'context.assembly', ms: start + 11, attributes: { 'svc.context.assembly.budget_tokens': 100, 'svc.context.assembly.source_ids': ['a', 'b'] } },
        { name: 'model.request', ms: start + 12 },
        { name: 'exception', ms: start + 13 },
      ],
    }),
    span({
      traceId: tid,
      spanId: root,
      name: 'invoke_agent bot',
      startMs: start,
      endMs: start + 100,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'bot', 'gen_ai.conversation.id': 'conv', 'svc.agent.run.status': 'max_steps' },
    }),
  ]);
  const sent = await postTraces(t, req, { key: p.key, format: 'json' });
  expect(sent.statusCode, sent.body).toBe(200);
  const get = (url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key: p.key });

  const run = (await get(`/agent-runs/${tid}`)).json();
  expect(run).toMatchObject({
    run_id: tid,
    root_step_id: root,
    agent_name: 'bot',
    observation_key: 'svc/bot',
    service_name: 'svc',
    environment: 'prod',
    session_key: 'conv',
    status: 'max_steps',
    duration_ms: 100,
    step_count: 2,
    model_calls: 1,
    cost_unavailable_reason: 'unpriced_model',
  });

  const graph = (await get(`/agent-runs/${tid}/graph`)).json();
  const chatStep = graph.steps.find((s: { step_id: string }) => s.step_id === chat);
  expect(chatStep).toMatchObject({ instrumented: true, input_tokens: 5, attributes: { 'gen_ai.response.status': 'incomplete' } });
  expect(chatStep).not.toHaveProperty('outcome');
  expect(JSON.stringify(graph)).not.toContain('secret');

  const events = (await get(`/agent-events?run_id=${tid}`)).json().events;
  expect(events.map((e: { category: string; name: string }) => [e.category, e.name])).toEqual([
    ['model', 'model.request'],
    ['context', 'context.assembly'],
  ]);
  expect(events[1].context).toEqual({ kind: 'assembly', assembly: { budget_tokens: 100, sources: [{ id: 'a' }, { id: 'b' }] } });
  expect(events[1]).toMatchObject({ session_key: 'conv', observation_key: 'svc/bot', canonical_operation: 'CANONICAL_OPERATION_CHAT' });

  // "Prices are read when the run is read, so setting a price prices runs already stored": $1 and $3 per
  // million tokens are 1000 and 3000 nanos per token.
  const priced = await t.call({
    method: 'PUT',
    url: `/api/v1/llm/pricing?project_id=${p.projectId}`,
    payload: { model: 'contract-model', input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 3 },
  });
  expect(priced.statusCode, priced.body).toBe(200);
  const costed = (await get(`/agent-runs/${tid}`)).json();
  expect(costed.cost_nanos).toBe(5 * 1000 + 2 * 3000);
  expect(costed).not.toHaveProperty('cost_unavailable_reason');

  const identity = (await get('/agent-identities/svc%2Fbot')).json();
  expect(identity).toMatchObject({ observation_key: 'svc/bot', availability: 'answered', sighting_count: 1, credentials: [{ source: 'api_key', api_key_id: p.keyId, sighting_count: 1 }] });
});
