/**
 * The model-call reads `GET /llm/calls` and `GET /llm/usage` (docs/agent-model.md "Model calls outside
 * runs"): every model call of a project, in an agent run or not, priced exactly as a run step. Spans are
 * ingested through the real OTLP endpoint; each test has its own project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTraces, span, spanId, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { secondOrganization } from '../../testing/people.js';
import { MAX_USAGE_GROUPS } from './calls-service.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

type Obj = Record<string, unknown>;
type Call = Obj & { trace_id: string; span_id: string; provider?: string; model?: string; input_tokens?: number; output_tokens?: number; cost_nanos?: number };
type Group = Obj & { provider?: string; model?: string; model_calls: number; input_tokens: number; output_tokens: number; calls_without_usage: number; cost_nanos?: number };

const SCOPES = ['ingest:write', 'llm:read', 'llm:write', 'agents:read'];
/** Whole seconds, an hour ago: inside the default window (the 24 hours ending now). */
const BASE = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;
const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, -1)}000Z`;

/** A fixed span id (16 hex; 0 is no valid span id). */
const sid = (n: number) => (n + 1).toString(16).padStart(16, '0');

interface CallSpec {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  at: number;
  op?: string;
  model?: string;
  provider?: string;
  input?: number;
  output?: number;
  cost?: number;
  error?: boolean;
}

/** A model call in GenAI keys (plus a prompt, which must never come back). */
function call(c: CallSpec): Obj {
  const attributes: Record<string, string | number> = { 'gen_ai.operation.name': c.op ?? 'chat', 'gen_ai.prompt': 'the secret prompt' };
  if (c.model !== undefined) attributes['gen_ai.request.model'] = c.model;
  if (c.provider !== undefined) attributes['gen_ai.provider.name'] = c.provider;
  if (c.input !== undefined) attributes['gen_ai.usage.input_tokens'] = c.input;
  if (c.output !== undefined) attributes['gen_ai.usage.output_tokens'] = c.output;
  if (c.cost !== undefined) attributes['svc.cost.nanos'] = c.cost;
  return span({
    traceId: c.traceId,
    spanId: c.spanId,
    parentSpanId: c.parentSpanId,
    name: `${c.op ?? 'chat'} ${c.model ?? ''}`,
    startMs: c.at,
    endMs: c.at + 250,
    attributes,
    ...(c.error ? { status: { code: 2, message: 'boom' } } : {}),
  });
}

async function project(scopes = SCOPES) {
  const p = await projectWithKey(t, scopes);
  const get = (path: string, q = '', key: string | undefined = p.key) => t.call({ method: 'GET', url: `/api/v1${path}${q ? `?${q}` : ''}`, key });
  const ok = async (path: string, q = '') => {
    const r = await get(path, q);
    expect(r.statusCode, `${path}?${q}: ${r.body}`).toBe(200);
    return r.json();
  };
  return {
    ...p,
    get,
    async send(spans: Obj[], resource: Record<string, string> = { 'service.name': 'svc-a' }) {
      const r = await postTraces(t, traceRequest(resource, spans), { key: p.key });
      expect(r.statusCode, r.body).toBe(200);
    },
    async price(model: string, input: number, output: number, provider?: string) {
      const r = await t.call({
        method: 'PUT',
        url: '/api/v1/llm/pricing',
        key: p.key,
        payload: { model, input_usd_per_million_tokens: input, output_usd_per_million_tokens: output, ...(provider ? { provider } : {}) },
      });
      expect(r.statusCode, r.body).toBe(200);
    },
    calls: async (q = '') => (await ok('/llm/calls', q)) as { calls: Call[]; next_cursor: string | null },
    usage: async (q = '') => (await ok('/llm/usage', q)) as { groups: Group[]; totals: Omit<Group, 'provider' | 'model'>; truncated: boolean; since: string; until: string },
  };
}

/** Every call of the query, page by page; fails on a repeated call. */
async function allPages(p: Awaited<ReturnType<typeof project>>, q: string, limit: number) {
  const seen: Call[] = [];
  let cursor: string | null = '';
  for (let pages = 0; cursor !== null; pages++) {
    expect(pages).toBeLessThan(100);
    const page: { calls: Call[]; next_cursor: string | null } = await p.calls(`${q}${q ? '&' : ''}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.calls.length).toBeLessThanOrEqual(limit);
    seen.push(...page.calls);
    cursor = page.next_cursor;
  }
  const ids = seen.map((c) => `${c.trace_id}/${c.span_id}`);
  expect(new Set(ids).size).toBe(ids.length);
  return seen;
}

