/**
 * `POST /evaluation/evaluate` end to end (on-demand evaluation: subject kinds and refs, 400/403/404/409/429/501,
 * `already_evaluated`, provenance): agent runs are sent by the real OpenTelemetry SDK over OTLP/HTTP to the
 * listening app, evaluators are created through their routes, and results are read back over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { allowAllContent } from '../../testing/content-policy.js';
import { trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { sendAgentRun, sendSpans, hrMicros, isoFromMicros, readable } from '../../testing/otel-agent-run.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t?.close());

const SCOPES = ['evals:read', 'evals:write', 'agents:read', 'ingest:write'];

async function project(scopes = SCOPES) {
  const p = await projectWithKey(t, scopes);
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, key = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const evaluator = async (evaluator_id: string, kind: string, config: unknown, metric_name = evaluator_id) => {
    const res = await call('POST', '/evaluation/evaluators', { evaluator_id, display_name: evaluator_id, metric_name, kind, config_json: JSON.stringify(config) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const evaluate = (evaluator_id: string, version: number, subject_ref: string, subject_kind = 'SUBJECT_KIND_AGENT_RUN') =>
    call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id, version }, subject_kind, subject_ref });
  const run = async (o: Partial<Parameters<typeof sendAgentRun>[0]> = {}) => sendAgentRun({ base, format: 'json', key: p.key, ...o });
  return { ...p, call, evaluator, evaluate, run };
}

const GATE = {
  aggregation: 'all',
  assertions: [
    { field: 'run.status', op: 'equals', value: 'completed' },
    { field: 'run.error_steps', op: 'lte', number: 1 },
    { field: 'steps.tool_names', op: 'contains', value: 'search' },
  ],
};
const TRAJECTORY = { step_key: 'canonical_operation', reference: ['CANONICAL_OPERATION_CHAT', 'CANONICAL_OPERATION_RETRIEVAL', 'CANONICAL_OPERATION_INVOKE_WORKFLOW'] };

describe('POST /evaluation/evaluate', () => {
  it('a deterministic gate scores a run sent by the OpenTelemetry SDK: score, label, provenance with execution (NOT_SAMPLED, FREE, COMPLETED), occurred_at the run start, release declared none', async () => {
    const p = await project();
    const spans = await p.run();
    const runId = spans.root.spanContext().traceId;
    await p.evaluator('task-gate', 'EVALUATOR_KIND_DETERMINISTIC', GATE, 'task_success');
    const res = await p.evaluate('task-gate', 1, runId);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ already_evaluated: false, stored: true });
    expect(body.result).toMatchObject({
      project_id: p.projectId,
      metric_name: 'task_success',
      numeric_value: 1,
      label: 'pass',
      provenance: {
        evaluator: { evaluator_id: 'task-gate', version: 1 },
        mode: 'EVALUATION_MODE_ON_DEMAND',
        subject_kind: 'SUBJECT_KIND_AGENT_RUN',
        subject_ref: runId,
        legacy_source: '',
        execution: { sampling: 'NOT_SAMPLED', cost_state: 'FREE', charged_cost_nano_usd: 0, input_tokens: 0, output_tokens: 0, judge_model_state: 'NOT_APPLICABLE', job_status: 'COMPLETED' },
      },
      release_declaration: 'RELEASE_NOT_DECLARED',
      occurred_at: isoFromMicros(hrMicros(readable(spans.root).startTime)),
    });
    expect(body.result.subject_release).toBeUndefined();
    expect(body.result.provenance.execution.sampling_rule_id).toBeUndefined();
  });

  it('"same subject and evaluator version asked again: returns it with already_evaluated: true; no re-run, no new spend"; an upper-case run id is the same subject', async () => {
    const p = await project();
    const runId = (await p.run()).root.spanContext().traceId;
    await p.evaluator('again', 'EVALUATOR_KIND_DETERMINISTIC', GATE);
    const first = (await p.evaluate('again', 1, runId)).json();
    const second = await p.evaluate('again', 1, runId.toUpperCase());
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ already_evaluated: true, stored: true, result: { result_id: first.result.result_id, evaluated_at: first.result.evaluated_at } });
    const read = (await p.call('GET', `/evaluation/results?subject_ref=${runId}`)).json();
    expect(read.results).toHaveLength(1);
  });

  it('concurrent identical requests store one result; each answer is 200 (scored or already_evaluated) or 409 evaluation_in_progress, never a 5xx', async () => {
    const p = await project();
    const runId = (await p.run()).root.spanContext().traceId;
    await p.evaluator('race', 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', TRAJECTORY);
    const answers = await Promise.all(Array.from({ length: 8 }, () => p.evaluate('race', 1, runId)));
    for (const a of answers) expect([200, 409], a.body).toContain(a.statusCode);
    for (const a of answers.filter((x) => x.statusCode === 409)) expect(a.json().error).toBe('evaluation_in_progress');
    expect(answers.filter((a) => a.statusCode === 200 && a.json().already_evaluated === false)).toHaveLength(1);
    expect((await p.call('GET', `/evaluation/results?subject_ref=${runId}`)).json().results).toHaveLength(1);
  });

  it('a reference trajectory scores the longest in-order match over the reference length (extra steps do not reduce it)', async () => {
    const p = await project();
    // The SDK stamps span starts in whole milliseconds, so the steps are sent one millisecond apart to have
    // a strict order: chat, tool, tool, retrieval, memory upsert.
    const runId = await sendSpans({ base, key: p.key, scope: 'eval-test', resource: { 'service.name': 'eval-agent' } }, (tracer) => {
      const t0 = Date.now();
      const root = tracer.startSpan('invoke_agent', { startTime: t0, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'eval-agent' } });
      ['chat', 'execute_tool', 'execute_tool', 'retrieval', 'upsert_memory'].forEach((op, i) => {
        const c = tracer.startSpan(op, { startTime: t0 + 1 + i, attributes: { 'gen_ai.operation.name': op, ...(op === 'execute_tool' ? { 'gen_ai.tool.name': `tool-${i}` } : {}) } }, trace.setSpan(ROOT_CONTEXT, root));
        c.end(t0 + 1.5 + i);
      });
      root.end(t0 + 7);
      return root.spanContext().traceId;
    });
    await p.evaluator('traj', 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', TRAJECTORY);
    const res = await p.evaluate('traj', 1, runId);
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json().result;
    // chat and retrieval match the reference in order: 2 of 3.
    expect(r.numeric_value).toBeCloseTo(2 / 3, 10);
  });

  it('a step subject is <run_id>/<span_id> and is scored on that step only; a session subject by its key', async () => {
    const p = await project();
    const spans = await p.run({ conversationId: 'conv-eval-1' });
    const runId = spans.root.spanContext().traceId;
    await p.evaluator('tools', 'EVALUATOR_KIND_DETERMINISTIC', { aggregation: 'all', assertions: [{ field: 'steps.tool_names', op: 'contains', value: 'search' }] });
    const onTool = await p.evaluate('tools', 1, `${runId}/${spans.tool.spanContext().spanId}`, 'SUBJECT_KIND_AGENT_STEP');
    expect(onTool.statusCode, onTool.body).toBe(200);
    expect(onTool.json().result).toMatchObject({ numeric_value: 1, provenance: { subject_kind: 'SUBJECT_KIND_AGENT_STEP', subject_ref: `${runId}/${spans.tool.spanContext().spanId}` } });
    const onChat = await p.evaluate('tools', 1, `${runId}/${spans.chat.spanContext().spanId}`, 'SUBJECT_KIND_AGENT_STEP');
    expect(onChat.json().result.numeric_value).toBe(0);
    await p.evaluator('runs', 'EVALUATOR_KIND_DETERMINISTIC', { measurement: 'session.run_count' });
    const session = await p.evaluate('runs', 1, 'conv-eval-1', 'SUBJECT_KIND_AGENT_SESSION');
    expect(session.statusCode, session.body).toBe(200);
    expect(session.json().result).toMatchObject({ numeric_value: 1, provenance: { subject_kind: 'SUBJECT_KIND_AGENT_SESSION', subject_ref: 'conv-eval-1' } });
  });

  it('the release observed on the subject (service.version) is subject_release with RELEASE_DECLARED', async () => {
    const p = await project();
    const { sendSpans } = await import('../../testing/otel-agent-run.js');
    const runId = await sendSpans({ base, key: p.key, scope: 'eval-test', resource: { 'service.name': 'rel', 'service.version': '2.4.1' } }, (tracer) => {
      const root = tracer.startSpan('invoke_agent', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'svc.agent.run.status': 'completed' } });
      root.end();
      return root.spanContext().traceId;
    });
    await p.evaluator('rel', 'EVALUATOR_KIND_DETERMINISTIC', { aggregation: 'all', assertions: [{ field: 'run.status', op: 'equals', value: 'completed' }] });
    const r = (await p.evaluate('rel', 1, runId)).json().result;
    expect(r).toMatchObject({ subject_release: '2.4.1', release_declaration: 'RELEASE_DECLARED', numeric_value: 1 });
  });

  describe('refusals, exactly as the error table says', () => {
    const RUN = 'ab'.repeat(16);
    it.each([
      ['SUBJECT_KIND_AGENT_TURN', 'turn-1', 501],
      ['SUBJECT_KIND_DATASET_ITEM', 'item-1', 501],
      ['SUBJECT_KIND_UNSPECIFIED', RUN, 400],
      ['SUBJECT_KIND_AGENT_RUNS', RUN, 400],
      ['SUBJECT_KIND_AGENT_RUN', 'not-a-run-id', 400],
      ['SUBJECT_KIND_AGENT_STEP', RUN, 400],
      ['SUBJECT_KIND_AGENT_STEP', `${RUN}/xyz`, 400],
      ['SUBJECT_KIND_AGENT_STEP', `${RUN}/${'a'.repeat(16)}/extra`, 400],
      ['SUBJECT_KIND_AGENT_SESSION', 'x'.repeat(257), 400],
    ])('%s with subject_ref %s answers %i', async (kind, ref, status) => {
      const p = await project();
      await p.evaluator('gate', 'EVALUATOR_KIND_DETERMINISTIC', GATE);
      const res = await p.evaluate('gate', 1, ref, kind);
      expect(res.statusCode, res.body).toBe(status);
      expect(Object.keys(res.json()).sort()).toEqual(expect.arrayContaining(['error', 'message']));
    });

    it('404: no such run, step, session or evaluator version ("no exact reference matches" version 0, the legacy mark); 400: a version that is not an integer', async () => {
      const p = await project();
      const spans = await p.run();
      const runId = spans.root.spanContext().traceId;
      await p.evaluator('gate', 'EVALUATOR_KIND_DETERMINISTIC', GATE);
      expect((await p.evaluate('gate', 1, RUN)).statusCode).toBe(404);
      await p.evaluator('steps', 'EVALUATOR_KIND_DETERMINISTIC', { aggregation: 'all', assertions: [{ field: 'steps.tool_names', op: 'contains', value: 'search' }] });
      expect((await p.evaluate('steps', 1, `${runId}/${'1'.repeat(16)}`, 'SUBJECT_KIND_AGENT_STEP')).statusCode).toBe(404);
      await p.evaluator('sess', 'EVALUATOR_KIND_DETERMINISTIC', { measurement: 'session.run_count' });
      expect((await p.evaluate('sess', 1, 'no-such-session', 'SUBJECT_KIND_AGENT_SESSION')).statusCode).toBe(404);
      expect((await p.evaluate('gate', 2, runId)).statusCode).toBe(404);
      expect((await p.evaluate('gate', 0, runId)).statusCode).toBe(404);
      expect((await p.evaluate('missing', 1, runId)).statusCode).toBe(404);
      for (const version of ['latest', '1', 1.5, -1, null]) {
        const res = await p.call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'gate', version }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId });
        expect(res.statusCode, `${version}: ${res.body}`).toBe(400);
      }
      expect((await p.call('GET', `/evaluation/results?subject_ref=${runId}`)).json().results).toEqual([]);
    });

    it('"a project-scoped key naming another project returns 404, the same answer as a missing evaluator"', async () => {
      const a = await project();
      const b = await project();
      const runId = (await b.run()).root.spanContext().traceId;
      await b.evaluator('gate', 'EVALUATOR_KIND_DETERMINISTIC', GATE);
      const res = await a.call('POST', `/evaluation/evaluate?project_id=${b.projectId}`, { evaluator: { evaluator_id: 'gate', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId });
      expect(res.statusCode).toBe(404);
      const own = await a.evaluate('gate', 1, runId);
      expect(own.statusCode).toBe(404);
      expect((await b.call('GET', `/evaluation/results?subject_ref=${runId}`)).json().results).toEqual([]);
    });

    it('"family asked of the wrong subject returns 400 (carries nothing this evaluator can measure)"', async () => {
      const p = await project();
      const spans = await p.run({ conversationId: 'conv-fam' });
      await p.evaluator('sess', 'EVALUATOR_KIND_DETERMINISTIC', { measurement: 'session.turn_count' });
      const res = await p.evaluate('sess', 1, spans.root.spanContext().traceId);
      expect(res.statusCode).toBe(400);
      await p.evaluator('runs', 'EVALUATOR_KIND_DETERMINISTIC', GATE);
      expect((await p.evaluate('runs', 1, 'conv-fam', 'SUBJECT_KIND_AGENT_SESSION')).statusCode).toBe(400);
    });

    it('"a run carrying nothing measurable is recorded as unmeasured and retried later, never scored zero": 400 naming what was missing, listed as unmeasured, no result', async () => {
      const p = await project([...SCOPES, 'llm:write']);
      const runId = (await p.run()).root.spanContext().traceId; // gpt-4o-2024-08-06 has no price in this project
      await p.evaluator('cost', 'EVALUATOR_KIND_DETERMINISTIC', { measurement: 'run.cost_nanos' });
      const res = await p.evaluate('cost', 1, runId);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_request', details: { reason: 'not_measurable' } });
      const again = await p.evaluate('cost', 1, runId);
      expect(again.statusCode).toBe(400);
      const unscored = (await p.call('GET', '/evaluation/unscored-subjects')).json().unscored_subjects;
      expect(unscored).toEqual([expect.objectContaining({ evaluator: { evaluator_id: 'cost', version: 1 }, subject_ref: runId, outcome: 'unmeasured', attempts: 2, withheld: null })]);
      expect((await p.call('GET', `/evaluation/results?subject_ref=${runId}`)).json().results).toEqual([]);
      // Once the model is priced the run is measurable, scored, and no longer listed as unscored.
      const priced = await p.call('PUT', '/llm/pricing', { model: 'gpt-4o-2024-08-06', provider: 'openai', input_usd_per_million_tokens: 2.5, output_usd_per_million_tokens: 10 });
      expect(priced.statusCode, priced.body).toBe(200);
      const scored = await p.evaluate('cost', 1, runId);
      expect(scored.statusCode, scored.body).toBe(200);
      expect(scored.json().result.numeric_value).toBe(1200 * 2500 + 350 * 10000);
      expect((await p.call('GET', '/evaluation/unscored-subjects')).json().unscored_subjects).toEqual([]);
    });

    it('scopes: evaluating needs evals:write, reading results evals:read; actor fields in the body are refused', async () => {
      const reader = await project(['evals:read', 'ingest:write', 'agents:read']);
      const res = await reader.call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'x', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: RUN });
      expect(res.statusCode).toBe(403);
      const writer = await project(['evals:write']);
      expect((await writer.call('GET', '/evaluation/results')).statusCode).toBe(403);
      const full = await project();
      const actor = await full.call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'x', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: RUN, created_by: 'me' });
      expect(actor.statusCode).toBe(400);
      expect(actor.json().message).toContain('created_by');
    });

    it('bad bodies as an attacker writes them: 4xx in our shape, nothing stored', async () => {
      const p = await project();
      const deep: Record<string, unknown> = {};
      let cur = deep;
      for (let i = 0; i < 500; i++) cur = (cur.a = {}) as Record<string, unknown>;
      const bodies: unknown[] = [
        'not json',
        [],
        {},
        { evaluator: 'gate@1', subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: RUN },
        { evaluator: { evaluator_id: 'gate', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: RUN, extra: 1 },
        { evaluator: { evaluator_id: 'gate', version: 1, latest: true }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: RUN },
        { evaluator: { evaluator_id: 'g'.repeat(100_000), version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: RUN },
        { evaluator: { evaluator_id: 'gate', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: deep },
        { evaluator: { evaluator_id: 'gate', version: 1 }, subject_kind: ['SUBJECT_KIND_AGENT_RUN'], subject_ref: RUN },
      ];
      for (const b of bodies) {
        const res = await t.call({ method: 'POST', url: '/api/v1/evaluation/evaluate', key: p.key, payload: b as object, ...(typeof b === 'string' ? { headers: { 'content-type': 'application/json' } } : {}) });
        expect(res.statusCode, `${JSON.stringify(b).slice(0, 80)} -> ${res.body}`).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
        expect(typeof res.json().error).toBe('string');
      }
      const dup = await t.call({ method: 'POST', url: `/api/v1/evaluation/evaluate?project_id=${p.projectId}&project_id=${p.projectId}`, key: p.key, payload: {} });
      expect(dup.statusCode).toBe(400);
      expect((await p.call('GET', '/evaluation/results')).json().results).toEqual([]);
    });
  });

  it('explanation: shown with agents:content:read and a policy that lets model transcripts be read; otherwise absent, with who withheld it', async () => {
    const FAILS = { aggregation: 'all', assertions: [{ field: 'run.error_steps', op: 'lte', number: 0 }] };
    const narrow = await project();
    const narrowRun = (await narrow.run()).root.spanContext().traceId;
    await narrow.evaluator('gate', 'EVALUATOR_KIND_DETERMINISTIC', FAILS);
    const withheld = (await narrow.evaluate('gate', 1, narrowRun)).json().result;
    expect(withheld).toMatchObject({ numeric_value: 0, explanation_withheld_by: 'credential_scope' });
    expect(withheld.explanation).toBeUndefined();

    const p = await project([...SCOPES, 'agents:content:read']);
    const runId = (await p.run()).root.spanContext().traceId;
    await p.evaluator('gate', 'EVALUATOR_KIND_DETERMINISTIC', FAILS);
    const first = (await p.evaluate('gate', 1, runId)).json().result;
    expect(first.explanation).toBeUndefined();
    expect(first.explanation_withheld_by).toBe('no_policy');
    await allowAllContent(t, p.projectId);
    const shown = (await p.call('GET', `/evaluation/results?subject_ref=${runId}`)).json().results[0];
    expect(typeof shown.explanation).toBe('string');
    expect(shown.explanation_withheld_by).toBeUndefined();
  });
});
