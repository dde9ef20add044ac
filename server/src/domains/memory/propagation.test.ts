/**
 * `GET /memory-items/{itemKey}/propagation` (spec 2 "Memory label" propagation entry, "Memory" endpoints,
 * "Step-level agent event" memory attributes, "Limits"): the official OpenTelemetry JS SDK sends memory
 * spans over OTLP/HTTP to the server listening on a port; the propagation is read back over HTTP and
 * compared exactly with what the SDK recorded (span ids, times) and the labels written in between.
 */
import { ROOT_CONTEXT, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { hrMicros, isoFromMicros, readable, sendAgentRun, sendSpans } from '../../testing/otel-agent-run.js';

const clock = fixedClock(new Date().toISOString());
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp({ clock });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t?.close());
afterEach(() => vi.restoreAllMocks());

const Q = 'MEMORY_TRUST_LABEL_QUARANTINED';
const T = 'MEMORY_TRUST_LABEL_TRUSTED';
const S = 'MEMORY_TRUST_LABEL_SUSPECT';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function project() {
  const p = await projectWithKey(t, ['agents:read', 'agents:write', 'ingest:write']);
  const call = (method: 'GET' | 'PUT', url: string, payload?: object) => t.call({ method, url: `/api/v1${url}`, key: p.key, ...(payload ? { payload } : {}) });
  /** Labels at the present (the clock moves to now first, so label times interleave with span times). */
  const label = async (item: string, l: string, reason = 'r') => {
    await sleep(3);
    clock.set(new Date().toISOString());
    const res = await call('PUT', `/memory-items/${encodeURIComponent(item)}/label`, { label: l, reason });
    expect(res.statusCode, res.body).toBe(200);
    await sleep(3);
    return res.json();
  };
  const propagation = async (item: string, q = '') => {
    const res = await call('GET', `/memory-items/${encodeURIComponent(item)}/propagation${q ? `?${q}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  return { ...p, call, label, propagation };
}

interface MemoryOp {
  op: string;
  item?: string;
  store?: string;
  provenance?: string;
  trust?: string;
}

/** Sends spans through the SDK's OTLP/HTTP JSON exporter; `build` starts and ends them. */
const send = <T>(key: string, build: (tracer: Tracer) => T): Promise<T> =>
  sendSpans({ base, key, resource: { 'service.name': 'memory-agent' }, scope: 'memory-test' }, build);

function memorySpan(tracer: Tracer, m: MemoryOp, parent: Span | null, extra: Record<string, string> = {}, startTime?: number): Span {
  const s = tracer.startSpan(
    m.op,
    {
      kind: SpanKind.CLIENT,
      ...(startTime !== undefined ? { startTime } : {}),
      attributes: {
        'gen_ai.operation.name': m.op,
        ...(m.item !== undefined ? { 'svc.memory.item.id': m.item } : {}),
        ...(m.store !== undefined ? { 'gen_ai.data_source.id': m.store } : {}),
        ...(m.provenance !== undefined ? { 'svc.memory.item.provenance': m.provenance } : {}),
        ...(m.trust !== undefined ? { 'svc.memory.trust_label': m.trust } : {}),
        ...extra,
      },
    },
    parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
  );
  s.end(startTime !== undefined ? startTime + 0.5 : undefined);
  return s;
}

/** An agent run (invoke_agent root carrying agent, session and turn) whose children are these memory steps. */
function run(tracer: Tracer, o: { agentId: string; conversation?: string; turn?: string }, ops: MemoryOp[]) {
  // Steps one millisecond apart: two spans started back to back can share a microsecond, and "oldest first" has no order between equal times.
  const t0 = Date.now();
  const root = tracer.startSpan('invoke_agent', {
    startTime: t0,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': o.agentId,
      ...(o.conversation ? { 'gen_ai.conversation.id': o.conversation } : {}),
      ...(o.turn ? { 'svc.turn.id': o.turn } : {}),
    },
  });
  const steps = ops.map((m, i) => memorySpan(tracer, m, root, {}, t0 + 1 + i));
  root.end(t0 + 1 + ops.length);
  return { root, steps };
}

const at = (s: Span) => isoFromMicros(hrMicros(readable(s).startTime));

describe('GET /memory-items/{itemKey}/propagation', () => {
  it('entries oldest first with every field; "label_in_force is historical (the label at that entry\'s time), not the current label"; distinct_session_count; the signal names the recording agent\'s asset', async () => {
    const p = await project();
    clock.set(new Date().toISOString());
    const r1 = await send(p.key, (tr) =>
      run(tr, { agentId: 'writer-agent', conversation: 'conv-a', turn: 'turn-1' }, [
        { op: 'upsert_memory', item: 'doc-7', store: 'vec', provenance: 'tool_output', trust: S },
        { op: 'search_memory', item: 'doc-7', store: 'vec' },
      ]),
    );
    await t.ctx.assets.settled();
    const assets = (await p.call('GET', '/assets')).json().assets as { id: string; observation_keys: string[] }[];
    const writer = assets.find((a) => a.observation_keys.includes('writer-agent'));
    expect(writer).toBeDefined();

    const quarantined = await p.label('doc-7', Q, 'prompt injection in the document');
    expect(quarantined.review_signal_opened).toBe(true);
    const r2 = await send(p.key, (tr) => run(tr, { agentId: 'reader-agent', conversation: 'conv-b', turn: 'turn-9' }, [{ op: 'search_memory', item: 'doc-7', store: 'vec' }]));
    const trusted = await p.label('doc-7', T, 'cleaned');

    // "the asset of the agent that recorded it": the writer, not a later reader.
    const signal = (await p.call('GET', '/review-signals?kind=REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM')).json().review_signals[0];
    expect(signal).toMatchObject({ subject_ref: 'doc-7', asset_id: writer!.id, status: 'REVIEW_SIGNAL_STATUS_RESOLVED' });

    const body = await p.propagation('doc-7');
    const unlabeled = { label_state: 'MEMORY_LABEL_STATE_UNLABELED', label_in_force: null, label_revision: null, label_id: null, label_in_force_since: null };
    /** The entry of a step of a run of this test: session, turn and run from the run, id and time from the SDK. */
    const entry = (r: typeof r1, i: number, session: string, turn: string, rest: Record<string, unknown>) => ({
      session_key: session,
      turn_id: turn,
      run_id: r.root.spanContext().traceId,
      trace_id: r.root.spanContext().traceId,
      span_id: r.steps[i].spanContext().spanId,
      occurred_at: at(r.steps[i]),
      store: 'vec',
      item_provenance: null,
      declared_trust_label: null,
      ...unlabeled,
      ...rest,
    });
    const search = 'CANONICAL_OPERATION_SEARCH_MEMORY';
    expect(body).toEqual({
      memory_item_key: 'doc-7',
      project_id: p.projectId,
      entries: [
        entry(r1, 0, 'conv-a', 'turn-1', { canonical_operation: 'CANONICAL_OPERATION_UPSERT_MEMORY', item_provenance: 'tool_output', declared_trust_label: S }),
        entry(r1, 1, 'conv-a', 'turn-1', { canonical_operation: search }),
        entry(r2, 0, 'conv-b', 'turn-9', {
          canonical_operation: search,
          label_state: 'MEMORY_LABEL_STATE_LABELED',
          label_in_force: Q,
          label_revision: 1,
          label_id: quarantined.id,
          label_in_force_since: quarantined.labeled_at,
        }),
      ],
      distinct_session_count: 2,
      current_label: T,
      current_label_state: 'MEMORY_LABEL_STATE_LABELED',
      current_label_record: trusted,
      truncated: false,
    });

    // "limit (default 200, max 500)"; "truncated flag"; the session count is over all entries, not the page.
    const first = await p.propagation('doc-7', 'limit=1');
    expect(first.entries.map((e: { span_id: string }) => e.span_id)).toEqual([r1.steps[0].spanContext().spanId]);
    expect(first).toMatchObject({ truncated: true, distinct_session_count: 2, current_label: T });
    expect((await p.propagation('doc-7', 'limit=3')).truncated).toBe(false);
    expect((await p.propagation('doc-7', 'limit=2')).truncated).toBe(true);
  });

  it('the memory step of the issue-4 agent run (real SDK, protobuf): store, provenance, declared label, session, turn and run', async () => {
    const p = await project();
    const spans = await sendAgentRun({ base, format: 'protobuf', key: p.key, agentId: 'mem-run', conversationId: 'conv-mem' });
    const body = await p.propagation('item-9');
    expect(body.entries).toEqual([
      {
        session_key: 'conv-mem',
        turn_id: 'turn-1',
        run_id: spans.root.spanContext().traceId,
        trace_id: spans.root.spanContext().traceId,
        span_id: spans.memory.spanContext().spanId,
        occurred_at: at(spans.memory),
        canonical_operation: 'CANONICAL_OPERATION_UPSERT_MEMORY',
        store: 'mem-store',
        item_provenance: 'tool_output',
        declared_trust_label: S,
        label_state: 'MEMORY_LABEL_STATE_UNLABELED',
        label_in_force: null,
        label_revision: null,
        label_id: null,
        label_in_force_since: null,
      },
    ]);
    // Recorded but never labelled: no current label, and the label read is 404.
    expect(body).toMatchObject({ current_label: null, current_label_state: 'MEMORY_LABEL_STATE_UNLABELED', current_label_record: null, distinct_session_count: 1, truncated: false });
    expect((await p.call('GET', '/memory-items/item-9/label')).statusCode).toBe(404);
    // The retrieval step of the run names a data source but declares no item: it is no entry of anything.
    expect((await p.call('GET', '/memory-items/kb-main/propagation')).statusCode).toBe(404);
  });

  it('"404 when never recorded and never labelled"; "an item labelled before observation returns the label with no entries"', async () => {
    const p = await project();
    const res = await p.call('GET', '/memory-items/ghost/propagation');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
    const l = await p.label('early', Q);
    expect(await p.propagation('early')).toEqual({
      memory_item_key: 'early',
      project_id: p.projectId,
      entries: [],
      distinct_session_count: 0,
      current_label: Q,
      current_label_state: 'MEMORY_LABEL_STATE_LABELED',
      current_label_record: l,
      truncated: false,
    });
    // Recorded afterwards: the entry is under the label already in force.
    const later = await send(p.key, (tr) => run(tr, { agentId: 'a', conversation: 'c' }, [{ op: 'create_memory', item: 'early' }]));
    const [e] = (await p.propagation('early')).entries;
    expect(e).toMatchObject({ span_id: later.steps[0].spanContext().spanId, label_state: 'MEMORY_LABEL_STATE_LABELED', label_in_force: Q, label_revision: 1, label_id: l.id });
  });

  it('a memory step outside any agent run: run_id is null, the trace and its own session are kept; steps without a session count no session', async () => {
    const p = await project();
    const lone = await send(p.key, (tr) => memorySpan(tr, { op: 'update_memory', item: 'solo' }, null, { 'gen_ai.conversation.id': 'conv-x' }));
    const bare = await send(p.key, (tr) => memorySpan(tr, { op: 'delete_memory', item: 'solo' }, null));
    const body = await p.propagation('solo');
    expect(body.entries.map((e: Record<string, unknown>) => [e.run_id, e.trace_id, e.session_key, e.canonical_operation])).toEqual([
      [null, lone.spanContext().traceId, 'conv-x', 'CANONICAL_OPERATION_UPDATE_MEMORY'],
      [null, bare.spanContext().traceId, null, 'CANONICAL_OPERATION_DELETE_MEMORY'],
    ]);
    expect(body.distinct_session_count).toBe(1);
  });

  it('only memory operations declaring the item are entries; another project\'s steps of the same key are not', async () => {
    const p = await project();
    const other = await project();
    await send(p.key, (tr) =>
      run(tr, { agentId: 'a' }, [
        { op: 'upsert_memory', item: 'k1' },
        { op: 'retrieval', item: 'k1' },
        { op: 'execute_tool', item: 'k1' },
        { op: 'search_memory', item: 'k2' },
      ]),
    );
    await send(other.key, (tr) => run(tr, { agentId: 'a' }, [{ op: 'upsert_memory', item: 'k1' }]));
    expect((await p.propagation('k1')).entries.map((e: { canonical_operation: string }) => e.canonical_operation)).toEqual(['CANONICAL_OPERATION_UPSERT_MEMORY']);
    expect((await other.propagation('k1')).entries).toHaveLength(1);
  });

  it('a span delivered twice (a retried export) is one entry', async () => {
    const p = await project();
    const now = BigInt(Date.now()) * 1_000_000n;
    const payload = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: 'c'.repeat(32),
                  spanId: 'd'.repeat(16),
                  name: 'upsert_memory',
                  kind: 3,
                  startTimeUnixNano: String(now),
                  endTimeUnixNano: String(now + 1_000_000n),
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'upsert_memory' } },
                    { key: 'svc.memory.item.id', value: { stringValue: 'twice' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    for (let i = 0; i < 2; i++) expect((await t.call({ method: 'POST', url: '/v1/traces', key: p.key, payload })).statusCode).toBe(200);
    expect((await p.propagation('twice')).entries).toHaveLength(1);
  });

  it('"Propagation limit: default 200, max 500": above is 400, not truncation; 0, junk and repeats are 400', async () => {
    const p = await project();
    await p.label('lim', S);
    expect((await p.call('GET', '/memory-items/lim/propagation?limit=500')).statusCode).toBe(200);
    for (const q of ['limit=501', 'limit=0', 'limit=-1', 'limit=abc', 'limit=1&limit=2', 'limit=', 'cursor=x', 'environment=prod']) {
      const res = await p.call('GET', `/memory-items/lim/propagation?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json()).toHaveProperty('error', 'invalid_request');
    }
  });

  it('"fails whole if the label cannot be read": 503 unavailable, never entries without their labels', async () => {
    const p = await project();
    await send(p.key, (tr) => run(tr, { agentId: 'a' }, [{ op: 'upsert_memory', item: 'fragile' }]));
    vi.spyOn(t.ctx.control.memoryLabels, 'history').mockRejectedValueOnce(new Error('control store down'));
    const res = await p.call('GET', '/memory-items/fragile/propagation');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'unavailable' });
    expect(res.json().message).toMatch(/labels/);
    expect(res.body).not.toMatch(/control store down/);
    expect((await p.propagation('fragile')).entries).toHaveLength(1);
  });

  it('when the telemetry store cannot be read the answer is 503, not an empty list (also for a labelled item)', async () => {
    const p = await project();
    await p.label('labelled', Q);
    for (const item of ['labelled', 'unknown']) {
      vi.spyOn(t.ctx.telemetry.memory, 'operations').mockRejectedValueOnce(new Error('duckdb down'));
      const res = await p.call('GET', `/memory-items/${item}/propagation`);
      expect(res.statusCode, item).toBe(503);
      expect(res.json()).toMatchObject({ error: 'unavailable' });
    }
  });

  it('"A label blocks nothing" and never waits on telemetry: with the telemetry store unreadable a quarantined label lands, its signal naming no asset', async () => {
    const p = await project();
    await send(p.key, (tr) => run(tr, { agentId: 'writer-2' }, [{ op: 'upsert_memory', item: 'w' }]));
    await t.ctx.assets.settled();
    vi.spyOn(t.ctx.telemetry.memory, 'recordingAgent').mockRejectedValueOnce(new Error('duckdb down'));
    const l = await p.label('w', Q);
    expect(l.review_signal_opened).toBe(true);
    const [s] = (await p.call('GET', '/review-signals?kind=REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM')).json().review_signals;
    expect(s.asset_id).toBeNull();
    // The item's steps are still recorded and read as before.
    expect((await p.propagation('w')).entries).toHaveLength(1);
  });
});
