/**
 * Issue 4 "Tests": real clients read back through the HTTP API. The official OpenTelemetry JS trace SDK
 * with its OTLP/HTTP exporters (protobuf with gzip, and JSON) sends the agent run of
 * testing/otel-agent-run.ts to the server listening on a port; the run, its graph, its agent events, its
 * session and the agent identity are read back over HTTP and compared exactly with what the SDK recorded
 * (span ids, times) and what docs/agent-model.md derives. The logs SDK (both exporters) sends records that
 * are read back through `GET /api/v1/logs`. (The stored rows of the same run: traces-otel-sdk.test.ts.)
 */
import { context, trace, type SpanContext } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { hrMicros, isoFromMicros, readable, sendAgentRun, sendLogs, type AgentRunSpans } from '../../testing/otel-agent-run.js';

// The clock stamps ingest (the identity's first/last seen) and price changes; each test sets it to "now"
// before sending so the stamps are known exactly. Span and log times come from the SDK.
const clock = fixedClock(new Date().toISOString());
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp({ clock });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
});

async function get(path: string, key: string) {
  const res = await fetch(`${base}/api/v1${path}`, { headers: { 'x-svc-api-key': key } });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function putPrice(key: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}/api/v1/llm/pricing`, { method: 'PUT', headers: { 'x-svc-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** Sets the clock to the present (millisecond precision) and answers it as the API writes it. */
function nowStamp(): string {
  const ms = Date.now();
  clock.set(new Date(ms).toISOString());
  return isoFromMicros(ms * 1000);
}

const ids = (s: AgentRunSpans) => ({
  traceId: s.root.spanContext().traceId,
  root: s.root.spanContext().spanId,
  chat: s.chat.spanContext().spanId,
  tool: s.tool.spanContext().spanId,
  failed: s.failed.spanContext().spanId,
  retrieval: s.retrieval.spanContext().spanId,
  memory: s.memory.spanContext().spanId,
});

/** start, end and duration of a span as the API answers them, from the SDK's own hrtime. */
function timesOf(span: AgentRunSpans[keyof AgentRunSpans]) {
  const r = readable(span);
  const startUs = hrMicros(r.startTime);
  const endUs = hrMicros(r.endTime);
  return { started_at: isoFromMicros(startUs), ended_at: isoFromMicros(endUs), duration_ms: (endUs - startUs) / 1000 };
}

/** The run view (docs/agent-model.md "Run"); `cost` is its cost member(s). */
function expectedRun(s: AgentRunSpans, name: string, cost: Record<string, unknown>) {
  const i = ids(s);
  return {
    run_id: i.traceId,
    root_step_id: i.root,
    agent_name: 'support',
    agent_id: name,
    observation_key: name,
    service_name: name,
    environment: 'test',
    session_key: 'conv-42',
    turn_id: 'turn-1',
    status: 'completed',
    terminal_reason: 'answered',
    ...timesOf(s.root),
    // the root is not a step; the failed tool (gen_ai.response.status=failed) is the one error step
    step_count: 6,
    error_steps: 1,
    tool_calls: 2,
    model_calls: 1,
    ...cost,
    // the failed tool is marked svc.safety.check and has an outcome
    safety_error_steps: 1,
  };
}

/**
 * Every step of the graph, by start then step id (the SDK stamps a span's start from Date.now(), to the
 * millisecond, so spans started within one millisecond tie and go by id).
 */
function expectedSteps(s: AgentRunSpans, name: string, chatCost: Record<string, unknown>) {
  const i = ids(s);
  const step = (span: AgentRunSpans[keyof AgentRunSpans], fields: Record<string, unknown>) => ({
    step_id: span.spanContext().spanId,
    ...(span === s.root ? {} : { parent_step_id: i.root }),
    ...timesOf(span),
    // the SDK's own span status (0 unset, 1 ok, 2 error), shown beside the outcome and never read as it
    span_status: ['unset', 'ok', 'error'][readable(span).status.code],
    ...(readable(span).status.message ? { span_status_message: readable(span).status.message } : {}),
    instrumented: false,
    ...fields,
  });
  const steps = [
    step(s.root, {
      name: 'invoke_agent support',
      canonical_operation: 'CANONICAL_OPERATION_INVOKE_AGENT',
      // no gen_ai.response.status: no outcome (svc.agent.run.status is the run's, not the step's)
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support', 'gen_ai.agent.id': name },
    }),
    step(s.chat, {
      name: 'chat gpt-4o',
      canonical_operation: 'CANONICAL_OPERATION_CHAT',
      outcome: 'OUTCOME_OK',
      model: 'gpt-4o-2024-08-06',
      provider: 'openai',
      input_tokens: 1200,
      output_tokens: 350,
      ...chatCost,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.response.status': 'completed',
      },
      // the only step with an (accepted) context event
      instrumented: true,
    }),
    step(s.tool, {
      name: 'execute_tool search',
      canonical_operation: 'CANONICAL_OPERATION_EXECUTE_TOOL',
      outcome: 'OUTCOME_OK',
      tool_name: 'search',
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.id': 'call-1', 'gen_ai.response.status': 'completed' },
    }),
    step(s.failed, {
      name: 'execute_tool send_email',
      canonical_operation: 'CANONICAL_OPERATION_EXECUTE_TOOL',
      outcome: 'OUTCOME_ERROR',
      tool_name: 'send_email',
      safety_check: true,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'send_email', 'gen_ai.response.status': 'failed' },
    }),
    // span status ERROR but no stated gen_ai.response.status: the outcome stays unset ("the span status is never used")
    step(s.retrieval, {
      name: 'retrieval kb',
      canonical_operation: 'CANONICAL_OPERATION_RETRIEVAL',
      attributes: { 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': 'kb-main' },
    }),
    step(s.memory, {
      name: 'upsert_memory',
      canonical_operation: 'CANONICAL_OPERATION_UPSERT_MEMORY',
      attributes: { 'gen_ai.operation.name': 'upsert_memory', 'gen_ai.data_source.id': 'mem-store' },
      memory: { item_id: 'item-9', store: 'mem-store', provenance: 'tool_output', declared_trust_label: 'MEMORY_TRUST_LABEL_SUSPECT' },
    }),
  ];
  const key = (x: { started_at: string; step_id: string }) => `${x.started_at} ${x.step_id}`;
  return steps.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

const COUNTS = {
  steps: 6,
  by_canonical_operation: {
    CANONICAL_OPERATION_INVOKE_AGENT: 1,
    CANONICAL_OPERATION_CHAT: 1,
    CANONICAL_OPERATION_EXECUTE_TOOL: 2,
    CANONICAL_OPERATION_RETRIEVAL: 1,
    CANONICAL_OPERATION_UPSERT_MEMORY: 1,
  },
  by_outcome: { OUTCOME_OK: 2, OUTCOME_ERROR: 1, OUTCOME_CANCELLED: 0, unset: 3 },
  tool_calls: 2,
  model_calls: 1,
  error_steps: 1,
  memory_ops: 1,
  instrumented_steps: 1,
};

/**
 * The agent events of the run: the context assembly of the chat and the retry of the failed tool. The SDK
 * times an event as its span's start (Date.now(), whole milliseconds) plus the time elapsed since, so the
 * later event may carry the earlier time: `newestFirst` orders them as the API does, by the times sent.
 */
function expectedEvents(s: AgentRunSpans, name: string) {
  const i = ids(s);
  const common = { run_id: i.traceId, session_key: 'conv-42', turn_id: 'turn-1', observation_key: name };
  const at = (span: AgentRunSpans[keyof AgentRunSpans]) => isoFromMicros(hrMicros(readable(span).events[0].time));
  const contextEvent = {
    event_id: `${i.chat}:0`,
    span_id: i.chat,
    ...common,
    canonical_operation: 'CANONICAL_OPERATION_CHAT',
    category: 'context',
    name: 'context.assembly',
    occurred_at: at(s.chat),
    context: {
      kind: 'assembly',
      assembly: {
        budget_tokens: 8000,
        // a measured zero is returned as zero
        assembled_tokens: 0,
        overflow: false,
        sources: [
          { id: 'doc-7', kind: 'document', tokens: 900 },
          { id: 'mem-1', kind: 'memory', tokens: 300 },
        ],
      },
    },
  };
  const retryEvent = {
    event_id: `${i.failed}:0`,
    span_id: i.failed,
    ...common,
    canonical_operation: 'CANONICAL_OPERATION_EXECUTE_TOOL',
    category: 'tool',
    name: 'tool.retry',
    occurred_at: at(s.failed),
  };
  const newestFirst = [contextEvent, retryEvent].sort((a, b) =>
    a.occurred_at !== b.occurred_at ? (a.occurred_at < b.occurred_at ? 1 : -1) : a.span_id < b.span_id ? 1 : -1,
  );
  return { contextEvent, retryEvent, newestFirst };
}

// Prices (USD per million tokens) and the chat step's cost computed by hand:
//   input  1200 tokens × 2.5       USD/M = 1200 × 2,500      nanos = 3,000,000     nanos
//   output  350 tokens × 10.123457 USD/M =  350 × 10,123.457 nanos = 3,543,209.95  nanos
//   total 6,543,209.95 nanos, rounded once, half up: 6,543,210 nanos
const INPUT_USD_PER_M = 2.5;
const OUTPUT_USD_PER_M = 10.123457;
const CHAT_COST_NANOS = 6_543_210;

describe('an agent run sent by the OpenTelemetry JS trace SDK, read back through the API', () => {
  for (const format of ['protobuf', 'json'] as const) {
    it(`${format} exporter: run, graph, events, session and identity exactly; a price set afterwards prices the run`, async () => {
      const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'llm:write'], `reads-${format}`);
      const name = `agent-${format}`;
      const ingestedAt = nowStamp();
      const s = await sendAgentRun({ base, format, key: p.key, retrievalSpanError: true });
      expect(readable(s.retrieval).status).toEqual({ code: 2, message: 'index offline' });
      const i = ids(s);

      // ---- GET /agent-runs/{id}: a chat step with tokens and no price -> unpriced_model
      const unpriced = { cost_unavailable_reason: 'unpriced_model' };
      expect(await get(`/agent-runs/${i.traceId}`, p.key)).toEqual(expectedRun(s, name, unpriced));
      // upper-case hex reads the same run
      expect((await get(`/agent-runs/${i.traceId.toUpperCase()}`, p.key)).run_id).toBe(i.traceId);
      expect(await get('/agent-runs', p.key)).toEqual({ runs: [expectedRun(s, name, unpriced)], next_cursor: null });

      // ---- GET /agent-runs/{id}/graph
      const graph = await get(`/agent-runs/${i.traceId}/graph`, p.key);
      expect(graph).toEqual({
        run: expectedRun(s, name, unpriced),
        steps: expectedSteps(s, name, unpriced),
        counts: COUNTS,
        action_receipts: [],
      });

      // ---- GET /agent-events?run_id=: typed context detail, never the raw attribute map
      const { contextEvent, newestFirst } = expectedEvents(s, name);
      const events = await get(`/agent-events?run_id=${i.traceId}`, p.key);
      expect(events).toEqual({ events: newestFirst, next_cursor: null });
      const raw = JSON.stringify(events);
      for (const leaked of ['svc.context', 'source_ids', 'attempt', 'attributes']) expect(raw).not.toContain(leaked);
      expect(await get(`/agent-events?run_id=${i.traceId}&category=context`, p.key)).toEqual({ events: [contextEvent], next_cursor: null });
      expect(await get(`/agent-events?run_id=${i.traceId}&context_source_id=mem-1`, p.key)).toEqual({ events: [contextEvent], next_cursor: null });
      expect(await get(`/agent-events?run_id=${i.traceId}&context_source_id=doc-8`, p.key)).toEqual({ events: [], next_cursor: null });

      // ---- GET /agent-sessions/{conversation id}
      const session = { session_key: 'conv-42', run_count: 1, turn_count: 1, ...timesOf(s.root) };
      expect(await get('/agent-sessions/conv-42', p.key)).toEqual({ ...session, cost_unavailable_reason: 'run_cost_unavailable' });

      // ---- GET /agent-identities: one sighting of the root by the API key that sent it, stamped at ingest
      const identity = {
        observation_key: name,
        availability: 'answered',
        credentials: [{ source: 'api_key', api_key_id: p.keyId, first_seen: ingestedAt, last_seen: ingestedAt, sighting_count: 1 }],
        first_seen: ingestedAt,
        last_seen: ingestedAt,
        sighting_count: 1,
      };
      expect(await get('/agent-identities', p.key)).toEqual({ identities: [identity], next_cursor: null });
      expect(await get(`/agent-identities/${name}`, p.key)).toEqual(identity);

      // ---- a price for the REQUEST model does not apply: the response model is priced
      await putPrice(p.key, { model: 'gpt-4o', provider: 'openai', input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 1 });
      expect((await get(`/agent-runs/${i.traceId}`, p.key)).cost_unavailable_reason).toBe('unpriced_model');

      // ---- PUT /llm/pricing for the response model: the stored run is priced when read
      await putPrice(p.key, { model: 'gpt-4o-2024-08-06', provider: 'openai', input_usd_per_million_tokens: INPUT_USD_PER_M, output_usd_per_million_tokens: OUTPUT_USD_PER_M });
      const priced = { cost_nanos: CHAT_COST_NANOS };
      expect(await get(`/agent-runs/${i.traceId}`, p.key)).toEqual(expectedRun(s, name, priced));
      expect(await get(`/agent-runs/${i.traceId}/graph`, p.key)).toEqual({
        run: expectedRun(s, name, priced),
        steps: expectedSteps(s, name, priced),
        counts: COUNTS,
        action_receipts: [],
      });
      expect(await get('/agent-sessions/conv-42', p.key)).toEqual({ ...session, cost_nanos: CHAT_COST_NANOS });
    });
  }

  it('a reported svc.cost.nanos is the step cost, with or without a price', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'llm:write'], 'reads-reported-cost');
    const name = 'agent-reported';
    const s = await sendAgentRun({ base, format: 'protobuf', key: p.key, agentId: name, serviceName: name, chatCostNanos: 4242 });
    const i = ids(s);
    const reported = { cost_nanos: 4242 };
    expect(await get(`/agent-runs/${i.traceId}`, p.key)).toEqual(expectedRun(s, name, reported));
    const graph = await get(`/agent-runs/${i.traceId}/graph`, p.key);
    // the retrieval span ended without an error status this time; nothing else changes
    expect(graph).toEqual({ run: expectedRun(s, name, reported), steps: expectedSteps(s, name, reported), counts: COUNTS, action_receipts: [] });
    expect(await get('/agent-sessions/conv-42', p.key)).toEqual({ session_key: 'conv-42', run_count: 1, turn_count: 1, ...timesOf(s.root), cost_nanos: 4242 });

    // a price never overrides a reported cost
    await putPrice(p.key, { model: 'gpt-4o-2024-08-06', input_usd_per_million_tokens: INPUT_USD_PER_M, output_usd_per_million_tokens: OUTPUT_USD_PER_M });
    expect((await get(`/agent-runs/${i.traceId}`, p.key)).cost_nanos).toBe(4242);
  });
});

describe('log records sent by the OpenTelemetry JS logs SDK, read back through GET /api/v1/logs', () => {
  for (const format of ['protobuf', 'json'] as const) {
    it(`${format} exporter (@opentelemetry/exporter-logs-otlp-${format === 'protobuf' ? 'proto' : 'http'}): every field exactly; trace_id and severity filters`, async () => {
      const p = await projectWithKey(t, ['ingest:write', 'logs:read'], `reads-logs-${format}`);
      // Record times with sub-microsecond digits (the API answers microseconds, truncated).
      const sec = Math.floor(Date.now() / 1000) - 60;
      const hr = (ms: number): [number, number] => [sec, ms * 1_000_000 + 123_789];
      const span: SpanContext = await sendLogs({ base, format, key: p.key }, (logger, tracer) => {
        logger.emit({ timestamp: hr(1), observedTimestamp: hr(101), severityNumber: SeverityNumber.WARN, severityText: 'WARN', body: 'disk almost full', attributes: { 'disk.free_mb': 120, 'disk.mount': '/var' } });
        const active = tracer.startSpan('handle request');
        // inside the active span: the SDK takes the trace and span ids from the active context
        context.with(trace.setSpan(context.active(), active), () =>
          logger.emit({ timestamp: hr(2), observedTimestamp: hr(102), severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'tool call started', attributes: { 'tool.name': 'search' } }),
        );
        active.end();
        logger.emit({
          timestamp: hr(3),
          observedTimestamp: hr(103),
          severityNumber: SeverityNumber.ERROR,
          severityText: 'ERROR',
          body: { code: 'E42', retry: true, attempts: [1, 2] },
          attributes: { 'http.status_code': 503, ok: false },
        });
        // no severity number: the text is read ("Warning" -> warn)
        logger.emit({ timestamp: hr(4), observedTimestamp: hr(104), severityText: 'Warning', body: 'slow response' });
        return active.spanContext();
      });
      const at = (ms: number) => `${new Date(sec * 1000 + ms).toISOString().slice(0, -1)}123Z`;
      const common = {
        log_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        service_name: `logs-${format}`,
        environment: 'test',
        scope_name: 'svc-logger',
        resource_attributes: { 'service.name': `logs-${format}`, 'deployment.environment.name': 'test' },
      };
      const warn = {
        ...common,
        timestamp: at(1),
        observed_at: at(101),
        severity: 'warn',
        severity_number: 13,
        severity_text: 'WARN',
        body: 'disk almost full',
        attributes: { 'disk.free_mb': 120, 'disk.mount': '/var' },
      };
      const inSpan = {
        ...common,
        timestamp: at(2),
        observed_at: at(102),
        severity: 'info',
        severity_number: 9,
        severity_text: 'INFO',
        body: 'tool call started',
        trace_id: span.traceId,
        span_id: span.spanId,
        attributes: { 'tool.name': 'search' },
      };
      const error = {
        ...common,
        timestamp: at(3),
        observed_at: at(103),
        severity: 'error',
        severity_number: 17,
        severity_text: 'ERROR',
        // a non-string body is answered as JSON text
        body: '{"code":"E42","retry":true,"attempts":[1,2]}',
        attributes: { 'http.status_code': 503, ok: false },
      };
      const textOnly = { ...common, timestamp: at(4), observed_at: at(104), severity: 'warn', severity_text: 'Warning', body: 'slow response', attributes: {} };

      const window = `since=${encodeURIComponent(at(0))}&until=${encodeURIComponent(at(5))}`;
      expect(await get(`/logs?${window}&sort=timestamp_asc`, p.key)).toEqual({ logs: [warn, inSpan, error, textOnly], next_cursor: null });
      expect(await get(`/logs?${window}`, p.key)).toEqual({ logs: [textOnly, error, inSpan, warn], next_cursor: null });
      expect(await get(`/logs?${window}&trace_id=${span.traceId}`, p.key)).toEqual({ logs: [inSpan], next_cursor: null });
      expect(await get(`/logs?${window}&trace_id=${span.traceId.toUpperCase()}`, p.key)).toEqual({ logs: [inSpan], next_cursor: null });
      expect(await get(`/logs?${window}&severity=warn&sort=timestamp_asc`, p.key)).toEqual({ logs: [warn, error, textOnly], next_cursor: null });
      const page = await get(`/logs?${window}&sort=timestamp_asc&limit=3`, p.key);
      expect(page.logs).toEqual([warn, inSpan, error]);
      expect(await get(`/logs?${window}&sort=timestamp_asc&limit=3&cursor=${encodeURIComponent(page.next_cursor)}`, p.key)).toEqual({ logs: [textOnly], next_cursor: null });
    });
  }
});
