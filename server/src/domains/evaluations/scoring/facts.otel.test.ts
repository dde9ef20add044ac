/**
 * Subject facts read back from runs the official OpenTelemetry JS SDK sent over OTLP/HTTP to the server
 * listening on a port, and scored by the model-less scorers: a run with a reported cost, an unpriced model
 * (then priced), a safety step, a step subject, a session of several runs, releases, a run that is only
 * its root. Expected values come from what the SDK recorded (span ids, times), not from the server.
 */
import { ROOT_CONTEXT, trace, type Span, type Tracer } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { hrMicros, readable, sendAgentRun, sendSpans, type AgentRunSpans } from '../../../testing/otel-agent-run.js';
import { FREE_EXECUTION, type EvaluatorConfig, type SubjectFacts } from '../model.js';
import { AgentFactsReader } from './facts.js';
import { scoreModelless } from './index.js';

const clock = fixedClock(new Date().toISOString());
let t: TestApp;
let base: string;
let facts: AgentFactsReader;
beforeAll(async () => {
  t = await testApp({ clock });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  facts = new AgentFactsReader(t.ctx.agentRuns, t.ctx.telemetry.releases);
});
afterAll(async () => t?.close());

const C = (op: string) => `CANONICAL_OPERATION_${op}`;
const startUs = (s: Span) => hrMicros(readable(s).startTime);
const endUs = (s: Span) => hrMicros(readable(s).endTime);
const spanId = (s: Span) => s.spanContext().spanId;
const traceId = (s: Span) => s.spanContext().traceId;

const measure = (measurement: string): EvaluatorConfig => ({ kind: 'EVALUATOR_KIND_DETERMINISTIC', config: { form: 'measurement', measurement: measurement as never } });
const score = (parsed: EvaluatorConfig, f: SubjectFacts) => scoreModelless(parsed, f);

async function caught(p: Promise<unknown>) {
  return p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  );
}

/** Sends the spans `build` makes through the SDK's OTLP/HTTP JSON exporter, under these resource attributes. */
const send = <T>(key: string, resource: Record<string, string | number | boolean>, build: (tracer: Tracer) => T): Promise<T> =>
  sendSpans({ base, key, resource: { 'service.name': 'eval-agent', ...resource }, scope: 'eval-test' }, build);

interface StepSpec {
  op: string;
  attributes?: Record<string, string | number | boolean>;
}

/** An invoke_agent root and its steps one millisecond apart (so "oldest first" has a strict order). */
function agentRun(tracer: Tracer, root: Record<string, string | number | boolean>, steps: StepSpec[], t0 = Date.now()) {
  const r = tracer.startSpan('invoke_agent', { startTime: t0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'eval-agent', ...root } });
  const children = steps.map((s, i) => {
    const c = tracer.startSpan(s.op, { startTime: t0 + 1 + i, attributes: { 'gen_ai.operation.name': s.op, ...s.attributes } }, trace.setSpan(ROOT_CONTEXT, r));
    c.end(t0 + 1.5 + i);
    return c;
  });
  r.end(t0 + 2 + steps.length);
  return { root: r, steps: children };
}

/** The SDK's steps of `sendAgentRun` but the root, oldest first (start, then span id). */
function sequenceOf(s: AgentRunSpans) {
  return [s.chat, s.tool, s.failed, s.retrieval, s.memory].sort((a, b) => startUs(a) - startUs(b) || (spanId(a) < spanId(b) ? -1 : 1));
}