it('model calls outside any run are listed (OpenInference on the bare OpenAI client): fields, no content, no run', async () => {
  const p = await project();
  await p.price('gpt-4o-2024-08-06', 2.5, 10);
  const tid = traceId();
  const app = spanId();
  const llm = spanId();
  const embed = spanId();
  await p.send(
    [
      span({ traceId: tid, spanId: app, name: 'handle request', startMs: BASE, endMs: BASE + 2000 }),
      span({
        traceId: tid,
        spanId: llm,
        parentSpanId: app,
        name: 'OpenAI Chat Completions',
        startMs: BASE + 100,
        endMs: BASE + 1100,
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-4o-2024-08-06',
          'llm.system': 'openai',
          'llm.token_count.prompt': 1200,
          'llm.token_count.completion': 300,
          'input.value': 'the secret prompt',
          'output.value': 'the secret answer',
        },
        status: { code: 1 },
      }),
      span({
        traceId: tid,
        spanId: embed,
        parentSpanId: app,
        name: 'OpenAI Embeddings',
        startMs: BASE + 1200,
        endMs: BASE + 1300,
        attributes: { 'openinference.span.kind': 'EMBEDDING', 'embedding.model_name': 'text-embedding-3-small', 'llm.system': 'openai', 'llm.token_count.prompt': 8 },
      }),
    ],
    { 'service.name': 'bare-openai' },
  );
  const { calls, next_cursor } = await p.calls();
  expect(next_cursor).toBeNull();
  expect(calls).toEqual([
    {
      trace_id: tid,
      span_id: embed,
      started_at: iso(BASE + 1200),
      duration_ms: 100,
      canonical_operation: 'CANONICAL_OPERATION_EMBEDDINGS',
      service_name: 'bare-openai',
      provider: 'openai',
      model: 'text-embedding-3-small',
      input_tokens: 8,
      cost_unavailable_reason: 'unpriced_model',
      span_status: 'unset',
    },
    {
      trace_id: tid,
      span_id: llm,
      started_at: iso(BASE + 100),
      duration_ms: 1000,
      canonical_operation: 'CANONICAL_OPERATION_CHAT',
      service_name: 'bare-openai',
      provider: 'openai',
      model: 'gpt-4o-2024-08-06',
      input_tokens: 1200,
      output_tokens: 300,
      cost_nanos: 1200 * 2500 + 300 * 10_000,
      span_status: 'ok',
    },
  ]);
  expect(JSON.stringify(calls)).not.toContain('secret');
  // The trace is no run: the calls are only found here.
  expect((await p.get(`/agent-runs/${tid}`)).statusCode).toBe(404);
  const { groups, totals } = await p.usage();
  expect(groups.map((g) => [g.provider, g.model, g.model_calls])).toEqual([
    ['openai', 'gpt-4o-2024-08-06', 1],
    ['openai', 'text-embedding-3-small', 1],
  ]);
  expect(totals).toEqual({ model_calls: 2, input_tokens: 1208, output_tokens: 300, calls_without_usage: 0, cost_unavailable_reason: 'unpriced_model' });
});

