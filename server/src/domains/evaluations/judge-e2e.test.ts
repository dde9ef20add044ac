/**
 * The model judge end to end through `POST /evaluation/evaluate`: an agent run with recorded content sent by
 * the real OpenTelemetry SDK, an LLM-judge evaluator created over HTTP, and a real OpenAI-compatible model
 * server on loopback (testing/judge-model-server.ts) that the service calls. Covers an unusable reply that is
 * retried, a reply that is never usable (a FAILED answer, nothing stored), a policy that withholds
 * `model_transcript` (403, recorded as withheld, nothing sent), a run with none of the selected evidence
 * (not sent to a model), and the organization budget (429).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { gridRules, setContentPolicy } from '../../testing/content-policy.js';
import { JUDGE_REPLY_MODEL, startJudgeModelServer, verdict, type JudgeModelServer } from '../../testing/judge-model-server.js';
import { sendAgentRun } from '../../testing/otel-agent-run.js';
import { ALL_CONTENT, SECRET_PROMPT } from './judge/judge-fixture.js';

let t: TestApp;
let base: string;
let model: JudgeModelServer;
beforeAll(async () => {
  model = await startJudgeModelServer();
  t = await testApp({ env: { SVC_JUDGE_BASE_URL: model.baseUrl, SVC_JUDGE_API_KEY: 'judge-key', SVC_JUDGE_MODEL: 'judge-x', SVC_JUDGE_MAX_ATTEMPTS: '2', SVC_CONTENT_POLICY_TTL_SECONDS: '0' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  await budget(1_000_000_000_000);
});
afterAll(async () => {
  await t?.close();
  await model?.close();
});

async function budget(daily_limit_nano_usd: number) {
  const res = await t.call({ method: 'PUT', url: '/api/v1/evaluation/budget', payload: { daily_limit_nano_usd } });
  expect(res.statusCode, res.body).toBe(200);
}

const RUBRIC = {
  instructions: 'Judge the support answer.',
  criteria: [
    { name: 'helpful', description: 'the answer addresses the question', weight: 3 },
    { name: 'grounded', description: 'the answer follows from the tool results' },
  ],
  evidence: ['model_transcript', 'step_sequence'],
};

/** A project whose content policy allows every cell except those `cell` decides otherwise (null: no policy at all), with a run carrying content. */
async function project(cell: ((c: string, b: string) => string | undefined) | null = () => undefined) {
  const p = await projectWithKey(t, ['evals:read', 'evals:write', 'agents:read', 'agents:content:read', 'ingest:write']);
  if (cell) await setContentPolicy(t, p.projectId, gridRules((c, b) => (cell(c, b) ?? 'allow') as never));
  const spans = await sendAgentRun({ base, format: 'json', key: p.key, content: ALL_CONTENT });
  const call = (method: 'GET' | 'POST', url: string, payload?: object) => t.call({ method, url: `/api/v1${url}`, key: p.key, ...(payload ? { payload } : {}) });
  const created = await call('POST', '/evaluation/evaluators', { evaluator_id: 'judge', display_name: 'Support judge', metric_name: 'support_quality', kind: 'EVALUATOR_KIND_LLM_JUDGE', config_json: JSON.stringify(RUBRIC) });
  expect(created.statusCode, created.body).toBe(201);
  const runId = spans.root.spanContext().traceId;
  const evaluate = () => call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'judge', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId });
  return { ...p, runId, call, evaluate };
}