describe('run facts from a run the SDK sent', () => {
  it('a run with a reported cost: every fact, its step sequence, and the scores it gives', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'reported');
    const s = await sendAgentRun({ base, format: 'protobuf', key: p.key, chatCostNanos: 4321 });
    const f = await facts.run(p.projectId, traceId(s.root).toUpperCase());
    const seq = sequenceOf(s);
    const info: Record<string, [string, string | null, string | null, boolean]> = {
      [spanId(s.chat)]: [C('CHAT'), 'OUTCOME_OK', null, false],
      [spanId(s.tool)]: [C('EXECUTE_TOOL'), 'OUTCOME_OK', 'search', false],
      [spanId(s.failed)]: [C('EXECUTE_TOOL'), 'OUTCOME_ERROR', 'send_email', true],
      [spanId(s.retrieval)]: [C('RETRIEVAL'), null, null, false],
      [spanId(s.memory)]: [C('UPSERT_MEMORY'), null, null, false],
    };
    expect(f).toEqual({
      kind: 'run',
      runId: traceId(s.root),
      status: 'completed',
      startUs: startUs(s.root),
      durationMs: (endUs(s.root) - startUs(s.root)) / 1000,
      stepCount: 6,
      errorSteps: 1,
      toolCalls: 2,
      modelCalls: 1,
      costNanos: 4321,
      safetyErrorSteps: 1,
      steps: seq.map((x) => {
        const [canonicalOperation, outcome, toolName, safetyCheck] = info[spanId(x)];
        return { spanId: spanId(x), parentSpanId: spanId(s.root), canonicalOperation, outcome, toolName, startUs: startUs(x), safetyCheck };
      }),
      sessionKey: 'conv-42',
      release: null,
    });

    expect(score(measure('run.cost_nanos'), f)).toEqual({ outcome: 'scored', numericValue: 4321, label: null, explanation: 'run.cost_nanos = 4321', execution: FREE_EXECUTION });
    expect(score(measure('safety.error_steps'), f)).toMatchObject({ outcome: 'scored', numericValue: 1 });
    expect(score(measure('run.duration_ms'), f)).toMatchObject({ outcome: 'scored', numericValue: f.durationMs });
    const gate: EvaluatorConfig = {
      kind: 'EVALUATOR_KIND_DETERMINISTIC',
      config: {
        form: 'assertion',
        aggregation: 'fraction',
        assertions: [
          { field: 'run.status', op: 'equals', value: 'completed' },
          { field: 'run.error_steps', op: 'lte', number: 0 },
          { field: 'steps.tool_names', op: 'contains', value: 'search' },
          { field: 'steps.outcomes', op: 'not_contains', value: 'OUTCOME_ERROR' },
        ],
      },
    };
    expect(score(gate, f)).toMatchObject({ outcome: 'scored', numericValue: 0.5, label: '2/4' });
    // The tool names in the SDK's order (search then send_email, unless both started in one millisecond).
    const toolOrder = seq.flatMap((x) => (info[spanId(x)][2] === null ? [] : [info[spanId(x)][2]!]));
    expect([...toolOrder].sort()).toEqual(['search', 'send_email']);
    const tools: EvaluatorConfig = { kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', config: { step_key: 'tool_name', match: 'exact', reference: toolOrder } };
    expect(score(tools, f)).toMatchObject({ numericValue: 1, label: 'match' });
    const reversed: EvaluatorConfig = { kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', config: { step_key: 'tool_name', match: 'exact', reference: [...toolOrder].reverse() } };
    expect(score(reversed, f)).toMatchObject({ numericValue: 0, label: 'no_match' });
    const ops: EvaluatorConfig = { kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', config: { step_key: 'canonical_operation', match: 'ordered_subsequence', reference: [C('RETRIEVAL'), C('CHAT'), C('EXECUTE_TOOL')] } };
    // The SDK may start two steps in one millisecond (then the span ids order them): the expected match is
    // counted by brute force over the reference's in-order subsets, against the SDK's own sequence.
    const expected = seq.map((x) => info[spanId(x)][0]);
    const ref = [C('RETRIEVAL'), C('CHAT'), C('EXECUTE_TOOL')];
    const inOrder = (sub: string[]) => {
      let i = 0;
      for (const k of expected) if (k === sub[i]) i += 1;
      return i === sub.length;
    };
    const subsets = [0, 1, 2, 3, 4, 5, 6, 7].map((m) => ref.filter((_, i) => m & (1 << i)));
    const matched = Math.max(...subsets.filter(inOrder).map((x) => x.length));
    expect(matched).toBeGreaterThan(0);
    expect(score(ops, f)).toMatchObject({ numericValue: matched / 3, label: `${matched}/3` });
  });

  it('an unpriced model: run.cost_nanos is unmeasured (not zero) until a price is set', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'llm:write'], 'unpriced');
    const s = await sendAgentRun({ base, format: 'json', key: p.key });
    const f = await facts.run(p.projectId, traceId(s.root));
    expect(f).toMatchObject({ costNanos: null, costUnavailableReason: 'unpriced_model' });
    const o = score(measure('run.cost_nanos'), f);
    expect(o).toEqual({ outcome: 'unmeasured', reason: 'run.cost_nanos is unmeasured: the run has no reported or calculated model cost (unpriced_model); a missing cost is not zero' });

    const res = await t.call({
      method: 'PUT',
      url: '/api/v1/llm/pricing',
      key: p.key,
      payload: { provider: 'openai', model: 'gpt-4o-2024-08-06', input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 2 },
    });
    expect(res.statusCode, res.body).toBe(200);
    // 1200 input tokens at 1000 nanos each and 350 output tokens at 2000 nanos each.
    const priced = await facts.run(p.projectId, traceId(s.root));
    expect(priced.costNanos).toBe(1_200_000 + 700_000);
    expect(priced.costUnavailableReason).toBeUndefined();
    expect(score(measure('run.cost_nanos'), priced)).toMatchObject({ outcome: 'scored', numericValue: 1_900_000 });
  });

  it("the release is the root's service.version resource attribute (when it sets no gen_ai.agent.version); a run that is only its root is unmeasured for steps", async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'release');
    const { root } = await send(p.key, { 'service.version': '2.3.1' }, (tr) => agentRun(tr, { 'svc.agent.run.status': 'failed' }, []));
    const f = await facts.run(p.projectId, traceId(root));
    expect(f).toMatchObject({ release: '2.3.1', status: 'failed', steps: [], stepCount: 1, safetyErrorSteps: null, costNanos: null, costUnavailableReason: 'no_model_calls' });
    const traj: EvaluatorConfig = { kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', config: { step_key: 'canonical_operation', match: 'exact', reference: [C('CHAT')] } };
    expect(score(traj, f)).toEqual({ outcome: 'unmeasured', reason: 'the trajectory is unmeasured: the run has no steps besides its root' });
    expect(score(measure('safety.error_steps'), f)).toMatchObject({ outcome: 'unmeasured' });
    const status: EvaluatorConfig = { kind: 'EVALUATOR_KIND_DETERMINISTIC', config: { form: 'assertion', aggregation: 'all', assertions: [{ field: 'run.status', op: 'equals', value: 'completed' }] } };
    expect(score(status, f)).toMatchObject({ outcome: 'scored', numericValue: 0, label: 'fail' });
  });

  it('a number service.version is the release as its text; an empty or boolean one declares none', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'release-kinds');
    for (const [version, release] of [[7, '7'], ['', null], [true, null]] as const) {
      const { root } = await send(p.key, { 'service.version': version }, (tr) => agentRun(tr, {}, []));
      expect((await facts.run(p.projectId, traceId(root))).release, String(version)).toBe(release);
    }
  });

  it('one release vocabulary: the root\'s gen_ai.agent.version wins, else its service.version; an empty or boolean agent version falls back', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'release-vocabulary');
    const cases: [Record<string, string | number | boolean>, Record<string, string | number | boolean>, string | null][] = [
      [{}, { 'gen_ai.agent.version': '4.0.0' }, '4.0.0'],
      [{ 'service.version': '1.2.3' }, { 'gen_ai.agent.version': '4.0.1' }, '4.0.1'],
      [{ 'service.version': '1.2.3' }, { 'gen_ai.agent.version': '' }, '1.2.3'],
      [{ 'service.version': '1.2.3' }, { 'gen_ai.agent.version': true }, '1.2.3'],
      [{}, { 'gen_ai.agent.version': 12 }, '12'],
      [{}, {}, null],
    ];
    for (const [resource, rootAttributes, release] of cases) {
      const { root } = await send(p.key, resource, (tr) => agentRun(tr, rootAttributes, []));
      expect((await facts.run(p.projectId, traceId(root))).release, JSON.stringify([resource, rootAttributes])).toBe(release);
    }
  });

  it('a missing run, a run of another project and a malformed run id', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'missing');
    const other = await projectWithKey(t, ['ingest:write', 'agents:read'], 'other');
    const s = await sendAgentRun({ base, format: 'json', key: other.key });
    for (const id of ['0'.repeat(32), traceId(s.root)]) {
      expect(await caught(facts.run(p.projectId, id))).toMatchObject({ status: 404, message: 'agent run not found' });
      expect(await caught(facts.step(p.projectId, id, spanId(s.tool)))).toMatchObject({ status: 404, message: 'agent run not found' });
    }
    expect(await caught(facts.run(p.projectId, 'not-a-run'))).toMatchObject({ status: 400 });
  });
});

