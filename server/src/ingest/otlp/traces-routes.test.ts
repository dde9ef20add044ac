/** POST /v1/traces: encodings, rows as stored (spans, span events), partial success. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { ns, rows } from './test-fixtures.js';
import { decodeSignalResponse, postTraces, span, spanId, traceId, traceRequest } from './traces-fixtures.js';

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
const eventsOf = (p: string) =>
  rows(t, 'SELECT span_id, event_index, ts_us, name, attributes, category, context_kind, context_detail, context_source_ids FROM span_events WHERE project_id = $p ORDER BY span_id, event_index', { p });

describe('POST /v1/traces: encodings and stored rows', () => {
  const tid = '0af7651916cd43dd8448eb211c80319c';
  const root = 'b7ad6b7169203331';
  const child = '00f067aa0ba902b7';
  const req = () =>
    traceRequest({ 'service.name': 'agents', 'deployment.environment.name': 'prod', 'host.name': 'h1' }, [
      span({
        traceId: tid,
        spanId: root,
        name: 'invoke_agent planner',
        kind: 2,
        startMs: T0,
        endMs: T0 + 2500,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'planner',
          'gen_ai.conversation.id': 'conv-1',
          'svc.turn.id': 'turn-1',
          'svc.agent.run.status': 'completed',
          'svc.agent.run.terminal_reason': 'goal_reached',
          count: 3,
          ratio: 0.5,
          tags: ['a', 'b'],
        },
        status: { code: 1 },
      }),
      span({
        traceId: tid,
        spanId: child,
        parentSpanId: root,
        name: 'chat gpt-4o',
        kind: 3,
        startMs: T0 + 100,
        endMs: T0 + 900,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.provider.name': 'openai',
          'gen_ai.usage.input_tokens': 1000,
          'gen_ai.usage.output_tokens': 0,
          'svc.cost.nanos': 2500,
          'gen_ai.response.status': 'completed',
        },
        events: [{ name: 'exception', ms: T0 + 200, attributes: { 'exception.type': 'Retry' } }],
        status: { code: 2, message: 'retried' },
      }),
    ]);

  const expected = [
    {
      trace_id: tid,
      span_id: root,
      parent_span_id: null,
      name: 'invoke_agent planner',
      kind: 'server',
      start_us: String(T0 * 1000),
      end_us: String((T0 + 2500) * 1000),
      status_code: 'ok',
      status_message: null,
      service_name: 'agents',
      environment: 'prod',
      scope_name: 'test-scope',
      attributes: JSON.stringify({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'planner',
        'gen_ai.conversation.id': 'conv-1',
        'svc.turn.id': 'turn-1',
        'svc.agent.run.status': 'completed',
        'svc.agent.run.terminal_reason': 'goal_reached',
        count: 3,
        ratio: 0.5,
        tags: ['a', 'b'],
      }),
      resource_attributes: '{"service.name":"agents","deployment.environment.name":"prod","host.name":"h1"}',
      operation_name: 'invoke_agent',
      canonical_operation: 'CANONICAL_OPERATION_INVOKE_AGENT',
      response_status: null,
      outcome: null,
      agent_name: 'planner',
      agent_id: null,
      observation_key: 'agents/planner',
      session_key: 'conv-1',
      turn_id: 'turn-1',
      run_status: 'completed',
      terminal_reason: 'goal_reached',
      tool_name: null,
      model: null,
      provider: null,
      input_tokens: null,
      output_tokens: null,
      reported_cost_nanos: null,
      safety_check: false,
      memory_item_id: null,
      memory_store: null,
      memory_provenance: null,
      memory_trust_label: null,
      context_events: 0,
    },
    {
      trace_id: tid,
      span_id: child,
      parent_span_id: root,
      name: 'chat gpt-4o',
      kind: 'client',
      start_us: String((T0 + 100) * 1000),
      end_us: String((T0 + 900) * 1000),
      status_code: 'error',
      status_message: 'retried',
      service_name: 'agents',
      environment: 'prod',
      scope_name: 'test-scope',
      attributes: JSON.stringify({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.provider.name': 'openai',
        'gen_ai.usage.input_tokens': 1000,
        'gen_ai.usage.output_tokens': 0,
        'svc.cost.nanos': 2500,
        'gen_ai.response.status': 'completed',
      }),
      resource_attributes: '{"service.name":"agents","deployment.environment.name":"prod","host.name":"h1"}',
      operation_name: 'chat',
      canonical_operation: 'CANONICAL_OPERATION_CHAT',
      response_status: 'completed',
      outcome: 'OUTCOME_OK', // the stated status, not the ERROR span status
      agent_name: null,
      agent_id: null,
      observation_key: null,
      session_key: null,
      turn_id: null,
      run_status: null,
      terminal_reason: null,
      tool_name: null,
      model: 'gpt-4o',
      provider: 'openai',
      input_tokens: '1000',
      output_tokens: '0',
      reported_cost_nanos: '2500',
      safety_check: false,
      memory_item_id: null,
      memory_store: null,
      memory_provenance: null,
      memory_trust_label: null,
      context_events: 0,
    },
  ];

  for (const format of ['protobuf', 'json'] as const) {
    it(`stores every column of a ${format} ExportTraceServiceRequest (ids lower-case hex, times in µs)`, async () => {
      const p = await project();
      const before = Date.now() * 1000;
      const res = await postTraces(t, req(), { key: p.key, format });
      expect(res.statusCode, res.body).toBe(200);
      const stored = await rows(t, 'SELECT * EXCLUDE (project_id) FROM spans WHERE project_id = $p ORDER BY start_us', { p: p.projectId });
      for (const r of stored) {
        expect(Number(r.ingested_at_us)).toBeGreaterThanOrEqual(before);
        delete r.ingested_at_us;
      }
      expect(stored).toEqual(expected);
      expect(await eventsOf(p.projectId)).toEqual([
        {
          span_id: child,
          event_index: 0,
          ts_us: String((T0 + 200) * 1000),
          name: 'exception',
          attributes: '{"exception.type":"Retry"}',
          category: null,
          context_kind: null,
          context_detail: null,
          context_source_ids: null,
        },
      ]);
    });
  }

  it('OTLP JSON: hex ids in any case (stored lower-case), proto snake_case field names, int64 as numbers', async () => {
    const p = await project();
    const body = {
      resource_spans: [
        {
          scope_spans: [
            {
              spans: [
                { trace_id: tid.toUpperCase(), span_id: root.toUpperCase(), name: 'snake', start_time_unix_nano: T0 * 1e6, end_time_unix_nano: ns(T0 + 1), kind: 'SPAN_KIND_PRODUCER' },
              ],
            },
          ],
        },
      ],
    };
    const res = await postTraces(t, body, { key: p.key, format: 'json' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await spansOf(p.projectId, 'trace_id, span_id, name, kind, start_us, end_us, service_name, scope_name, resource_attributes')).toEqual([
      { trace_id: tid, span_id: root, name: 'snake', kind: 'producer', start_us: String(T0 * 1000), end_us: String((T0 + 1) * 1000), service_name: null, scope_name: null, resource_attributes: '{}' },
    ]);
  });

  it('Content-Encoding: gzip (protobuf and JSON); the response uses the request content type, empty when all accepted', async () => {
    const p = await project();
    const pb = await postTraces(t, traceRequest({}, [span({ traceId: traceId(), startMs: T0 })]), { key: p.key, gzip: true });
    expect(pb.statusCode).toBe(200);
    expect(pb.headers['content-type']).toBe('application/x-protobuf');
    expect(pb.rawPayload.length).toBe(0);
    const js = await postTraces(t, traceRequest({}, [span({ traceId: traceId(), startMs: T0 + 1 })]), { key: p.key, gzip: true, format: 'json' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/^application\/json/);
    expect(js.json()).toEqual({});
    const alt = await postTraces(t, traceRequest({}, [span({ traceId: traceId(), startMs: T0 + 2 })]), { key: p.key, headers: { 'content-type': 'application/protobuf' } });
    expect(alt.headers['content-type']).toBe('application/protobuf');
    expect(await spansOf(p.projectId)).toHaveLength(3);
  });

  it('values: int64 beyond 2^53 as a string, bytes as base64, kvlists as objects, NaN as a string', async () => {
    const p = await project();
    const s = span({ traceId: traceId(), startMs: T0 });
    s.attributes = [
      { key: 'big', value: { intValue: '9007199254740993' } },
      { key: 'bytes', value: { bytesValue: Buffer.from('hi').toString('base64') } },
      { key: 'map', value: { kvlistValue: { values: [{ key: 'k', value: { boolValue: true } }] } } },
      { key: 'nan', value: { doubleValue: 'NaN' } },
    ];
    expect((await postTraces(t, traceRequest({}, [s]), { key: p.key, format: 'json' })).statusCode).toBe(200);
    expect((await spansOf(p.projectId, 'attributes'))[0].attributes).toBe('{"big":"9007199254740993","bytes":"aGk=","map":{"k":true},"nan":"NaN"}');
  });
});

describe('POST /v1/traces: partial success', () => {
  it('a span with an invalid id or time is rejected (counted, first reason); the rest of the request is stored', async () => {
    const tid = traceId();
    const bad = [
      span({ traceId: 'abcd', name: 'short-trace', startMs: T0 }),
      span({ traceId: '0'.repeat(32), name: 'zero-trace', startMs: T0 }),
      span({ traceId: tid, spanId: '0'.repeat(16), name: 'zero-span', startMs: T0 }),
      span({ traceId: tid, spanId: 'abcdef', name: 'short-span', startMs: T0 }),
      span({ traceId: tid, parentSpanId: 'abcd', name: 'short-parent', startMs: T0 }),
      span({ traceId: tid, name: 'no-start', raw: { startTimeUnixNano: '0' } }),
      span({ traceId: tid, name: 'backwards', startMs: T0, endMs: T0 - 1 }),
    ];
    const good = [span({ traceId: tid, name: 'ok', startMs: T0 }), span({ traceId: tid, name: 'zero-parent-is-root', parentSpanId: '0'.repeat(16), startMs: T0 + 1 })];
    for (const format of ['protobuf', 'json'] as const) {
      const p = await project();
      const res = await postTraces(t, traceRequest({}, [...bad, ...good]), { key: p.key, format });
      expect(res.statusCode).toBe(200);
      const message = '7 spans were rejected; the first: span "short-trace": trace_id must be 16 bytes (32 hex digits in JSON) and not all zero';
      if (format === 'json') expect(res.json()).toEqual({ partialSuccess: { rejectedSpans: '7', errorMessage: message } });
      else expect(decodeSignalResponse('traces', res.rawPayload)).toEqual({ partialSuccess: { rejected: 7, errorMessage: message } });
      expect(await spansOf(p.projectId, 'name, parent_span_id')).toEqual([
        { name: 'ok', parent_span_id: null },
        { name: 'zero-parent-is-root', parent_span_id: null },
      ]);
    }
  });

  it('each rejection reason is named', async () => {
    const p = await project();
    const tid = traceId();
    const cases: [object, string][] = [
      [span({ traceId: 'zz'.repeat(16), name: 'x', startMs: T0 }), 'span "x": trace_id must be 16 bytes (32 hex digits in JSON) and not all zero'],
      [span({ traceId: tid, spanId: '0'.repeat(16), name: 'x', startMs: T0 }), 'span "x": span_id must be 8 bytes (16 hex digits in JSON) and not all zero'],
      [span({ traceId: tid, parentSpanId: 'abc', name: 'x', startMs: T0 }), 'span "x": parent_span_id must be empty or 8 bytes (16 hex digits in JSON)'],
      [span({ traceId: tid, name: 'x', raw: { startTimeUnixNano: '0' } }), 'span "x": start_time_unix_nano is 0 (or missing)'],
      [span({ traceId: tid, name: 'x', startMs: T0, endMs: T0 - 5 }), 'span "x": end_time_unix_nano is before start_time_unix_nano (or missing)'],
    ];
    for (const [s, reason] of cases) {
      const res = await postTraces(t, traceRequest({}, [s as Record<string, unknown>]), { key: p.key, format: 'json' });
      expect(res.json()).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: `1 span was rejected; the first: ${reason}` } });
    }
    expect(await spansOf(p.projectId)).toEqual([]);
  });

  it('OTLP/JSON 64-bit integers outside their range are refused (400, nothing stored), never wrapped or clamped into another value', async () => {
    const p = await project();
    const tid = traceId();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ startTimeUnixNano: '99999999999999999999999' }, /start_time_unix_nano is out of range: 99999999999999999999999 does not fit an unsigned 64-bit integer/],
      [{ start_time_unix_nano: '18446744073709551616' }, /start_time_unix_nano is out of range/],
      [{ endTimeUnixNano: '-5' }, /end_time_unix_nano is out of range: -5/],
      [{ startTimeUnixNano: 1e30 }, /start_time_unix_nano is out of range/],
      [{ attributes: [{ key: 'gen_ai.usage.input_tokens', value: { intValue: '99999999999999999999999' } }] }, /int_value is out of range: .* a signed 64-bit integer/],
      [{ attributes: [{ key: 'n', value: { intValue: '-9223372036854775809' } }] }, /int_value is out of range/],
      [{ events: [{ name: 'e', timeUnixNano: '18446744073709551616' }] }, /time_unix_nano is out of range/],
    ];
    for (const [raw, message] of cases) {
      const res = await postTraces(t, traceRequest({}, [span({ traceId: tid, name: 'x', startMs: T0, raw })]), { key: p.key, format: 'json' });
      expect(res.statusCode, JSON.stringify(raw)).toBe(400);
      expect(res.json().error).toBe('invalid_request');
      expect(res.json().message).toMatch(message);
    }
    // The edges of the ranges are accepted as they are.
    const edge = await postTraces(
      t,
      traceRequest({}, [span({ traceId: tid, name: 'edge', startMs: T0, raw: { attributes: [{ key: 'big', value: { intValue: '9223372036854775807' } }, { key: 'small', value: { intValue: '-9223372036854775808' } }] } })]),
      { key: p.key, format: 'json' },
    );
    expect(edge.statusCode).toBe(200);
    expect(await spansOf(p.projectId, 'name, attributes')).toEqual([{ name: 'edge', attributes: expect.stringContaining('"big":"9223372036854775807"') }]);
    expect((await spansOf(p.projectId, 'attributes'))[0].attributes).toContain('"small":"-9223372036854775808"');
  });

  it('a context event that is not accepted: stored as a plain span event, span not rejected, counted in the message', async () => {
    const p = await project();
    const tid = traceId();
    const sid = spanId();
    const req = traceRequest({}, [
      span({
        traceId: tid,
        spanId: sid,
        name: 'chat',
        startMs: T0,
        events: [
          { name: 'context.window', ms: T0 + 1 },
          { name: 'context.assembly', ms: T0 + 2, attributes: { 'svc.context.assembly.budget_tokens': 10, 'svc.context.cache.outcome': 'hit' } },
          { name: 'context.cache', ms: T0 + 3, attributes: { 'svc.context.cache.outcome': 'miss' } },
        ],
      }),
    ]);
    const res = await postTraces(t, req, { key: p.key, format: 'json' });
    expect(res.json()).toEqual({
      partialSuccess: {
        rejectedSpans: '0',
        errorMessage: '2 context events were not accepted and stored as plain span events; the first: event "context.window" of span "chat": unknown context kind "window"',
      },
    });
    const pb = decodeSignalResponse('traces', (await postTraces(t, req, { key: (await project()).key })).rawPayload);
    expect(pb.partialSuccess).toMatchObject({ rejected: 0 });
    const events = await eventsOf(p.projectId);
    expect(events.map((e) => [e.name, e.category, e.context_kind, e.context_detail])).toEqual([
      ['context.window', null, null, null],
      ['context.assembly', null, null, null],
      ['context.cache', 'context', 'cache', '{"outcome":"miss"}'],
    ]);
    expect(await spansOf(p.projectId, 'context_events')).toEqual([{ context_events: 1 }]);
  });

  it('the span status is never used: an ERROR span with no stated status has no outcome; a stated failed one is OUTCOME_ERROR', async () => {
    const p = await project();
    const tid = traceId();
    const res = await postTraces(
      t,
      traceRequest({}, [
        span({ traceId: tid, name: 'a', startMs: T0, attributes: { 'gen_ai.operation.name': 'execute_tool' }, status: { code: 2, message: 'boom' } }),
        span({ traceId: tid, name: 'b', startMs: T0 + 1, attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.response.status': 'failed' }, status: { code: 1 } }),
        span({ traceId: tid, name: 'c', startMs: T0 + 2, attributes: { 'gen_ai.response.status': 'in_progress' }, status: { code: 2 } }),
      ]),
      { key: p.key },
    );
    expect(res.statusCode).toBe(200);
    expect(await spansOf(p.projectId, 'name, status_code, response_status, outcome')).toEqual([
      { name: 'a', status_code: 'error', response_status: null, outcome: null },
      { name: 'b', status_code: 'ok', response_status: 'failed', outcome: 'OUTCOME_ERROR' },
      { name: 'c', status_code: 'error', response_status: 'in_progress', outcome: null },
    ]);
  });
});
