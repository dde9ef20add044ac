/**
 * Agent runs and the run graph (docs/agent-model.md "Run", "Step"; spec 2 "Step-level agent event",
 * "Agent events and receipts"; spec 3 evaluator fields; spec 1 "Pagination of agent evidence", "Errors").
 * Rows are written directly (agent-fixtures.ts); each test has its own project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents, insertManySteps, insertSpans, spanId, traceId, us, type SpanFixture } from '../../testing/agent-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import type { ModelPrice, ModelPrices } from './pricing-port.js';
import { AgentRunsService } from './service.js';

let t: TestApp;
const prices = new Map<string, ModelPrice>();
/** The fake price table: `provider|model` (an empty provider for "any"). */
const fakePrices: ModelPrices = {
  pricesOf: async (_projectId, models) => models.map((m) => prices.get(`${m.provider ?? ''}|${m.model}`) ?? prices.get(`|${m.model}`)),
};

beforeAll(async () => {
  t = await testApp();
  t.ctx.agentRuns = new AgentRunsService(t.ctx.telemetry.agentRuns, fakePrices);
  prices.set('openai|gpt-x', { inputNanosPerToken: 2, outputNanosPerToken: 10 });
});
afterAll(async () => t.close());

const BASE = us('2026-03-01T10:00:00.000Z');
const at = (sec: number, extraUs = 0) => BASE + sec * 1_000_000 + extraUs;

async function project(scopes = ['agents:read']) {
  const p = await projectWithKey(t, scopes);
  const get = (url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key: p.key });
  const spans = (s: SpanFixture[]) => insertSpans(t, p.projectId, s);
  return { ...p, get, spans };
}

/** A run: root invoke_agent with the given steps (children of the root unless they say otherwise). */
function run(n: number, root: Partial<SpanFixture>, steps: Partial<SpanFixture>[] = []): SpanFixture[] {
  const tid = traceId(n);
  const rootSpan: SpanFixture = { traceId: tid, spanId: spanId(n * 100), op: 'invoke_agent', agentName: 'bot', serviceName: 'svc', startUs: at(n), endUs: at(n + 1), ...root };
  return [
    rootSpan,
    ...steps.map((s, i) => ({ traceId: tid, spanId: spanId(n * 100 + i + 1), parentSpanId: rootSpan.spanId, startUs: rootSpan.startUs + (i + 1) * 1000, ...s })),
  ];
}

const T1 = traceId(1);
const ROOT = spanId(1);
const CHAT = spanId(2);
const TOOL = spanId(3);
const RETR = spanId(4);
const MEM = spanId(5);
const MEM2 = spanId(6);

/** The fixture run of the brief: invoke_agent root + chat + failed execute_tool + retrieval + memory steps + a context event. */
const fixtureRun: SpanFixture[] = [
  {
    traceId: T1,
    spanId: ROOT,
    op: 'invoke_agent',
    name: 'invoke_agent planner',
    agentName: 'planner',
    serviceName: 'svc-a',
    environment: 'prod',
    sessionKey: 'sess-1',
    turnId: 'turn-1',
    runStatus: 'completed',
    terminalReason: 'done',
    responseStatus: 'completed',
    startUs: at(0),
    endUs: at(10),
  },
  {
    traceId: T1,
    spanId: CHAT,
    parentSpanId: ROOT,
    op: 'chat',
    name: 'chat gpt-x',
    requestModel: 'gpt-x-request',
    responseModel: 'gpt-x',
    provider: 'openai',
    inputTokens: 1000,
    outputTokens: 200,
    responseStatus: 'completed',
    contextEvents: 1,
    attributes: { 'gen_ai.prompt': 'the secret prompt', 'gen_ai.tool.call.arguments': '{"q":"secret"}' },
    startUs: at(1),
    endUs: at(2, 250),
  },
  {
    traceId: T1,
    spanId: TOOL,
    parentSpanId: CHAT,
    op: 'execute_tool',
    name: 'execute_tool search',
    toolName: 'search',
    responseStatus: 'failed',
    spanStatus: 'ok',
    attributes: { 'gen_ai.tool.call.id': 'call-1', 'gen_ai.tool.call.result': 'secret result' },
    startUs: at(3),
    endUs: at(4),
  },
  {
    traceId: T1,
    spanId: RETR,
    parentSpanId: ROOT,
    op: 'retrieval',
    name: 'retrieval kb',
    responseStatus: 'incomplete',
    spanStatus: 'error',
    attributes: { 'gen_ai.data_source.id': 'kb-1' },
    startUs: at(5),
    endUs: at(5, 500),
  },
  {
    traceId: T1,
    spanId: MEM,
    parentSpanId: ROOT,
    op: 'search_memory',
    name: 'search_memory',
    memory: { itemId: 'item-7', store: 'mem-store', provenance: 'user', trustLabel: 'MEMORY_TRUST_LABEL_SUSPECT' },
    startUs: at(6),
    endUs: at(7),
  },
  { traceId: T1, spanId: MEM2, parentSpanId: ROOT, op: 'update_memory', name: 'update_memory', startUs: at(7), endUs: at(8) },
];