describe('step facts', () => {
  it('a safety step of a run: the step, its run, and what it scores', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'step');
    const s = await sendAgentRun({ base, format: 'json', key: p.key, chatCostNanos: 10 });
    const f = await facts.step(p.projectId, traceId(s.root), spanId(s.failed).toUpperCase());
    expect(f.kind).toBe('step');
    expect(f.step).toEqual({
      spanId: spanId(s.failed),
      parentSpanId: spanId(s.root),
      canonicalOperation: C('EXECUTE_TOOL'),
      outcome: 'OUTCOME_ERROR',
      toolName: 'send_email',
      startUs: startUs(s.failed),
      safetyCheck: true,
    });
    expect(f.run).toEqual(await facts.run(p.projectId, traceId(s.root)));
    expect(score(measure('safety.error_steps'), f)).toMatchObject({ outcome: 'scored', numericValue: 1 });
    const set: EvaluatorConfig = { kind: 'EVALUATOR_KIND_DETERMINISTIC', config: { form: 'assertion', aggregation: 'all', assertions: [{ field: 'steps.tool_names', op: 'not_contains', value: 'search' }] } };
    // The run called search; this step did not.
    expect(score(set, f)).toMatchObject({ numericValue: 1 });
    expect(() => score(measure('run.duration_ms'), f)).toThrow(expect.objectContaining({ status: 400, details: expect.objectContaining({ reason: 'family_not_of_subject' }) }));
    // The search step is no safety check: no score, not 0.
    const search = await facts.step(p.projectId, traceId(s.root), spanId(s.tool));
    expect(score(measure('safety.error_steps'), search)).toEqual({ outcome: 'unmeasured', reason: 'safety.error_steps is unmeasured: the step is not marked as a safety check' });

    expect(await caught(facts.step(p.projectId, traceId(s.root), 'f'.repeat(16)))).toMatchObject({ status: 404, message: 'agent step not found' });
    for (const bad of ['', 'xyz', 'f'.repeat(17), `${spanId(s.tool)}/x`]) expect(await caught(facts.step(p.projectId, traceId(s.root), bad))).toMatchObject({ status: 400 });
  });
});