it('model calls inside a run are listed too, with the cost the run graph gives their steps', async () => {
  const p = await project();
  await p.price('gpt-x', 1, 4, 'openai');
  const tid = traceId();
  const root = spanId();
  const chat = spanId();
  await p.send([
    span({ traceId: tid, spanId: root, name: 'invoke_agent bot', startMs: BASE, endMs: BASE + 5000, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'bot' } }),
    call({ traceId: tid, spanId: chat, parentSpanId: root, at: BASE + 10, model: 'gpt-x', provider: 'openai', input: 333, output: 77 }),
    span({ traceId: tid, parentSpanId: root, name: 'execute_tool search', startMs: BASE + 300, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' } }),
  ]);
  const { calls } = await p.calls();
  expect(calls.map((c) => [c.trace_id, c.span_id, c.canonical_operation])).toEqual([[tid, chat, 'CANONICAL_OPERATION_CHAT']]);
  expect(calls[0].cost_nanos).toBe(333 * 1000 + 77 * 4000);
  const graph = (await p.get(`/agent-runs/${tid}/graph`)).json();
  expect(graph.steps.find((s: { step_id: string }) => s.step_id === chat).cost_nanos).toBe(calls[0].cost_nanos);
  expect(graph.run.cost_nanos).toBe(calls[0].cost_nanos);
  expect((await p.usage()).totals).toMatchObject({ model_calls: 1, cost_nanos: graph.run.cost_nanos });
});

describe('cost: exactly as a run step', () => {
  it('from the price table (provider-specific first, rounded once per call, half up) and from a reported svc.cost.nanos', async () => {
    const p = await project();
    await p.price('m', 0.000001, 1); // 0.001 nano per input token
    await p.price('m', 2, 2, 'azure');
    const tid = traceId();
    await p.send([
      call({ traceId: tid, at: BASE + 1, model: 'm', provider: 'openai', input: 500, output: 0 }), // 0.5 nano -> 1
      call({ traceId: tid, at: BASE + 2, model: 'm', provider: 'openai', input: 499, output: 0 }), // 0.499 nano -> 0
      call({ traceId: tid, at: BASE + 3, model: 'm', provider: 'azure', input: 10, output: 5 }),
      call({ traceId: tid, at: BASE + 4, model: 'm', input: 0, output: 3 }), // no provider: the any-provider price
      call({ traceId: tid, at: BASE + 5, model: 'unpriced', cost: 4242 }), // reported: no price, no tokens needed
      call({ traceId: tid, at: BASE + 6, model: 'm', provider: 'openai', input: 1000, output: 1000, cost: 7 }), // reported wins
      call({ traceId: tid, at: BASE + 7, op: 'embeddings', model: 'm', provider: 'openai', input: 2000 }), // input only
    ]);
    const { calls } = await p.calls();
    expect(calls.map((c) => [c.input_tokens, c.output_tokens, c.cost_nanos])).toEqual([
      [2000, undefined, 2],
      [1000, 1000, 7],
      [undefined, undefined, 4242],
      [0, 3, 3000],
      [10, 5, 30_000],
      [499, 0, 0],
      [500, 0, 1],
    ]);
    // The usage sums the rounded call costs (not a rounding of summed tokens).
    const { groups, totals } = await p.usage();
    expect(groups).toEqual([
      { provider: 'openai', model: 'm', model_calls: 4, input_tokens: 3999, output_tokens: 1000, calls_without_usage: 0, cost_nanos: 1 + 0 + 7 + 2 },
      { model: 'm', model_calls: 1, input_tokens: 0, output_tokens: 3, calls_without_usage: 0, cost_nanos: 3000 },
      { model: 'unpriced', model_calls: 1, input_tokens: 0, output_tokens: 0, calls_without_usage: 1, cost_nanos: 4242 },
      { provider: 'azure', model: 'm', model_calls: 1, input_tokens: 10, output_tokens: 5, calls_without_usage: 0, cost_nanos: 30_000 },
    ]);
    expect(totals).toEqual({ model_calls: 7, input_tokens: 4009, output_tokens: 1008, calls_without_usage: 1, cost_nanos: 10 + 3000 + 4242 + 30_000 });
  });

  it('missing_usage and unpriced_model, per call and per group (missing_usage wins); a price set later prices stored calls', async () => {
    const p = await project();
    const tid = traceId();
    await p.send([
      call({ traceId: tid, at: BASE + 1, model: 'a', provider: 'x' }), // no usage
      call({ traceId: tid, at: BASE + 2, model: 'a', provider: 'x', input: 10, output: 1 }), // no price
      call({ traceId: tid, at: BASE + 3, model: 'b', provider: 'x', input: 10, output: 1 }), // no price
      call({ traceId: tid, at: BASE + 4, provider: 'x', input: 10, output: 1 }), // no model
    ]);
    const before = await p.calls();
    expect(before.calls.map((c) => [c.model, c.cost_nanos, c.cost_unavailable_reason])).toEqual([
      [undefined, undefined, 'unpriced_model'],
      ['b', undefined, 'unpriced_model'],
      ['a', undefined, 'unpriced_model'],
      ['a', undefined, 'missing_usage'],
    ]);
    const u = await p.usage();
    expect(u.groups.map((g) => [g.model, g.cost_nanos, g.cost_unavailable_reason, g.calls_without_usage])).toEqual([
      ['a', undefined, 'missing_usage', 1],
      [undefined, undefined, 'unpriced_model', 0],
      ['b', undefined, 'unpriced_model', 0],
    ]);
    expect(u.totals).toMatchObject({ model_calls: 4, calls_without_usage: 1, cost_unavailable_reason: 'missing_usage' });
    expect(u.totals.cost_nanos).toBeUndefined();

    await p.price('a', 1, 1);
    await p.price('b', 1, 1);
    const after = await p.usage();
    expect(after.groups.map((g) => [g.model, g.cost_nanos, g.cost_unavailable_reason])).toEqual([
      ['a', undefined, 'missing_usage'],
      [undefined, undefined, 'unpriced_model'],
      ['b', 11_000, undefined],
    ]);
  });
});

it('a span sent twice (a retried export, or repeated in one request) is one call', async () => {
  const once = await project();
  const twice = await project();
  const tid = traceId();
  const spans = [0, 1, 2].map((i) => call({ traceId: tid, spanId: sid(i), at: BASE + i, model: 'dup', input: 10, output: 10, cost: 5 }));
  await once.send(spans);
  await twice.send([...spans, spans[0]]);
  await twice.send(spans.slice(1));
  expect(await twice.calls()).toEqual(await once.calls());
  const sums = async (p: typeof once) => {
    const { groups, totals } = await p.usage();
    return { groups, totals };
  };
  expect(await sums(twice)).toEqual(await sums(once));
  expect((await sums(once)).totals).toMatchObject({ model_calls: 3, input_tokens: 30, cost_nanos: 15 });
});

describe('what a model call is: the same rule as the run reads (docs/agent-model.md "Model calls")', () => {
  it('"a step whose tokens were read is a model call"; a parent reporting the totals of calls below it is not, however deep', async () => {
    const p = await project();
    const [t1, t2] = [traceId(), traceId()];
    await p.send([
      // An agent total over a token-less workflow over the call: one call.
      call({ traceId: t1, spanId: sid(1), at: BASE, op: 'invoke_agent', model: 'gpt-x', input: 20, output: 2 }),
      call({ traceId: t1, spanId: sid(2), parentSpanId: sid(1), at: BASE + 1, op: 'invoke_workflow' }),
      call({ traceId: t1, spanId: sid(3), parentSpanId: sid(2), at: BASE + 2, model: 'gpt-x', input: 20, output: 2 }),
      // A span of no known operation that reports tokens, alone in its trace: a call.
      call({ traceId: t2, spanId: sid(1), at: BASE + 3, op: 'llm.completion', model: 'gpt-x', input: 5, output: 1 }),
    ]);
    const { calls } = await p.calls();
    expect(calls.map((c: Call) => [c.trace_id, c.span_id, c.canonical_operation])).toEqual([
      [t2, sid(1), 'CANONICAL_OPERATION_UNKNOWN'],
      [t1, sid(3), 'CANONICAL_OPERATION_CHAT'],
    ]);
    expect((await p.usage()).totals).toMatchObject({ model_calls: 2, input_tokens: 25, output_tokens: 3 });
  });
});

describe('projects', () => {
  it("another project's calls are never seen; naming it is 403 for a project key and 404 from another organization, as a missing project", async () => {
    const a = await project();
    const b = await project();
    await a.send([call({ traceId: traceId(), at: BASE, model: 'secret-model', input: 1, output: 1 })]);
    expect((await b.calls()).calls).toEqual([]);
    expect((await b.usage()).totals.model_calls).toBe(0);
    for (const path of ['/llm/calls', '/llm/usage']) {
      const named = await b.get(path, `project_id=${a.projectId}`);
      expect(named.statusCode).toBe(403);
      expect(named.json().error).toBe('permission_denied');
      const other = await secondOrganization(t);
      const foreign = await b.get(path, `project_id=${a.projectId}`, other.ownerKey);
      const missing = await b.get(path, 'project_id=00000000-0000-0000-0000-000000000000', other.ownerKey);
      expect([foreign.statusCode, missing.statusCode]).toEqual([404, 404]);
      expect(foreign.json()).toEqual(missing.json());
      expect(foreign.body).not.toContain('secret-model');
      // An organization-level credential names the project, and then sees its calls.
      expect((await b.get(path, '', t.ownerKey)).statusCode).toBe(400);
      const owner = await b.get(path, `project_id=${a.projectId}`, t.ownerKey);
      expect(owner.statusCode).toBe(200);
      expect(owner.body).toContain('secret-model');
    }
  });

  it('a key without llm:read gets 403 naming the scope, on both reads', async () => {
    const p = await project(['ingest:write', 'agents:read', 'traces:read', 'llm:write']);
    for (const path of ['/llm/calls', '/llm/usage']) {
      const r = await p.get(path);
      expect(r.statusCode).toBe(403);
      expect(r.json()).toMatchObject({ error: 'permission_denied', message: expect.stringContaining('llm:read') });
    }
  });
});

it('pages with limit and cursor: newest first (start, then span id), no duplicates, no gaps; a cursor continues only its query', async () => {
  const p = await project();
  const tids = [traceId(), traceId()];
  const spans: Obj[] = [];
  // 9 calls: three start at the same instant, two of them in different traces.
  for (let i = 0; i < 9; i++) spans.push(call({ traceId: tids[i % 2], spanId: sid(i), at: BASE + (i < 3 ? 0 : i * 10), model: i % 3 ? 'm1' : 'm2', input: i, output: 1 }));
  // The same span id in two traces at the same instant: two calls.
  spans.push(call({ traceId: tids[1], spanId: sid(0), at: BASE, model: 'm1', input: 1, output: 1 }));
  await p.send(spans);
  const whole = (await p.calls('limit=200')).calls;
  expect(whole).toHaveLength(10);
  const key = (c: Call) => [c.started_at as string, c.span_id, c.trace_id].join('|');
  // Newest first, then span id descending, then trace id descending.
  const expected = [...whole].sort((x, y) => (key(x) < key(y) ? 1 : -1));
  expect(whole).toEqual(expected);
  for (const limit of [1, 2, 3, 7]) expect(await allPages(p, '', limit)).toEqual(whole);
  // With a filter too.
  expect(await allPages(p, 'model=m2', 1)).toEqual(whole.filter((c) => c.model === 'm2'));

  const first = await p.calls('limit=2');
  expect(first.next_cursor).not.toBeNull();
  const other = await p.get('/llm/calls', `limit=2&model=m1&cursor=${first.next_cursor}`);
  expect(other.statusCode).toBe(400);
  expect(other.json().message).toContain('another query');
  // The default window and an explicit duration are different queries.
  expect((await p.get('/llm/calls', `limit=2&since=2d&cursor=${first.next_cursor}`)).statusCode).toBe(400);
  const withSince = await p.calls('limit=2&since=2d');
  expect((await p.calls(`limit=2&since=2d&cursor=${withSince.next_cursor}`)).calls).toEqual(whole.slice(2, 4));
});

it('filters: model, provider, service_name (exact), and the window on the start (closed; default the 24 hours ending now)', async () => {
  const p = await project();
  const tid = traceId();
  await p.send([
    call({ traceId: tid, at: BASE, model: 'gpt', provider: 'openai', input: 1, output: 1 }),
    call({ traceId: tid, at: BASE + 1000, model: 'gpt', provider: 'azure', input: 1, output: 1 }),
    call({ traceId: tid, at: BASE + 2000, model: 'GPT', provider: 'openai', input: 1, output: 1 }),
  ]);
  await p.send([call({ traceId: traceId(), at: BASE + 3000, model: 'gpt', provider: 'openai', input: 1, output: 1 })], { 'service.name': 'svc-b' });
  // 30 hours ago: outside the default window.
  await p.send([call({ traceId: traceId(), at: BASE - 29 * 3_600_000, model: 'old', input: 1, output: 1 })]);

  const at = async (q: string) => (await p.calls(q)).calls.map((c) => c.started_at);
  expect(await at('model=gpt')).toEqual([iso(BASE + 3000), iso(BASE + 1000), iso(BASE)]);
  expect(await at('model=gpt&provider=openai')).toEqual([iso(BASE + 3000), iso(BASE)]);
  expect(await at('service_name=svc-b')).toEqual([iso(BASE + 3000)]);
  expect(await at('service_name=svc-a&provider=openai')).toEqual([iso(BASE + 2000), iso(BASE)]);
  expect(await at('model=gp')).toEqual([]);
  // Closed at both ends.
  expect(await at(`since=${iso(BASE + 1000)}&until=${iso(BASE + 2000)}`)).toEqual([iso(BASE + 2000), iso(BASE + 1000)]);
  expect(await at(`until=${iso(BASE)}`)).toEqual([iso(BASE)]);
  // The default window leaves the old call out; a wider one finds it.
  expect((await p.calls()).calls.map((c) => c.model)).not.toContain('old');
  expect((await p.calls('since=2d')).calls.map((c) => c.model)).toContain('old');
  const u = await p.usage();
  expect(Date.parse(u.until) - Date.parse(u.since)).toBe(24 * 3_600_000);
  expect(u.totals.model_calls).toBe(4);
  expect((await p.usage('since=2d')).totals.model_calls).toBe(5);
  expect((await p.usage('model=gpt&provider=openai&service_name=svc-a')).groups).toEqual([
    { provider: 'openai', model: 'gpt', model_calls: 1, input_tokens: 1, output_tokens: 1, calls_without_usage: 0, cost_unavailable_reason: 'unpriced_model' },
  ]);
});

it('the usage sums equal the sums over the listed calls, group by group; groups by calls desc, then provider, then model', async () => {
  const p = await project();
  await p.price('m1', 1.5, 3);
  await p.price('m2', 0.25, 0.5, 'p2');
  const spans: Obj[] = [];
  const models = [['p1', 'm1'], ['p2', 'm2'], ['p1', 'm2'], [undefined, 'm1'], ['p2', 'm1']] as const;
  for (let i = 0; i < 40; i++) {
    const [provider, model] = models[(i * 7) % 5 > 2 ? i % 2 : i % 5];
    spans.push(call({ traceId: traceId(), at: BASE + i * 17, provider, model, input: i % 6 === 0 ? undefined : 13 * i, output: i % 4 === 0 ? undefined : 7 * i, op: i % 9 === 0 ? 'text_completion' : 'chat' }));
  }
  await p.send(spans);
  const calls = await allPages(p, '', 9);
  expect(calls).toHaveLength(40);
  const { groups, totals, truncated } = await p.usage();
  expect(truncated).toBe(false);
  const sumOf = (cs: Call[]) => ({
    model_calls: cs.length,
    input_tokens: cs.reduce((a, c) => a + (c.input_tokens ?? 0), 0),
    output_tokens: cs.reduce((a, c) => a + (c.output_tokens ?? 0), 0),
    calls_without_usage: cs.filter((c) => c.input_tokens === undefined && c.output_tokens === undefined).length,
    ...(cs.every((c) => c.cost_nanos !== undefined) ? { cost_nanos: cs.reduce((a, c) => a + c.cost_nanos!, 0) } : {}),
  });
  for (const g of groups) {
    const mine = calls.filter((c) => c.provider === g.provider && c.model === g.model);
    const { cost_unavailable_reason, ...rest } = g as Group & { cost_unavailable_reason?: string };
    expect(rest).toEqual({ ...(g.provider ? { provider: g.provider } : {}), model: g.model, ...sumOf(mine) });
    if (cost_unavailable_reason) expect(mine.map((c) => c.cost_unavailable_reason)).toContain(cost_unavailable_reason);
  }
  expect(groups.reduce((a, g) => a + g.model_calls, 0)).toBe(40);
  const { cost_unavailable_reason: _r, ...totalSums } = totals as typeof totals & { cost_unavailable_reason?: string };
  expect(totalSums).toEqual(sumOf(calls));
  const order = groups.map((g) => [g.model_calls, g.provider ?? '', g.model ?? '']);
  expect(order).toEqual([...order].sort((x, y) => (y[0] as number) - (x[0] as number) || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : x[2] < y[2] ? -1 : 1)));
});

