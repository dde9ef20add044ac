/**
 * The judge's calls, result and execution record against a real HTTP judge model on loopback: the
 * weighted result, retries of unusable replies and of transport failures, timeouts and the caller's
 * abort, the cost states, the evidence bound, and a judge that is not configured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config.js';
import { ApiError } from '../../../http/errors.js';
import { DEFAULT_JUDGE_USAGE, JUDGE_REPLY_MODEL, verdict } from '../../../testing/judge-model-server.js';
import type { RunFacts } from '../model.js';
import { modelJudge } from './index.js';
import { ALL_CONTENT, input, judgeFixture, judgeOf, projectWith, rubric, sendRun, type JudgeFixture } from './judge-fixture.js';

let f: JudgeFixture;
let p: { projectId: string; key: string };
let run: RunFacts;
beforeAll(async () => {
  f = await judgeFixture();
  p = await projectWith(f);
  run = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
});
afterAll(async () => f?.close());

const judge = (over: Parameters<typeof rubric>[0] = {}, opts: Parameters<typeof input>[4] = {}, timeoutMs?: number) =>
  judgeOf(f, {}, timeoutMs).score(input(f, p.projectId, run, rubric(over), opts));
const newRequests = (before: number) => f.server.requests.slice(before);

describe('the result', () => {
  it('"the result is the weighted mean of the criteria scores", the label, and the reasoning as explanation', async () => {
    const before = f.server.requests.length;
    f.server.script({ content: verdict({ helpful: 1, grounded: 0 }, 'mostly_good', 'It answered but cited nothing.') });
    const out = await judge();
    expect(out).toEqual({
      outcome: 'scored',
      numericValue: 0.75,
      label: 'mostly_good',
      explanation: 'It answered but cited nothing.',
      execution: {
        cost_state: 'UNPRICED',
        charged_cost_nano_usd: 0,
        input_tokens: DEFAULT_JUDGE_USAGE.prompt_tokens,
        output_tokens: DEFAULT_JUDGE_USAGE.completion_tokens,
        judge_model_state: 'RECORDED',
        judge_model: JUDGE_REPLY_MODEL,
        job_status: 'COMPLETED',
      },
    });
    const [req] = newRequests(before);
    expect(req!.path).toBe('/v1/chat/completions');
    expect(req!.headers.authorization).toBe('Bearer judge-secret-key');
    expect(req!.body).toMatchObject({ model: 'judge-default', temperature: 0, response_format: { type: 'json_object' } });
    expect(req!.body.messages!.map((m) => m.role)).toEqual(['system', 'user']);
    expect(req!.body.messages![0]!.content).toContain('"helpful": <number from 0 to 1>');
  });

  it('the evaluator\'s model and instructions are used when it names them', async () => {
    const before = f.server.requests.length;
    f.server.script({ content: verdict({ helpful: 0.5, grounded: 0.5 }) });
    await judge({ model: 'gpt-judge-x', instructions: 'Be strict about refunds.' });
    const [req] = newRequests(before);
    expect(req!.body.model).toBe('gpt-judge-x');
    expect(f.server.userMessage()).toMatch(/^Be strict about refunds\./);
  });

  it('"a model reply that is unusable is retried": a new call, and the tokens of both are counted', async () => {
    const before = f.server.requests.length;
    f.server.script({ content: 'Sure! The run looks fine.', usage: { prompt_tokens: 90, completion_tokens: 8 } }, { content: verdict({ helpful: 0, grounded: 1 }) });
    const out = await judge();
    expect(newRequests(before)).toHaveLength(2);
    expect(out).toMatchObject({ outcome: 'scored', numericValue: 0.25, execution: { input_tokens: 190, output_tokens: 28, job_status: 'COMPLETED' } });
  });

  it('"and not recorded as a failing score": every attempt unusable is unmeasured judge_reply_unusable, with the spent tokens', async () => {
    const before = f.server.requests.length;
    f.server.script(
      { content: JSON.stringify({ scores: { helpful: 1 }, label: 'x', reasoning: 'r' }) },
      { content: JSON.stringify({ scores: { helpful: 1, grounded: 1.5 }, label: 'x', reasoning: 'r' }) },
      { content: JSON.stringify({ scores: { helpful: 1, grounded: 1 }, label: 'x', reasoning: '' }) },
    );
    const out = await judge();
    expect(newRequests(before)).toHaveLength(3);
    expect(out).toEqual({
      outcome: 'unmeasured',
      reason: 'judge_reply_unusable',
      execution: expect.objectContaining({ input_tokens: 300, output_tokens: 60, job_status: 'FAILED', job_failure_class: 'judge_reply_unusable' }),
    });
  });
});

describe('transport', () => {
  it('a call that never answers times out and is retried', async () => {
    const before = f.server.requests.length;
    f.server.script({ hang: true }, { content: verdict({ helpful: 1, grounded: 1 }) });
    const out = await judge({}, {}, 300);
    expect(newRequests(before)).toHaveLength(2);
    expect(out).toMatchObject({ outcome: 'scored', numericValue: 1, execution: { input_tokens: 100 } });
  });

  it('timeouts on every attempt: 503 unavailable, not a score', async () => {
    const before = f.server.requests.length;
    f.server.script({ hang: true }, { hang: true }, { hang: true });
    const err = await judge({}, {}, 200).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503, code: 'unavailable' });
    expect((err as Error).message).toMatch(/timed out/);
    expect(newRequests(before)).toHaveLength(3);
  });

  it('the caller\'s AbortSignal (the evaluation\'s time budget) aborts the call in flight and nothing is retried', async () => {
    const before = f.server.requests.length;
    f.server.script({ hang: true });
    const ac = new AbortController();
    const reason = new Error('evaluation budget exceeded');
    setTimeout(() => ac.abort(reason), 150);
    const started = Date.now();
    await expect(judge({}, { signal: ac.signal }, 60_000)).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(newRequests(before)).toHaveLength(1);
  });

  it('429 and 5xx answers are retried within the attempts', async () => {
    const before = f.server.requests.length;
    f.server.script({ status: 429, headers: { 'retry-after': '0' } }, { status: 502 }, { content: verdict({ helpful: 1, grounded: 0 }) });
    expect(await judge()).toMatchObject({ outcome: 'scored', numericValue: 0.75 });
    expect(newRequests(before)).toHaveLength(3);
  });

  it('a refusal another call would not change (401) is a 503 at once, without retries', async () => {
    const before = f.server.requests.length;
    f.server.script({ status: 401 });
    await expect(judge()).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    expect(newRequests(before)).toHaveLength(1);
  });

  it('a 200 that is not a chat completion, or a reply over 1 MiB, is retried', async () => {
    const before = f.server.requests.length;
    f.server.script({ raw: '<html>gateway</html>' }, { raw: `"${'x'.repeat(1024 * 1024 + 1)}"` }, { content: verdict({ helpful: 1, grounded: 1 }) });
    expect(await judge()).toMatchObject({ outcome: 'scored', numericValue: 1, execution: { input_tokens: 100 } });
    expect(newRequests(before)).toHaveLength(3);
  });

  it('not configured: 503 judge_not_configured naming the variable', async () => {
    const none = judgeOf(f, { model: null });
    await expect(none.score(input(f, p.projectId, run, rubric()))).rejects.toMatchObject({ status: 503, code: 'judge_not_configured', details: { variable: 'SVC_JUDGE_BASE_URL' } });
    const noModel = judgeOf(f, { settings: { maxAttempts: 1 } });
    await expect(noModel.score(input(f, p.projectId, run, rubric()))).rejects.toMatchObject({ status: 503, code: 'judge_not_configured', details: { variable: 'SVC_JUDGE_MODEL' } });
  });
});

describe('the judge as the service builds it from SVC_JUDGE_*', () => {
  const deps = () => ({ steps: f.store, policy: f.t.ctx.contentPolicy, pricing: f.t.ctx.llmPricing });

  it('calls the configured endpoint with the configured key and default model', async () => {
    const env = { SVC_JUDGE_BASE_URL: f.server.baseUrl, SVC_JUDGE_API_KEY: 'sk-configured', SVC_JUDGE_MODEL: 'configured-model', SVC_JUDGE_MAX_ATTEMPTS: '1' };
    const before = f.server.requests.length;
    f.server.script({ content: verdict({ helpful: 1, grounded: 1 }) });
    const out = await modelJudge(loadConfig(env).judge, deps()).score(input(f, p.projectId, run, rubric()));
    expect(out).toMatchObject({ outcome: 'scored', numericValue: 1 });
    const [req] = newRequests(before);
    expect(req!.headers.authorization).toBe('Bearer sk-configured');
    expect(req!.body.model).toBe('configured-model');
  });

  it('SVC_JUDGE_BASE_URL unset: 503 judge_not_configured, nothing sent', async () => {
    const before = f.server.requests.length;
    const err = await modelJudge(loadConfig({ SVC_JUDGE_MODEL: 'm' }).judge, deps())
      .score(input(f, p.projectId, run, rubric()))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'judge_not_configured' });
    expect((err as Error).message).toContain('SVC_JUDGE_BASE_URL');
    expect(newRequests(before)).toHaveLength(0);
  });
});

describe('the execution record', () => {
  it('CHARGED when usage is reported and the model is priced in the project\'s price table (every call summed)', async () => {
    const q = await projectWith(f);
    const r = await sendRun(f, q.key, q.projectId, ALL_CONTENT);
    const price = await f.t.call({ method: 'PUT', url: `/api/v1/llm/pricing?project_id=${q.projectId}`, payload: { model: JUDGE_REPLY_MODEL, input_usd_per_million_tokens: 2.5, output_usd_per_million_tokens: 10 } });
    expect(price.statusCode, price.body).toBe(200);
    f.server.script({ content: 'not json' }, { content: verdict({ helpful: 1, grounded: 1 }) });
    const out = await judgeOf(f).score(input(f, q.projectId, r, rubric()));
    // Each call: 100 × 2500 + 20 × 10000 nanos.
    expect(out).toMatchObject({ outcome: 'scored', execution: { cost_state: 'CHARGED', charged_cost_nano_usd: 900_000, input_tokens: 200, output_tokens: 40 } });
  });

  it('UNREPORTED cost when a reply reports no usage; UNREPORTED judge model when it names none', async () => {
    f.server.script({ content: verdict({ helpful: 1, grounded: 1 }), usage: null, model: null });
    const out = await judge();
    expect(out.outcome === 'scored' && out.execution).toEqual({
      cost_state: 'UNREPORTED',
      charged_cost_nano_usd: 0,
      input_tokens: 0,
      output_tokens: 0,
      judge_model_state: 'UNREPORTED',
      job_status: 'COMPLETED',
    });
  });

  it('evidence over max_evidence_chars is cut deterministically and says so: PARTIAL, evidence_truncated', async () => {
    const q = await projectWith(f);
    const long = `[{"role":"user","content":"${'refund '.repeat(400)}"}]`;
    const r = await sendRun(f, q.key, q.projectId, { ...ALL_CONTENT, prompt: long });
    const asked: string[] = [];
    for (let i = 0; i < 2; i++) {
      f.server.script({ content: verdict({ helpful: 1, grounded: 1 }) });
      const out = await judgeOf(f).score(input(f, q.projectId, r, rubric({ max_evidence_chars: 500 })));
      expect(out).toMatchObject({ outcome: 'scored', execution: { job_status: 'PARTIAL', job_failure_class: 'evidence_truncated' } });
      asked.push(f.server.userMessage());
    }
    expect(asked[0]).toBe(asked[1]);
    const evidence = [...asked[0]!.matchAll(/<evidence section="\w+">\n# [^\n]*\n([\s\S]*?)\n<\/evidence>/g)].map((m) => [...m[1]!].length);
    expect(evidence.reduce((a, b) => a + b, 0)).toBe(500);
    expect(asked[0]).toMatch(/model transcript \(recorded prompt and response bodies\) \(cut to its first \d+ of \d+ characters\)/);
  });
});
