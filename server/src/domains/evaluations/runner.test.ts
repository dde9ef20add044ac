/**
 * The runner's time budgets and its bookkeeping (docs/evaluations.md "Evaluating"): "timeout budget (five
 * minutes) exceeded: 504; no result stored", "subject not readable in its own budget: 504, not a 404",
 * "409 evaluation already in progress", the budget's 429 before anything is read, and a withholding recorded.
 * The ports are the seams here (a subject reader and a judge that take as long as a test says, shortened
 * budgets); the routes, the real scorers and the real judge are driven end to end in evaluate.test.ts and
 * judge-e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import { randomIds, systemClock } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { openTestControl } from '../../testing/app.js';
import type { EvaluatorConfig, EvaluatorKind, RunFacts, ScoreOutcome } from './model.js';
import { FREE_EXECUTION } from './model.js';
import type { EvaluationBudget, EvaluatorVersions, JudgeScorer, SubjectFactsReader } from './ports.js';
import { EvaluationRunnerService, type ModellessScoring } from './runner.js';

const RUN = 'cd'.repeat(16);
const caller: Principal = {
  kind: 'api_key',
  keyId: 'k1',
  signInId: null,
  connectionId: null,
  orgId: 'o1',
  projectId: 'p1',
  scopes: new Set(['evals:write']),
  userId: null,
  role: null,
} as unknown as Principal;

const facts: RunFacts = {
  kind: 'run',
  runId: RUN,
  status: 'completed',
  startUs: Date.UTC(2026, 0, 1) * 1000,
  durationMs: 10,
  stepCount: 1,
  errorSteps: 0,
  toolCalls: 0,
  modelCalls: 0,
  costNanos: null,
  safetyErrorSteps: null,
  steps: [],
  sessionKey: null,
  release: null,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function versions(kind: EvaluatorKind): EvaluatorVersions {
  const parsed = (kind === 'EVALUATOR_KIND_LLM_JUDGE'
    ? { kind, config: { criteria: [{ name: 'c', description: 'd', weight: 1 }], evidence: ['run_summary'], max_evidence_chars: 12000 } }
    : { kind, config: { form: 'measurement', measurement: 'run.duration_ms' } }) as EvaluatorConfig;
  return {
    async version(projectId, ref) {
      if (ref.version !== 1) throw new ApiError(404, 'not_found', 'evaluator version not found');
      return {
        record: { orgId: 'o1', projectId, evaluatorId: ref.evaluator_id, version: 1, displayName: 'x', metricName: 'm', kind, configJson: '{}', createdAt: '', createdBy: '' },
        parsed,
      };
    },
  };
}

const scored: ScoreOutcome = { outcome: 'scored', numericValue: 10, label: null, explanation: null, execution: FREE_EXECUTION };

function runner(control: ControlStore, o: { readMs?: number; scoreMs?: number; judge?: () => ScoreOutcome; budget?: EvaluationBudget; kind?: EvaluatorKind; timeoutMs?: number; readBudgetMs?: number }) {
  const reader: SubjectFactsReader = {
    run: async () => (await sleep(o.readMs ?? 0), facts),
    step: async () => {
      throw new Error('not used');
    },
    session: async () => {
      throw new Error('not used');
    },
  };
  const modelless: ModellessScoring = { checkFamily: () => undefined, score: () => scored };
  const judge: JudgeScorer = { score: async ({ signal }) => (await sleep(o.scoreMs ?? 0), signal.aborted ? scored : (o.judge?.() ?? scored)) };
  const charges: number[] = [];
  const budget: EvaluationBudget = o.budget ?? { admit: async () => undefined, charge: async (_org, s) => void charges.push(s.costNanos) };
  return {
    charges,
    r: new EvaluationRunnerService(control, versions(o.kind ?? 'EVALUATOR_KIND_LLM_JUDGE'), reader, modelless, judge, budget, systemClock, randomIds, {
      timeoutMs: o.timeoutMs ?? 1000,
      subjectReadTimeoutMs: o.readBudgetMs ?? 500,
    }),
  };
}

let control: ControlStore;
let drop: () => Promise<void>;
beforeAll(async () => {
  const t = await openTestControl('sqlite');
  control = t.store;
  drop = t.drop;
});
afterAll(async () => drop());

let n = 0;
const input = () => ({
  orgId: 'o1',
  projectId: `p-${++n}`,
  evaluator: { evaluator_id: 'ev', version: 1 },
  subjectKind: 'SUBJECT_KIND_AGENT_RUN',
  subjectRef: RUN,
  trigger: { sampling: 'NOT_SAMPLED' as const, caller },
});
const key = (i: ReturnType<typeof input>) => ({ projectId: i.projectId, evaluatorId: 'ev', evaluatorVersion: 1, subjectKind: 'SUBJECT_KIND_AGENT_RUN', subjectRef: RUN });

describe('the evaluation runner', () => {
  it('"the evaluation ran past five minutes: 504; no result stored"; the claim is released, so a retry evaluates', async () => {
    const { r } = runner(control, { scoreMs: 300, timeoutMs: 100 });
    const i = input();
    const err = await r.evaluate(i).catch((e) => e);
    expect(err).toMatchObject({ status: 504, code: 'evaluation_timeout', details: { reason: 'evaluation_timeout' } });
    expect(await control.evaluationResults.find(key(i))).toBeUndefined();
    await sleep(250); // the late judge answer arrives and must not be stored either
    expect(await control.evaluationResults.find(key(i))).toBeUndefined();
    const quick = runner(control, {});
    expect(await quick.r.evaluate(i)).toMatchObject({ outcome: 'scored', alreadyEvaluated: false });
  });

  it('"subject not readable in its own budget: 504 (not a 404)"; nothing stored', async () => {
    const { r } = runner(control, { readMs: 300, readBudgetMs: 50 });
    const i = input();
    expect(await r.evaluate(i).catch((e) => e)).toMatchObject({ status: 504, details: { reason: 'subject_unreadable' } });
    expect(await control.evaluationResults.find(key(i))).toBeUndefined();
  });

  it('"409 evaluation already in progress; retry shortly": a second asker while the first runs; then already_evaluated', async () => {
    const { r } = runner(control, { scoreMs: 150 });
    const i = input();
    const first = r.evaluate(i);
    await sleep(30);
    expect(await r.evaluate(i).catch((e) => e)).toMatchObject({ status: 409, code: 'evaluation_in_progress' });
    const done = await first;
    expect(done).toMatchObject({ outcome: 'scored', alreadyEvaluated: false });
    expect(await r.evaluate(i)).toEqual({ outcome: 'scored', alreadyEvaluated: true, resultId: (done as { resultId: string }).resultId });
  });

  it('"429 daily evaluation budget spent": refused before the subject is read; nothing stored; a stored answer is still returned free', async () => {
    let reads = 0;
    const spent: EvaluationBudget = {
      admit: async () => {
        throw new ApiError(429, 'budget_exhausted', 'spent');
      },
      charge: async () => undefined,
    };
    const { r } = runner(control, { budget: spent });
    const counting = r as unknown as { facts: SubjectFactsReader };
    const orig = counting.facts.run.bind(counting.facts);
    counting.facts.run = async (...a) => (reads++, orig(...a));
    const i = input();
    expect(await r.evaluate(i).catch((e) => e)).toMatchObject({ status: 429 });
    expect(reads).toBe(0);
    expect(await control.evaluationResults.find(key(i))).toBeUndefined();
    await runner(control, {}).r.evaluate(i);
    expect(await r.evaluate(i)).toMatchObject({ outcome: 'scored', alreadyEvaluated: true });
  });

  it('a withheld transfer is recorded as withheld (class, boundary, decider), never scored; an unusable judge answer is unmeasured and its spend charged', async () => {
    const withheld = runner(control, { judge: () => ({ outcome: 'withheld', withheld: { content_class: 'model_transcript', boundary: 'judge_transfer', decided_by: 'no_policy' } }) });
    const i = input();
    expect(await withheld.r.evaluate(i)).toEqual({ outcome: 'withheld', contentClass: 'model_transcript', boundary: 'judge_transfer', decidedBy: 'no_policy' });
    const [u] = await control.evaluationResults.unscored({ projectId: i.projectId }, { limit: 5 });
    expect(u).toMatchObject({ outcome: 'withheld', details: { content_class: 'model_transcript', boundary: 'judge_transfer', decided_by: 'no_policy' } });
    expect(await control.evaluationResults.find(key(i))).toBeUndefined();
    expect(withheld.charges).toEqual([]);

    const execution = { ...FREE_EXECUTION, cost_state: 'CHARGED' as const, charged_cost_nano_usd: 1234, input_tokens: 10, output_tokens: 5, judge_model_state: 'RECORDED' as const, judge_model: 'm', job_status: 'FAILED' as const };
    const unusable = runner(control, { judge: () => ({ outcome: 'unmeasured', reason: 'judge_reply_unusable', execution }) });
    const j = input();
    expect(await unusable.r.evaluate(j)).toEqual({ outcome: 'unmeasured', reason: 'judge_reply_unusable', execution, metricName: 'm' });
    expect(unusable.charges).toEqual([1234]);
    expect(await control.evaluationResults.find(key(j))).toBeUndefined();
  });
});