it(`more than ${MAX_USAGE_GROUPS} groups: truncated, and the totals still cover every call`, async () => {
  const p = await project();
  const tid = traceId();
  await p.send(Array.from({ length: MAX_USAGE_GROUPS + 1 }, (_, i) => call({ traceId: tid, at: BASE + i, model: `model-${i}`, cost: 1 })));
  const u = await p.usage();
  expect(u.truncated).toBe(true);
  expect(u.groups).toHaveLength(MAX_USAGE_GROUPS);
  expect(u.totals).toMatchObject({ model_calls: MAX_USAGE_GROUPS + 1, cost_nanos: MAX_USAGE_GROUPS + 1 });
  const empty = await (await project()).usage();
  expect(empty).toMatchObject({ groups: [], truncated: false, totals: { model_calls: 0, input_tokens: 0, output_tokens: 0, calls_without_usage: 0, cost_nanos: 0 } });
});

describe('bad input, as an attacker writes it: always 4xx in the error shape, never 5xx', () => {
  const huge = 'x'.repeat(100_000);
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const shared = [
    'since=yesterday',
    'since=-1h',
    'since=0s',
    'since=1.5h',
    'since=2024-02-30T00:00:00Z',
    'until=99999999999d',
    `since=${huge}`,
    'since=2024-06-02T00:00:00Z&until=2024-06-01T00:00:00Z',
    'since=1h&until=2h',
    'since=1h&since=2h',
    'model=a&model=b',
    'provider=a&provider=b',
    'service_name=a&service_name=b',
    'project_id=x&project_id=y',
    'model=',
    'provider=',
    'service_name=',
    `model=${huge}`,
    `provider=${huge}`,
    `service_name=${huge}`,
    'foo=1',
    'attr=gen_ai.prompt=x',
    'status=error',
    'model=%zz',
    'model=a;provider=b',
  ];
  const listOnly = [
    'limit=0',
    'limit=201',
    'limit=abc',
    'limit=-1',
    'limit=1.5',
    'limit=4294967296',
    'limit=1&limit=2',
    'cursor=a&cursor=b',
    'cursor=nope!',
    `cursor=${huge}`,
    `cursor=${b64([1, 'x'])}`,
    `cursor=${b64([1, 2])}`,
    `cursor=${b64({ k: 1 })}`,
    `cursor=${b64(['1', 'abc.0000000000000001:' + 'a'.repeat(32)])}`,
  ];
  let p: Awaited<ReturnType<typeof project>>;
  beforeAll(async () => {
    p = await project();
    await p.send([call({ traceId: traceId(), at: BASE, model: 'm', input: 1, output: 1 })]);
  });
  const refused = async (path: string, q: string) => {
    const r = await p.get(path, q);
    expect(r.statusCode, `${path}?${q.slice(0, 80)}: ${r.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
    expect(r.statusCode).toBeLessThan(500);
    expect(r.json()).toEqual({ error: expect.any(String), message: expect.any(String) });
    return r;
  };

  const named = (qs: string[]) => qs.map((q) => [q.length > 80 ? `${q.slice(0, 40)}... (${q.length} characters)` : q, q]);
  it.each(named(shared))('/llm/calls?%s', async (_name, q) => void (await refused('/llm/calls', q)));
  it.each(named(shared))('/llm/usage?%s', async (_name, q) => void (await refused('/llm/usage', q)));
  it.each(named(listOnly))('/llm/calls?%s', async (_name, q) => void (await refused('/llm/calls', q)));
  it.each(['limit=10', 'cursor=abc'])('/llm/usage takes no %s', async (q) => void (await refused('/llm/usage', q)));

  it('the messages say what is wrong', async () => {
    expect((await refused('/llm/calls', 'since=2024-06-02T00:00:00Z&until=2024-06-01T00:00:00Z')).json().message).toBe('since must not be after until');
    expect((await refused('/llm/calls', 'limit=201')).json().message).toBe('limit must be between 1 and 200');
    expect((await refused('/llm/calls', 'cursor=nope!')).json().message).toBe('cursor is malformed or expired');
    // A cursor of this very query with a forged position.
    const page = await project();
    await page.send([0, 1].map((i) => call({ traceId: traceId(), at: BASE + i, model: 'm' })));
    const next = (await page.calls('limit=1')).next_cursor!;
    const [k, id] = JSON.parse(Buffer.from(next, 'base64url').toString()) as [number, string];
    const forged = (pos: unknown[]) => page.get('/llm/calls', `limit=1&cursor=${b64(pos)}`);
    for (const bad of [[k, id.replace(/:.*/, ':zz')], ['now', id], [k + 0.5, id], [k, `${id.split('.')[0]}.`]]) {
      const r = await forged(bad);
      expect(r.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await forged([k, id])).statusCode).toBe(200);
  });
});