describe('the model judge through POST /evaluation/evaluate', () => {
  it('an unusable reply is retried, not recorded as a failing score; the usable one is the weighted mean with one label and one sentence; tokens of both calls in provenance.execution', async () => {
    const p = await project();
    const before = model.requests.length;
    model.script({ content: 'I think it is fine.' }, { content: verdict({ helpful: 1, grounded: 0.5 }, 'good', 'The answer cites the refund policy.') });
    const res = await p.evaluate();
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json().result;
    expect(r).toMatchObject({
      metric_name: 'support_quality',
      numeric_value: (3 * 1 + 1 * 0.5) / 4,
      label: 'good',
      provenance: {
        evaluator: { evaluator_id: 'judge', version: 1 },
        execution: { sampling: 'NOT_SAMPLED', input_tokens: 200, output_tokens: 40, judge_model_state: 'RECORDED', judge_model: JUDGE_REPLY_MODEL, cost_state: 'UNPRICED', job_status: 'COMPLETED' },
      },
    });
    // Policy allows: the recorded transcript went to the model, with the default model and the key.
    expect(model.requests.length - before).toBe(2);
    const sent = model.requests[model.requests.length - 1];
    expect(sent.body.model).toBe('judge-x');
    expect(sent.headers.authorization).toBe('Bearer judge-key');
    expect(model.userMessage()).toContain('refund policy for order 4471');
    // Asked again: the stored answer, no new call.
    const again = await p.evaluate();
    expect(again.json()).toMatchObject({ already_evaluated: true, result: { result_id: r.result_id } });
    expect(model.requests.length - before).toBe(2);
  });

  it('"a model reply that is unusable is retried and not recorded as a failing score": every attempt unusable is a FAILED answer, stored nowhere, recorded as unmeasured', async () => {
    const p = await project();
    model.script({ raw: 'not a chat completion' }, { content: '{"scores": {"helpful": 7}}' });
    const res = await p.evaluate();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      already_evaluated: false,
      stored: false,
      result: { metric_name: 'support_quality', provenance: { execution: { job_status: 'FAILED', job_failure_class: 'judge_reply_unusable' } } },
    });
    expect(res.json().result.numeric_value).toBeUndefined();
    expect((await p.call('GET', `/evaluation/results?subject_ref=${p.runId}`)).json().results).toEqual([]);
    expect((await p.call('GET', '/evaluation/unscored-subjects')).json().unscored_subjects).toMatchObject([{ outcome: 'unmeasured', reason: 'judge_reply_unusable' }]);
  });

  it('"content the policy withheld ... a refusal refuses the whole evaluation with 403": recorded as withheld (kind, boundary, decided by the policy), nothing sent, never scored 0', async () => {
    const p = await project((c, b) => (c === 'model_transcript' && b === 'judge_transfer' ? 'deny' : undefined));
    const before = model.requests.length;
    for (let i = 0; i < 2; i++) {
      const res = await p.evaluate();
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({ error: 'content_withheld', details: { content_class: 'model_transcript', boundary: 'judge_transfer', decided_by: 'policy' } });
    }
    expect(model.requests.length).toBe(before);
    expect((await p.call('GET', `/evaluation/results?subject_ref=${p.runId}`)).json().results).toEqual([]);
    const [u] = (await p.call('GET', '/evaluation/unscored-subjects?outcome=withheld')).json().unscored_subjects;
    expect(u).toMatchObject({ outcome: 'withheld', withheld: { content_class: 'model_transcript', boundary: 'judge_transfer', decided_by: 'policy' }, attempts: 2 });
  });

  it('"the read cell and the judge_transfer cell are independent": read denied, judge transfer allowed: the judge sees the transcript', async () => {
    const p = await project((c, b) => (b === 'read' ? 'deny' : undefined));
    model.script({ content: verdict({ helpful: 1, grounded: 1 }) });
    const res = await p.evaluate();
    expect(res.statusCode, res.body).toBe(200);
    expect(model.userMessage()).toContain(SECRET_PROMPT.slice(10, 40));
    // ... while the reader, whose read cell is deny, is not shown the explanation.
    expect(res.json().result).toMatchObject({ explanation_withheld_by: 'policy' });
  });

  it('"a run carrying none of the selected evidence is not sent to a model": without a policy no content was stored, so a transcript-only rubric is 400 naming it and nothing is sent', async () => {
    const p = await project(null);
    const created = await p.call('POST', '/evaluation/evaluators', {
      evaluator_id: 'transcript-only',
      display_name: 'Transcript judge',
      metric_name: 'support_quality',
      kind: 'EVALUATOR_KIND_LLM_JUDGE',
      config_json: JSON.stringify({ ...RUBRIC, evidence: ['model_transcript'] }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const before = model.requests.length;
    const res = await p.call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'transcript-only', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: p.runId });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().details).toMatchObject({ reason: 'not_measurable', missing: 'no_selected_evidence' });
    expect(model.requests.length).toBe(before);
  });

  it('"429: daily evaluation budget spent": a model judge is refused before any call; a stored answer is still returned', async () => {
    const p = await project();
    await budget(0);
    try {
      const before = model.requests.length;
      const res = await p.evaluate();
      expect(res.statusCode, res.body).toBe(429);
      expect(res.json().error).toBe('budget_exhausted');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(model.requests.length).toBe(before);
    } finally {
      await budget(1_000_000_000_000);
    }
  });
});