const fixtureRunView = {
  run_id: T1,
  root_step_id: ROOT,
  agent_name: 'planner',
  observation_key: 'svc-a/planner',
  service_name: 'svc-a',
  environment: 'prod',
  session_key: 'sess-1',
  turn_id: 'turn-1',
  status: 'completed',
  terminal_reason: 'done',
  started_at: '2026-03-01T10:00:00.000000Z',
  ended_at: '2026-03-01T10:00:10.000000Z',
  duration_ms: 10000,
  // every step, the root included: the length of the graph's steps
  step_count: 6,
  error_steps: 1,
  tool_calls: 1,
  model_calls: 1,
  // 1000 input tokens × 2 + 200 output tokens × 10
  cost_nanos: 4000,
};

describe('runs: the fixture run', () => {
  let p: Awaited<ReturnType<typeof project>>;
  beforeAll(async () => {
    p = await project();
    await p.spans(fixtureRun);
    await insertEvents(t, p.projectId, [
      { traceId: T1, spanId: CHAT, index: 0, tsUs: at(1, 100), name: 'context.assembly', contextKind: 'assembly', contextDetail: { budget_tokens: 100, sources: [{ id: 'doc-1' }] }, contextSourceIds: ['doc-1'] },
    ]);
  });

  it('GET /agent-runs lists the run with the fields of docs/agent-model.md "Run", exactly', async () => {
    const res = await p.get('/agent-runs');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ runs: [fixtureRunView], next_cursor: null });
  });

  it('GET /agent-runs/{runId} answers the same run', async () => {
    const res = await p.get(`/agent-runs/${T1}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(fixtureRunView);
  });

  it('a run id in upper case is the same run', async () => {
    expect((await p.get(`/agent-runs/${T1.toUpperCase()}`)).json()).toEqual(fixtureRunView);
  });

  it('GET /agent-runs/{runId}/graph: run, every step with its fields, counts, and "includes action_receipts"', async () => {
    const res = await p.get(`/agent-runs/${T1}/graph`);
    expect(res.statusCode).toBe(200);
    const g = res.json();
    expect(g.run).toEqual(fixtureRunView);
    expect(g.action_receipts).toEqual([]);
    expect(g.steps).toEqual([
      {
        step_id: ROOT,
        name: 'invoke_agent planner',
        canonical_operation: 'CANONICAL_OPERATION_INVOKE_AGENT',
        span_status: 'unset',
        outcome: 'OUTCOME_OK',
        started_at: '2026-03-01T10:00:00.000000Z',
        ended_at: '2026-03-01T10:00:10.000000Z',
        duration_ms: 10000,
        attributes: { 'gen_ai.response.status': 'completed', 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
        instrumented: false,
      },
      {
        step_id: CHAT,
        parent_step_id: ROOT,
        name: 'chat gpt-x',
        canonical_operation: 'CANONICAL_OPERATION_CHAT',
        span_status: 'unset',
        outcome: 'OUTCOME_OK',
        started_at: '2026-03-01T10:00:01.000000Z',
        ended_at: '2026-03-01T10:00:02.000250Z',
        duration_ms: 1000.25,
        model: 'gpt-x',
        provider: 'openai',
        input_tokens: 1000,
        output_tokens: 200,
        cost_nanos: 4000,
        attributes: {
          'gen_ai.response.status': 'completed',
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-x-request',
          'gen_ai.response.model': 'gpt-x',
          'gen_ai.provider.name': 'openai',
        },
        instrumented: true,
      },
      {
        step_id: TOOL,
        parent_step_id: CHAT,
        name: 'execute_tool search',
        canonical_operation: 'CANONICAL_OPERATION_EXECUTE_TOOL',
        span_status: 'ok',
        outcome: 'OUTCOME_ERROR',
        started_at: '2026-03-01T10:00:03.000000Z',
        ended_at: '2026-03-01T10:00:04.000000Z',
        duration_ms: 1000,
        tool_name: 'search',
        attributes: { 'gen_ai.response.status': 'failed', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.id': 'call-1' },
        instrumented: false,
      },
      {
        step_id: RETR,
        parent_step_id: ROOT,
        name: 'retrieval kb',
        canonical_operation: 'CANONICAL_OPERATION_RETRIEVAL',
        span_status: 'error',
        started_at: '2026-03-01T10:00:05.000000Z',
        ended_at: '2026-03-01T10:00:05.000500Z',
        duration_ms: 0.5,
        attributes: { 'gen_ai.response.status': 'incomplete', 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': 'kb-1' },
        instrumented: false,
      },
      {
        step_id: MEM,
        parent_step_id: ROOT,
        name: 'search_memory',
        canonical_operation: 'CANONICAL_OPERATION_SEARCH_MEMORY',
        span_status: 'unset',
        started_at: '2026-03-01T10:00:06.000000Z',
        ended_at: '2026-03-01T10:00:07.000000Z',
        duration_ms: 1000,
        attributes: { 'gen_ai.operation.name': 'search_memory', 'gen_ai.data_source.id': 'mem-store' },
        instrumented: false,
        memory: { item_id: 'item-7', store: 'mem-store', provenance: 'user', declared_trust_label: 'MEMORY_TRUST_LABEL_SUSPECT' },
      },
      {
        step_id: MEM2,
        parent_step_id: ROOT,
        name: 'update_memory',
        canonical_operation: 'CANONICAL_OPERATION_UPDATE_MEMORY',
        span_status: 'unset',
        started_at: '2026-03-01T10:00:07.000000Z',
        ended_at: '2026-03-01T10:00:08.000000Z',
        duration_ms: 1000,
        attributes: { 'gen_ai.operation.name': 'update_memory' },
        instrumented: false,
      },
    ]);
    // "make them agree": counts.steps = run.step_count = steps.length (the root is a step)
    expect(g.counts.steps).toBe(g.steps.length);
    expect(g.counts.steps).toBe(g.run.step_count);
    expect(g.counts).toEqual({
      steps: 6,
      by_canonical_operation: {
        CANONICAL_OPERATION_INVOKE_AGENT: 1,
        CANONICAL_OPERATION_CHAT: 1,
        CANONICAL_OPERATION_EXECUTE_TOOL: 1,
        CANONICAL_OPERATION_RETRIEVAL: 1,
        CANONICAL_OPERATION_SEARCH_MEMORY: 1,
        CANONICAL_OPERATION_UPDATE_MEMORY: 1,
      },
      by_outcome: { OUTCOME_OK: 2, OUTCOME_ERROR: 1, OUTCOME_CANCELLED: 0, unset: 3 },
      tool_calls: 1,
      model_calls: 1,
      error_steps: 1,
      memory_ops: 2,
      instrumented_steps: 1,
    });
  });

  it('"The raw span-event attribute map is never returned"; step attributes are the allow-list only (never prompts, completions or tool arguments)', async () => {
    const body = (await p.get(`/agent-runs/${T1}/graph`)).body;
    expect(body).not.toContain('secret');
    expect(body).not.toContain('gen_ai.prompt');
  });

  it('"incomplete ... leave the outcome unset and the stated value sits in the step attributes under gen_ai.response.status"; "the span status is never used"', async () => {
    const g = (await p.get(`/agent-runs/${T1}/graph`)).json();
    const retrieval = g.steps.find((s: { step_id: string }) => s.step_id === RETR);
    expect(retrieval).not.toHaveProperty('outcome');
    expect(retrieval.attributes['gen_ai.response.status']).toBe('incomplete');
    // the failed tool step had span status ok; the outcome follows the stated status
    expect(g.steps.find((s: { step_id: string }) => s.step_id === TOOL).outcome).toBe('OUTCOME_ERROR');
  });

  it('"The memory object of a step is absent when no item was declared (the step still counts in counts.memory_ops)"', async () => {
    const g = (await p.get(`/agent-runs/${T1}/graph`)).json();
    expect(g.steps.find((s: { step_id: string }) => s.step_id === MEM2)).not.toHaveProperty('memory');
    expect(g.counts.memory_ops).toBe(2);
  });

  it('"A step summary\'s instrumented bit separates an uninstrumented step from one with an accepted context event"', async () => {
    const g = (await p.get(`/agent-runs/${T1}/graph`)).json();
    expect(g.steps.filter((s: { instrumented: boolean }) => s.instrumented).map((s: { step_id: string }) => s.step_id)).toEqual([CHAT]);
  });
});

describe('runs: outcome mapping', () => {
  it('"completed, failed, cancelled map to OUTCOME_OK, OUTCOME_ERROR, OUTCOME_CANCELLED"; "queued, in_progress" and no stated status leave it unset', async () => {
    const p = await project();
    await p.spans(
      run(1, {}, [
        { op: 'chat', responseStatus: 'completed' },
        { op: 'chat', responseStatus: 'failed' },
        { op: 'chat', responseStatus: 'cancelled' },
        { op: 'chat', responseStatus: 'queued' },
        { op: 'chat', responseStatus: 'in_progress' },
        { op: 'chat', spanStatus: 'error' },
      ]),
    );
    const g = (await p.get(`/agent-runs/${traceId(1)}/graph`)).json();
    expect(g.steps.slice(1).map((s: { outcome?: string }) => s.outcome ?? null)).toEqual(['OUTCOME_OK', 'OUTCOME_ERROR', 'OUTCOME_CANCELLED', null, null, null]);
    expect(g.steps.slice(1).map((s: { attributes: Record<string, string> }) => s.attributes['gen_ai.response.status'] ?? null)).toEqual([
      'completed',
      'failed',
      'cancelled',
      'queued',
      'in_progress',
      null,
    ]);
    // the root (no stated status) is a step too: unset 3 + 1
    expect(g.counts.by_outcome).toEqual({ OUTCOME_OK: 1, OUTCOME_ERROR: 1, OUTCOME_CANCELLED: 1, unset: 4 });
  });

  it('an operation that is not well known is CANONICAL_OPERATION_UNKNOWN', async () => {
    const p = await project();
    await p.spans(run(1, {}, [{ op: 'summarize' }, { op: null }]));
    const g = (await p.get(`/agent-runs/${traceId(1)}/graph`)).json();
    expect(g.counts.by_canonical_operation).toEqual({ CANONICAL_OPERATION_INVOKE_AGENT: 1, CANONICAL_OPERATION_UNKNOWN: 2 });
  });
});

describe('runs: derived fields', () => {
  it('status: svc.agent.run.status wire values (timed_out, max_steps); else the completed/failed/cancelled response status; else absent, "never guessed from the span status"', async () => {
    const p = await project();
    await p.spans([
      ...run(1, { runStatus: 'timed_out', responseStatus: 'completed' }),
      ...run(2, { runStatus: 'max_steps' }),
      ...run(3, { responseStatus: 'failed' }),
      ...run(4, { responseStatus: 'incomplete' }),
      ...run(5, { spanStatus: 'error' }),
    ]);
    const runs = (await p.get('/agent-runs')).json().runs;
    expect(runs.map((r: { run_id: string; status?: string }) => [r.run_id, r.status ?? null])).toEqual([
      [traceId(5), null],
      [traceId(4), null],
      [traceId(3), 'failed'],
      [traceId(2), 'max_steps'],
      [traceId(1), 'timed_out'],
    ]);
  });

  it('session_key and turn_id: "root\'s ...; if absent, the first span of the trace (by start) that has one; absent when none"', async () => {
    const p = await project();
    await p.spans([
      ...run(1, {}, [{ op: 'chat', sessionKey: 'late', turnId: 't-late', startUs: at(1, 5000) }, { op: 'chat', sessionKey: 'early', turnId: 't-early', startUs: at(1, 2000) }]),
      ...run(2, { sessionKey: 'own', turnId: 'own-turn' }, [{ op: 'chat', sessionKey: 'child', startUs: at(2, 1) }]),
      ...run(3, {}),
    ]);
    const runs = (await p.get('/agent-runs')).json().runs;
    const view = (id: string) => runs.find((r: { run_id: string }) => r.run_id === id);
    expect([view(traceId(1)).session_key, view(traceId(1)).turn_id]).toEqual(['early', 't-early']);
    expect([view(traceId(2)).session_key, view(traceId(2)).turn_id]).toEqual(['own', 'own-turn']);
    expect(view(traceId(3))).not.toHaveProperty('session_key');
    expect(view(traceId(3))).not.toHaveProperty('turn_id');
  });

  it('"The run\'s root is its earliest-starting invoke_agent span whose parent is not another invoke_agent span"; "Nested invoke_agent spans (sub-agents) are steps"', async () => {
    const p = await project();
    const tid = traceId(9);
    await p.spans([
      { traceId: tid, spanId: spanId(1), name: 'POST /chat', startUs: at(0), endUs: at(20) },
      { traceId: tid, spanId: spanId(3), parentSpanId: spanId(2), op: 'invoke_agent', agentName: 'sub', serviceName: 's', startUs: at(1), endUs: at(2) },
      { traceId: tid, spanId: spanId(2), parentSpanId: spanId(1), op: 'invoke_agent', agentName: 'main', serviceName: 's', startUs: at(1, 500), endUs: at(10) },
      { traceId: tid, spanId: spanId(4), parentSpanId: spanId(3), op: 'chat', startUs: at(1, 600) },
    ]);
    const r = (await p.get(`/agent-runs/${tid}`)).json();
    expect(r).toMatchObject({ root_step_id: spanId(2), agent_name: 'main', observation_key: 's/main', step_count: 4, model_calls: 1 });
  });

  it('a trace with no agent span is rooted at its top workflow span (a LangChain graph, a Traceloop workflow): the root step stays INVOKE_WORKFLOW', async () => {
    const p = await project();
    const tid = traceId(11);
    await p.spans([
      { traceId: tid, spanId: spanId(1), op: 'invoke_workflow', name: 'weather-graph', agentName: 'weather', serviceName: 's', startUs: at(0), endUs: at(5) },
      { traceId: tid, spanId: spanId(2), parentSpanId: spanId(1), op: 'invoke_workflow', name: 'model_request', startUs: at(1) },
      { traceId: tid, spanId: spanId(3), parentSpanId: spanId(2), op: 'chat', provider: 'openai', responseModel: 'gpt-x', inputTokens: 10, outputTokens: 1, startUs: at(1, 100) },
      { traceId: tid, spanId: spanId(4), parentSpanId: spanId(1), op: 'execute_tool', toolName: 'get_weather', startUs: at(2) },
    ]);
    const r = (await p.get(`/agent-runs/${tid}`)).json();
    expect(r).toMatchObject({ run_id: tid, root_step_id: spanId(1), agent_name: 'weather', observation_key: 's/weather', step_count: 4, model_calls: 1, tool_calls: 1, cost_nanos: 30 });
    const g = (await p.get(`/agent-runs/${tid}/graph`)).json();
    expect(g.steps.find((s: { step_id: string }) => s.step_id === spanId(1)).canonical_operation).toBe('CANONICAL_OPERATION_INVOKE_WORKFLOW');
    // The list, its observation-key and time filters find it too.
    const ids = async (q: string) => (await p.get(`/agent-runs?${q}`)).json().runs.map((x: { run_id: string }) => x.run_id);
    expect(await ids('')).toEqual([tid]);
    expect(await ids('observation_key=s/weather')).toEqual([tid]);
    expect(await ids(`since=${encodeURIComponent('2026-03-01T10:00:00Z')}&until=${encodeURIComponent('2026-03-01T10:00:00Z')}`)).toEqual([tid]);
    expect(await ids(`since=${encodeURIComponent('2026-03-01T10:00:01Z')}`)).toEqual([]);
  });

  it('an agent span wins over a workflow above it: the workflow is a step of the agent\'s run; a workflow that is not at the top roots nothing; bare model calls are no run', async () => {
    const p = await project();
    const [wrapped, nestedWorkflow, bare] = [traceId(12), traceId(13), traceId(14)];
    await p.spans([
      { traceId: wrapped, spanId: spanId(1), op: 'invoke_workflow', name: 'pipeline', startUs: at(0), endUs: at(9) },
      { traceId: wrapped, spanId: spanId(2), parentSpanId: spanId(1), op: 'invoke_agent', agentName: 'inner', serviceName: 's', startUs: at(1), endUs: at(8) },
      { traceId: nestedWorkflow, spanId: spanId(1), name: 'GET /weather', startUs: at(0), endUs: at(9) },
      { traceId: nestedWorkflow, spanId: spanId(2), parentSpanId: spanId(1), op: 'invoke_workflow', agentName: 'w', startUs: at(1) },
      { traceId: bare, spanId: spanId(1), name: 'weather-turn', startUs: at(0), endUs: at(9) },
      { traceId: bare, spanId: spanId(2), parentSpanId: spanId(1), op: 'chat', responseModel: 'gpt-x', inputTokens: 3, startUs: at(1) },
    ]);
    expect((await p.get(`/agent-runs/${wrapped}`)).json()).toMatchObject({ root_step_id: spanId(2), agent_name: 'inner', step_count: 2 });
    expect((await p.get(`/agent-runs/${nestedWorkflow}`)).statusCode).toBe(404);
    expect((await p.get(`/agent-runs/${bare}`)).statusCode).toBe(404);
    expect((await p.get('/agent-runs')).json().runs.map((x: { run_id: string }) => x.run_id)).toEqual([wrapped]);
  });

  it('observation_key: "gen_ai.agent.id when present, else <service.name>/<gen_ai.agent.name> (with unknown_service ...)"', async () => {
    const p = await project();
    await p.spans([...run(1, { agentId: 'agent-42' }), ...run(2, { serviceName: undefined, agentName: 'lonely' }), ...run(3, { agentName: undefined })]);
    const runs = (await p.get('/agent-runs')).json().runs;
    expect(runs.map((r: { observation_key?: string }) => r.observation_key ?? null)).toEqual([null, 'unknown_service/lonely', 'agent-42']);
  });

  it('a malformed terminal reason is absent', async () => {
    const p = await project();
    await p.spans(run(1, { runStatus: 'failed', terminalReason: 'Not Valid!' }));
    expect((await p.get(`/agent-runs/${traceId(1)}`)).json()).not.toHaveProperty('terminal_reason');
  });
});

describe('runs: cost ("missing or unpriced is not zero")', () => {
  it('reported: svc.cost.nanos is the step cost', async () => {
    const p = await project();
    await p.spans(run(1, {}, [{ op: 'chat', responseModel: 'no-price', costNanos: 777 }, { op: 'chat', responseModel: 'gpt-x', provider: 'openai', inputTokens: 1, costNanos: 3 }]));
    expect((await p.get(`/agent-runs/${traceId(1)}`)).json()).toMatchObject({ cost_nanos: 780 });
  });

  it('calculated: input tokens × input price + output tokens × output price; a step with only input tokens (embeddings) is priced on them', async () => {
    const p = await project();
    await p.spans(
      run(1, {}, [
        { op: 'chat', responseModel: 'gpt-x', provider: 'openai', inputTokens: 10, outputTokens: 1 },
        { op: 'embeddings', requestModel: 'gpt-x', provider: 'openai', inputTokens: 5 },
      ]),
    );
    const r = (await p.get(`/agent-runs/${traceId(1)}`)).json();
    expect(r.cost_nanos).toBe(10 * 2 + 1 * 10 + 5 * 2);
    expect(r).not.toHaveProperty('cost_unavailable_reason');
  });

  it('"a parent that reports totals for its children is never priced twice": an agent step with token totals has no step cost; step costs add up to the run cost', async () => {
    const p = await project();
    await p.spans(
      run(1, { requestModel: 'gpt-x', provider: 'openai', inputTokens: 20, outputTokens: 2 }, [
        { op: 'chat', requestModel: 'gpt-x', provider: 'openai', inputTokens: 10, outputTokens: 1 },
        { op: 'chat', requestModel: 'gpt-x', provider: 'openai', inputTokens: 10, outputTokens: 1 },
      ]),
    );
    const g = (await p.get(`/agent-runs/${traceId(1)}/graph`)).json();
    const root = g.steps.find((s: { step_id: string }) => s.step_id === g.run.root_step_id);
    expect(root).toMatchObject({ input_tokens: 20, output_tokens: 2 });
    expect(root).not.toHaveProperty('cost_nanos');
    const stepSum = g.steps.reduce((a: number, s: { cost_nanos?: number }) => a + (s.cost_nanos ?? 0), 0);
    expect(g.run.cost_nanos).toBe(2 * (10 * 2 + 1 * 10));
    expect(stepSum).toBe(g.run.cost_nanos);
  });

  it('"a step whose tokens were read is a model call": a step of no known operation reporting tokens is counted and priced, in the list and the graph alike', async () => {
    const p = await project();
    await p.spans(run(1, {}, [{ op: null, name: 'openai.chat', requestModel: 'gpt-x', provider: 'openai', inputTokens: 10, outputTokens: 1 }, { op: 'execute_tool', toolName: 't' }]));
    const listed = (await p.get('/agent-runs')).json().runs[0];
    const g = (await p.get(`/agent-runs/${traceId(1)}/graph`)).json();
    expect(listed).toMatchObject({ model_calls: 1, tool_calls: 1, cost_nanos: 10 * 2 + 1 * 10 });
    expect(g.run).toMatchObject({ model_calls: 1, cost_nanos: 30 });
    expect(g.counts.model_calls).toBe(1);
    expect(g.steps.find((s: { name: string }) => s.name === 'openai.chat')).toMatchObject({ canonical_operation: 'CANONICAL_OPERATION_UNKNOWN', cost_nanos: 30 });
  });

  it('totals over calls further down are not calls either: a model span around the client library\'s own model span (two instrumentations), an agent total over a token-less workflow over the call', async () => {
    const p = await project();
    const tid = traceId(2);
    await p.spans([
      { traceId: tid, spanId: spanId(1), op: 'invoke_agent', agentName: 'a', requestModel: 'gpt-x', provider: 'openai', inputTokens: 10, outputTokens: 1, startUs: at(0), endUs: at(9) },
      { traceId: tid, spanId: spanId(2), parentSpanId: spanId(1), op: 'invoke_workflow', startUs: at(1) },
      { traceId: tid, spanId: spanId(3), parentSpanId: spanId(2), op: 'chat', name: 'ChatOpenAI', requestModel: 'gpt-x', provider: 'openai', inputTokens: 10, outputTokens: 1, startUs: at(2) },
      { traceId: tid, spanId: spanId(4), parentSpanId: spanId(3), op: 'chat', name: 'OpenAI Chat Completions', requestModel: 'gpt-x', provider: 'openai', inputTokens: 10, outputTokens: 1, startUs: at(3) },
    ]);
    const g = (await p.get(`/agent-runs/${tid}/graph`)).json();
    const priced = g.steps.filter((s: { cost_nanos?: number }) => s.cost_nanos !== undefined).map((s: { name: string }) => s.name);
    expect(priced).toEqual(['OpenAI Chat Completions']);
    expect([g.run.model_calls, g.counts.model_calls, g.run.cost_nanos]).toEqual([1, 1, 30]);
    expect((await p.get('/agent-runs')).json().runs[0]).toMatchObject({ model_calls: 1, cost_nanos: 30 });
  });

  it('a cycle of parent links (a malformed trace) ends: no step of the cycle is a call, and the reads answer', async () => {
    const p = await project();
    const tid = traceId(3);
    await p.spans([
      { traceId: tid, spanId: spanId(1), op: 'invoke_agent', agentName: 'a', startUs: at(0), endUs: at(9) },
      { traceId: tid, spanId: spanId(2), parentSpanId: spanId(3), op: 'chat', requestModel: 'gpt-x', provider: 'openai', inputTokens: 1, startUs: at(1) },
      { traceId: tid, spanId: spanId(3), parentSpanId: spanId(2), op: 'chat', requestModel: 'gpt-x', provider: 'openai', inputTokens: 1, startUs: at(2) },
    ]);
    expect((await p.get(`/agent-runs/${tid}/graph`)).json().run).toMatchObject({ model_calls: 0, cost_unavailable_reason: 'no_model_calls' });
    expect((await p.get('/agent-runs')).json().runs[0]).toMatchObject({ model_calls: 0, cost_unavailable_reason: 'no_model_calls' });
  });

  it('rounded to whole nanos per step, half up', async () => {
    prices.set('|cheap', { inputNanosPerToken: 0.25, outputNanosPerToken: 0 });
    const p = await project();
    await p.spans(run(1, {}, [{ op: 'chat', responseModel: 'cheap', inputTokens: 2 }, { op: 'chat', responseModel: 'cheap', inputTokens: 2 }]));
    expect((await p.get(`/agent-runs/${traceId(1)}`)).json().cost_nanos).toBe(2);
  });

  it('unpriced: absent with cost_unavailable_reason unpriced_model, never 0; "Prices are read when the run is read, so setting a price prices runs already stored"', async () => {
    const p = await project();
    await p.spans(run(1, {}, [{ op: 'chat', responseModel: 'later-priced', provider: 'acme', inputTokens: 100, outputTokens: 10 }]));
    const before = (await p.get(`/agent-runs/${traceId(1)}`)).json();
    expect(before).not.toHaveProperty('cost_nanos');
    expect(before.cost_unavailable_reason).toBe('unpriced_model');
    const step = (await p.get(`/agent-runs/${traceId(1)}/graph`)).json().steps[1];
    expect(step).not.toHaveProperty('cost_nanos');
    expect(step.cost_unavailable_reason).toBe('unpriced_model');
    prices.set('acme|later-priced', { inputNanosPerToken: 1, outputNanosPerToken: 3 });
    expect((await p.get(`/agent-runs/${traceId(1)}`)).json()).toMatchObject({ cost_nanos: 130 });
  });

  it('missing usage: a model step with neither a reported cost nor token counts makes the run cost absent (missing_usage)', async () => {
    const p = await project();
    await p.spans(run(1, {}, [{ op: 'chat', responseModel: 'gpt-x', provider: 'openai', inputTokens: 10 }, { op: 'chat', responseModel: 'gpt-x', provider: 'openai' }]));
    const r = (await p.get(`/agent-runs/${traceId(1)}`)).json();
    expect(r).not.toHaveProperty('cost_nanos');
    expect(r.cost_unavailable_reason).toBe('missing_usage');
  });

  it('no model calls: absent with no_model_calls', async () => {
    const p = await project();
    await p.spans(run(1, {}, [{ op: 'execute_tool', toolName: 'x', costNanos: 5 }]));
    const r = (await p.get(`/agent-runs/${traceId(1)}`)).json();
    expect(r).not.toHaveProperty('cost_nanos');
    expect(r.cost_unavailable_reason).toBe('no_model_calls');
  });
});

describe('runs: safety_error_steps', () => {
  it('"the run has explicitly identified safety-check steps with reported outcomes; otherwise no score": absent vs present', async () => {
    const p = await project();
    await p.spans([
      ...run(1, {}, [{ op: 'execute_tool', safetyCheck: true }]),
      ...run(2, {}, [{ op: 'execute_tool', safetyCheck: true, responseStatus: 'completed' }]),
      ...run(3, {}, [
        { op: 'execute_tool', safetyCheck: true, responseStatus: 'failed' },
        { op: 'execute_tool', responseStatus: 'failed' },
      ]),
      ...run(4, {}, [{ op: 'chat', responseStatus: 'failed' }]),
    ]);
    const runs = (await p.get('/agent-runs')).json().runs;
    expect(runs.map((r: { safety_error_steps?: number }) => r.safety_error_steps ?? null)).toEqual([null, 1, 0, null]);
  });
});

describe('runs list: filters, order, pagination', () => {
  it('newest first (started_at desc, run_id desc as tiebreak)', async () => {
    const p = await project();
    await p.spans([...run(1, {}), ...run(3, {}), ...run(2, {}), ...run(4, { startUs: at(3) })]);
    const ids = (await p.get('/agent-runs')).json().runs.map((r: { run_id: string }) => r.run_id);
    expect(ids).toEqual([traceId(4), traceId(3), traceId(2), traceId(1)]);
  });

  it('status filter: repeated or comma-separated, OR within, AND across the other filters; "An unrecognized value is rejected with 400"', async () => {
    const p = await project();
    await p.spans([
      ...run(1, { runStatus: 'completed', sessionKey: 'a' }),
      ...run(2, { runStatus: 'failed', sessionKey: 'a' }),
      ...run(3, { runStatus: 'timed_out', sessionKey: 'b' }),
      ...run(4, {}),
    ]);
    const ids = async (q: string) => (await p.get(`/agent-runs?${q}`)).json().runs.map((r: { run_id: string }) => r.run_id);
    expect(await ids('status=completed&status=timed_out')).toEqual([traceId(3), traceId(1)]);
    expect(await ids('status=completed,failed')).toEqual([traceId(2), traceId(1)]);
    expect(await ids('status=completed,failed,timed_out&session_key=a')).toEqual([traceId(2), traceId(1)]);
    const bad = await p.get('/agent-runs?status=done');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_request');
    expect((await p.get('/agent-runs?status=')).statusCode).toBe(400);
  });

  it('session_key, observation_key and since/until (closed window on started_at) filters', async () => {
    const p = await project();
    await p.spans([...run(1, { agentId: 'k1', sessionKey: 's' }), ...run(2, { agentId: 'k2', sessionKey: 's' }), ...run(3, { agentId: 'k1' })]);
    const ids = async (q: string) => (await p.get(`/agent-runs?${q}`)).json().runs.map((r: { run_id: string }) => r.run_id);
    expect(await ids('session_key=s')).toEqual([traceId(2), traceId(1)]);
    expect(await ids('observation_key=k1')).toEqual([traceId(3), traceId(1)]);
    expect(await ids(`since=${encodeURIComponent('2026-03-01T10:00:02Z')}&until=${encodeURIComponent('2026-03-01T10:00:03Z')}`)).toEqual([traceId(3), traceId(2)]);
    expect((await p.get('/agent-runs?since=yesterday')).statusCode).toBe(400);
    expect((await p.get(`/agent-runs?since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z`)).statusCode).toBe(400);
  });

  it('limit: "Omission keeps the endpoint default" (50); its maximum is 200; explicit 0 is refused (this endpoint\'s zero-limit behaviour)', async () => {
    const p = await project();
    await p.spans(Array.from({ length: 51 }, (_, i) => run(i + 1, {})).flat());
    const first = (await p.get('/agent-runs')).json();
    expect(first.runs).toHaveLength(50);
    expect(first.next_cursor).toEqual(expect.any(String));
    expect((await p.get('/agent-runs?limit=200')).json().runs).toHaveLength(51);
    expect((await p.get('/agent-runs?limit=201')).statusCode).toBe(400);
    expect((await p.get('/agent-runs?limit=0')).statusCode).toBe(400);
  });

  it('"A continuation sends exactly one non-empty cursor": pages follow without gaps or repeats; the last page has next_cursor null', async () => {
    const p = await project();
    await p.spans(Array.from({ length: 5 }, (_, i) => run(i + 1, {})).flat());
    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const body: { runs: { run_id: string }[]; next_cursor: string | null } = (await p.get(`/agent-runs?limit=2&cursor=${encodeURIComponent(cursor)}`)).json();
      seen.push(...body.runs.map((r) => r.run_id));
      cursor = body.next_cursor;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([5, 4, 3, 2, 1].map(traceId));
  });

  it('"the agent-run list also accepts at most one cursor": two cursors (identical, two empty, empty plus non-empty) are 400 invalid_request "at most once"', async () => {
    const p = await project();
    await p.spans([...run(1, {}), ...run(2, {})]);
    const c = (await p.get('/agent-runs?limit=1')).json().next_cursor;
    for (const q of [`cursor=${c}&cursor=${c}`, 'cursor=&cursor=', `cursor=&cursor=${c}`]) {
      const res = await p.get(`/agent-runs?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', message: 'cursor must be provided at most once' });
    }
  });

  it('"A single cursor goes unchanged to the endpoint\'s own validation; it can still be rejected as expired or malformed"', async () => {
    const p = await project();
    for (const c of ['garbage!', 'WzEsMl0', Buffer.from('["x","y"]').toString('base64url')]) {
      const res = await p.get(`/agent-runs?cursor=${encodeURIComponent(c)}`);
      expect(res.statusCode, c).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('"Keep project, selectors, filters and explicit time bounds unchanged while continuing": a cursor sent with another filter is 400', async () => {
    const p = await project();
    await p.spans([...run(1, { runStatus: 'completed' }), ...run(2, { runStatus: 'completed' })]);
    const c = (await p.get('/agent-runs?limit=1&status=completed')).json().next_cursor;
    expect((await p.get(`/agent-runs?limit=1&status=completed&cursor=${c}`)).statusCode).toBe(200);
    const res = await p.get(`/agent-runs?limit=1&status=failed&cursor=${c}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/another query/);
  });

  it('"Paging is not a frozen snapshot": a run stored after the first page, older than the cursor, appears on the next page', async () => {
    const p = await project();
    await p.spans([...run(5, {}), ...run(3, {})]);
    const first = (await p.get('/agent-runs?limit=1')).json();
    expect(first.runs.map((r: { run_id: string }) => r.run_id)).toEqual([traceId(5)]);
    await p.spans(run(4, {}));
    const next = (await p.get(`/agent-runs?limit=1&cursor=${first.next_cursor}`)).json();
    expect(next.runs.map((r: { run_id: string }) => r.run_id)).toEqual([traceId(4)]);
  });
});

describe('runs: errors and access', () => {
  it('"object owned by another project (same answer)": another project\'s run is 404 like a missing one', async () => {
    const a = await project();
    const b = await project();
    await b.spans(run(1, {}));
    const other = await a.get(`/agent-runs/${traceId(1)}`);
    const missing = await a.get(`/agent-runs/${traceId(77)}`);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(missing.json());
    expect((await a.get(`/agent-runs/${traceId(1)}/graph`)).statusCode).toBe(404);
    expect((await a.get('/agent-runs')).json().runs).toEqual([]);
    // the organization-level key selects the project per request
    expect((await t.call({ method: 'GET', url: `/api/v1/agent-runs/${traceId(1)}?project_id=${b.projectId}` })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: `/api/v1/agent-runs/${traceId(1)}?project_id=${a.projectId}` })).statusCode).toBe(404);
  });

  it('a malformed run id is 400 (not 32 hexadecimal characters)', async () => {
    const p = await project();
    const res = await p.get('/agent-runs/not-a-run');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request');
  });

  it('Authentication rule 3: "Any non-empty conflicting value ... returns 403 permission_denied"; the key may repeat its own project', async () => {
    const a = await project();
    const b = await project();
    const res = await a.get(`/agent-runs?project_id=${b.projectId}`);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('permission_denied');
    expect((await a.get(`/agent-runs?project_id=${a.projectId}`)).statusCode).toBe(200);
  });

  it('an organization-level credential must name the project', async () => {
    expect((await t.call({ method: 'GET', url: '/api/v1/agent-runs' })).statusCode).toBe(400);
  });

  it('"agent-event ... reads" need agents:read: a key without it is 403 naming the scope', async () => {
    const p = await project(['metrics:read']);
    for (const url of ['/agent-runs', `/agent-runs/${traceId(1)}`, `/agent-runs/${traceId(1)}/graph`]) {
      const res = await p.get(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.json().message).toContain('agents:read');
    }
  });

  it('"evidence and step-tree ceilings" (429): a run with more than 10,000 steps is refused, never silently truncated', async () => {
    const p = await project();
    await p.spans(run(1, {}));
    await insertManySteps(t, p.projectId, traceId(1), spanId(100), 10_000, at(1, 10));
    const res = await p.get(`/agent-runs/${traceId(1)}/graph`);
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: 'result_too_large', details: { limit: 10000, steps: 10001 } });
    expect(res.json().message).toMatch(/at most 10000 steps/);
    // the run itself still reads
    expect((await p.get(`/agent-runs/${traceId(1)}`)).json().step_count).toBe(10_001);
  });

  it('exactly 10,000 steps still answers', async () => {
    const p = await project();
    await p.spans(run(1, {}));
    await insertManySteps(t, p.projectId, traceId(1), spanId(100), 9_999, at(1, 10));
    const res = await p.get(`/agent-runs/${traceId(1)}/graph`);
    expect(res.statusCode).toBe(200);
    expect(res.json().steps).toHaveLength(10_000);
  });
});