describe('session facts', () => {
  it('a session of several runs: counts, times, summed cost, the newest run\'s release', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'session');
    const t0 = Date.now();
    const chat = (cost: number): StepSpec => ({ op: 'chat', attributes: { 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 3, 'svc.cost.nanos': cost } });
    const a = await send(p.key, { 'service.version': '1.0.0' }, (tr) => agentRun(tr, { 'gen_ai.conversation.id': 'sess-1', 'svc.turn.id': 'turn-1' }, [chat(100)], t0));
    const b = await send(p.key, { 'service.version': '1.0.0' }, (tr) => agentRun(tr, { 'gen_ai.conversation.id': 'sess-1', 'svc.turn.id': 'turn-1' }, [chat(20), { op: 'execute_tool', attributes: { 'gen_ai.tool.name': 'x' } }], t0 + 10));
    const c = await send(p.key, { 'service.version': '1.1.0' }, (tr) => agentRun(tr, { 'gen_ai.conversation.id': 'sess-1', 'svc.turn.id': 'turn-2' }, [chat(3)], t0 + 20));
    expect(b.steps).toHaveLength(2);
    const f = await facts.session(p.projectId, 'sess-1');
    expect(f).toEqual({
      kind: 'session',
      sessionKey: 'sess-1',
      runCount: 3,
      turnCount: 2,
      startUs: startUs(a.root),
      durationMs: (endUs(c.root) - startUs(a.root)) / 1000,
      costNanos: 123,
      release: '1.1.0',
    });
    expect(score(measure('session.cost_nanos'), f)).toMatchObject({ outcome: 'scored', numericValue: 123 });
    expect(score(measure('session.run_count'), f)).toMatchObject({ outcome: 'scored', numericValue: 3 });
    expect(score(measure('session.turn_count'), f)).toMatchObject({ outcome: 'scored', numericValue: 2 });
    expect(score(measure('session.duration_ms'), f)).toMatchObject({ outcome: 'scored', numericValue: f.durationMs });
    expect(() => score(measure('run.cost_nanos'), f)).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('a session of one moment without turn ids or model calls: duration 0 is real; turn count and a zero cost are unmeasured', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'moment');
    const t0 = Date.now();
    await send(p.key, {}, (tr) => {
      const r = tr.startSpan('invoke_agent', { startTime: t0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'a', 'gen_ai.conversation.id': 'sess-m' } });
      r.end(t0);
    });
    const f = await facts.session(p.projectId, 'sess-m');
    expect(f).toMatchObject({ runCount: 1, turnCount: null, durationMs: 0, costNanos: null, costUnavailableReason: 'zero_cost', release: null });
    expect(score(measure('session.duration_ms'), f)).toMatchObject({ outcome: 'scored', numericValue: 0 });
    expect(score(measure('session.turn_count'), f)).toMatchObject({ outcome: 'unmeasured' });
    expect(score(measure('session.cost_nanos'), f)).toEqual({ outcome: 'unmeasured', reason: 'session.cost_nanos is unmeasured: the session reported a cost of zero' });
  });

  it('a session no run of the project carries is 404', async () => {
    const p = await projectWithKey(t, ['ingest:write', 'agents:read'], 'nosession');
    expect(await caught(facts.session(p.projectId, 'sess-1'))).toMatchObject({ status: 404, message: 'agent session not found' });
  });
});
