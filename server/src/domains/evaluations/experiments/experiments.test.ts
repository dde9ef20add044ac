/**
 * Experiments over HTTP end to end: agent runs sent by the real OpenTelemetry SDK, a dataset version of
 * their frozen cases, deterministic evaluators created through their routes, trials, the bounded run
 * through the one runner, the comparison; bad input as an attacker sends it, idempotent writes, concurrent
 * runs, foreign projects and scopes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { sendAgentRun } from '../../../testing/otel-agent-run.js';
import { datasetOf, useDatasets } from './test-datasets.js';
import { addPerson, signIn } from '../../../testing/people.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  useDatasets(t);
});
afterAll(async () => t?.close());

const SCOPES = ['evals:read', 'evals:write', 'agents:read', 'ingest:write', 'scores:read', 'scores:write'];

/** Scores 1 when the run has at most one error step (the default run has one failed tool call). */
const FEW_ERRORS = { aggregation: 'all', assertions: [{ field: 'run.error_steps', op: 'lte', number: 1 }] };
/** The run's reported cost: unmeasured when none was reported (never 0). */
const COST = { measurement: 'run.cost_nanos' };
const SESSION_ONLY = { measurement: 'session.run_count' };
const CONTENT_JUDGE = { criteria: [{ name: 'helpful', description: 'was it helpful' }], evidence: ['model_transcript'] };

async function project(scopes = SCOPES) {
  const p = await projectWithKey(t, scopes);
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, key: string | null = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const evaluator = async (evaluator_id: string, kind: string, config: unknown) => {
    const res = await call('POST', '/evaluation/evaluators', { evaluator_id, display_name: evaluator_id, metric_name: evaluator_id, kind, config_json: JSON.stringify(config) });
    expect(res.statusCode, res.body).toBe(201);
  };
  const run = async (o: Partial<Parameters<typeof sendAgentRun>[0]> = {}) => (await sendAgentRun({ base, format: 'json', key: p.key, ...o })).root.spanContext().traceId;
  /** Two evaluators, a dataset of `n` frozen runs, and an experiment over it. */
  const setup = async (n = 2, id = 'exp', costs: Array<number | undefined> = []) => {
    await evaluator('few-errors', 'EVALUATOR_KIND_DETERMINISTIC', FEW_ERRORS);
    await evaluator('cost', 'EVALUATOR_KIND_DETERMINISTIC', COST);
    const runs: string[] = [];
    for (let i = 0; i < n; i++) runs.push(await run(costs[i] === undefined ? {} : { chatCostNanos: costs[i] }));
    const ds = await datasetOf(t, p, runs);
    const res = await call('POST', '/evaluation/experiments', {
      experiment_id: id,
      display_name: 'Retrieval fix',
      dataset: { dataset_id: ds.datasetId, version: ds.version },
      evaluators: [
        { evaluator_id: 'few-errors', version: 1 },
        { evaluator_id: 'cost', version: 1 },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    return { ...ds, runs };
  };
  const trial = (body: object, exp = 'exp') => call('POST', `/evaluation/experiments/${exp}/trials`, body);
  const runExp = (body: object = {}, exp = 'exp') => call('POST', `/evaluation/experiments/${exp}/run`, body);
  return { ...p, call, evaluator, run, setup, trial, runExp };
}

const results = async (p: Awaited<ReturnType<typeof project>>) => {
  const r = await p.call('GET', '/evaluation/results?mode=EVALUATION_MODE_EXPERIMENT&limit=500');
  expect(r.statusCode, r.body).toBe(200);
  return r.json().results as Array<{ numeric_value?: number; provenance: { evaluator: { evaluator_id: string }; subject_kind: string; subject_ref: string; mode: string; execution: { sampling: string } } }>;
};

describe('experiments: create', () => {
  it('creates an experiment over an exact dataset version with exact evaluator versions; the identical request again answers it (created false); other fields under the id are 409', async () => {
    const p = await project();
    const ds = await p.setup(1);
    const body = { experiment_id: 'exp', display_name: 'Retrieval fix', dataset: { dataset_id: ds.datasetId, version: ds.version }, evaluators: [{ evaluator_id: 'few-errors', version: 1 }, { evaluator_id: 'cost', version: 1 }] };
    const again = await p.call('POST', '/evaluation/experiments', body);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ ...body, project_id: p.projectId, created: false, created_by: `api_key:${p.keyId}` });
    const other = await p.call('POST', '/evaluation/experiments', { ...body, display_name: 'Other' });
    expect(other.statusCode).toBe(409);
    const got = await p.call('GET', '/evaluation/experiments/exp');
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json()).toMatchObject({ experiment_id: 'exp', display_name: 'Retrieval fix', items: 1, trials: [] });
    const list = (await p.call('GET', '/evaluation/experiments')).json();
    expect(list.experiments.map((e: { experiment_id: string }) => e.experiment_id)).toEqual(['exp']);
    expect(list.next_cursor).toBeNull();
  });

  it('"references are validated when written": a missing dataset version or evaluator version is 404 and nothing is stored', async () => {
    const p = await project();
    const ds = await p.setup(1);
    const mk = (over: object) => p.call('POST', '/evaluation/experiments', { experiment_id: 'e2', display_name: 'x', dataset: { dataset_id: ds.datasetId, version: ds.version }, evaluators: [{ evaluator_id: 'few-errors', version: 1 }], ...over });
    expect((await mk({ dataset: { dataset_id: ds.datasetId, version: ds.version + 5 } })).statusCode).toBe(404);
    expect((await mk({ dataset: { dataset_id: 'no-such-dataset', version: 1 } })).statusCode).toBe(404);
    expect((await mk({ evaluators: [{ evaluator_id: 'few-errors', version: 2 }] })).statusCode).toBe(404);
    expect((await mk({ evaluators: [{ evaluator_id: 'nobody', version: 1 }] })).statusCode).toBe(404);
    expect((await p.call('GET', '/evaluation/experiments/e2')).statusCode).toBe(404);
  });

  it('evaluators: 1 to 8 exact versions, no duplicates, no "latest", each must measure runs (a session-only evaluator is 400 naming why)', async () => {
    const p = await project();
    const ds = await p.setup(1);
    await p.evaluator('sessions', 'EVALUATOR_KIND_DETERMINISTIC', SESSION_ONLY);
    const mk = (evaluators: unknown) => p.call('POST', '/evaluation/experiments', { experiment_id: 'e3', display_name: 'x', dataset: { dataset_id: ds.datasetId, version: ds.version }, evaluators });
    const one = { evaluator_id: 'few-errors', version: 1 };
    for (const bad of [[], Array.from({ length: 9 }, () => one), [one, one], [{ evaluator_id: 'few-errors', version: 'latest' }], [{ evaluator_id: 'few-errors', version: 0 }], [{ evaluator_id: 'few-errors' }]]) {
      const r = await mk(bad);
      expect(r.statusCode, JSON.stringify(bad)).toBe(400);
      expect(r.json().error).toBe('invalid_request');
    }
    const session = await mk([{ evaluator_id: 'sessions', version: 1 }]);
    expect(session.statusCode).toBe(400);
    expect(session.json()).toMatchObject({ details: { reason: 'family_not_of_subject' } });
    expect((await p.call('GET', '/evaluation/experiments/e3')).statusCode).toBe(404);
  });

  it('bad input as an attacker sends it is a 4xx in our error shape and stores nothing: malformed JSON, wrong types, huge strings, deep nesting, actor and server fields, unknown fields, bad ids', async () => {
    const p = await project();
    const ds = await p.setup(1);
    const good = { experiment_id: 'e4', display_name: 'x', dataset: { dataset_id: ds.datasetId, version: ds.version }, evaluators: [{ evaluator_id: 'few-errors', version: 1 }] };
    const raw = await t.call({ method: 'POST', url: '/api/v1/evaluation/experiments', key: p.key, headers: { 'content-type': 'application/json' }, payload: '{"experiment_id": "e4",' });
    expect(raw.statusCode).toBe(400);
    let deep: unknown = 'x';
    for (let i = 0; i < 200; i++) deep = { deep };
    const bads: object[] = [
      { ...good, experiment_id: 7 },
      { ...good, experiment_id: 'UPPER' },
      { ...good, experiment_id: 'x'.repeat(100_000) },
      { ...good, display_name: 'x'.repeat(100_000) },
      { ...good, display_name: '   ' },
      { ...good, dataset: 'golden' },
      { ...good, dataset: { ...good.dataset, version: 'latest' } },
      { ...good, dataset: { ...good.dataset, version: 1.5 } },
      { ...good, evaluators: Array.from({ length: 10_000 }, () => good.evaluators[0]) },
      { ...good, extra: deep },
      { ...good, created_by: 'user:someone' },
      { ...good, author_id: 'someone' },
      { ...good, project_id: p.projectId },
    ];
    for (const b of bads) {
      const r = await p.call('POST', '/evaluation/experiments', b);
      expect(r.statusCode, JSON.stringify(b).slice(0, 120)).toBeGreaterThanOrEqual(400);
      expect(r.statusCode).toBeLessThan(500);
      expect(r.json()).toHaveProperty('error');
    }
    expect((await p.call('GET', '/evaluation/experiments')).json().experiments.map((e: { experiment_id: string }) => e.experiment_id)).toEqual(['exp']);
  });

  it('concurrent identical creates store one experiment: one 201, the others 200 created false', async () => {
    const p = await project();
    const ds = await p.setup(1, 'seed');
    const body = { experiment_id: 'race', display_name: 'x', dataset: { dataset_id: ds.datasetId, version: ds.version }, evaluators: [{ evaluator_id: 'few-errors', version: 1 }] };
    const answers = await Promise.all(Array.from({ length: 6 }, () => p.call('POST', '/evaluation/experiments', body)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect((await p.call('GET', '/evaluation/experiments')).json().experiments).toHaveLength(2);
  });
});

describe('experiments: trials', () => {
  it('a frozen-case baseline and a candidate of new runs; at most one baseline (409); the identical trial again is 200 created false, other fields 409', async () => {
    const p = await project();
    const ds = await p.setup(2);
    const base1 = await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'reviewed runs' });
    expect(base1.statusCode, base1.body).toBe(201);
    expect(base1.json()).toMatchObject({ trial_id: 'base', subjects: 'FROZEN_CASES', created: true });
    expect(base1.json().runs).toBeUndefined();
    const newRun = await p.run({ retrievalSpanError: true });
    const cand = await p.trial({ trial_id: 'cand', role: 'TRIAL_ROLE_CANDIDATE', label: 'fix', release: '2.0.0', runs: { [ds.itemIds[0]]: newRun.toUpperCase() } });
    expect(cand.statusCode, cand.body).toBe(201);
    expect(cand.json()).toMatchObject({ subjects: 'RUNS', mapped_items: 1, release: '2.0.0', runs: { [ds.itemIds[0]]: newRun } });
    expect((await p.trial({ trial_id: 'base2', role: 'TRIAL_ROLE_BASELINE', label: 'again' })).statusCode).toBe(409);
    expect((await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'reviewed runs' })).json()).toMatchObject({ created: false });
    expect((await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'renamed' })).statusCode).toBe(409);
    const got = (await p.call('GET', '/evaluation/experiments/exp')).json();
    expect(got.trials.map((x: { trial_id: string; status: string; mapped_items: number }) => [x.trial_id, x.status, x.mapped_items])).toEqual([
      ['base', 'TRIAL_STATUS_NOT_STARTED', 2],
      ['cand', 'TRIAL_STATUS_NOT_STARTED', 1],
    ]);
    expect(got.trials[1].counts).toEqual({ items: 4, scored: 0, numeric: 0, unmeasured: 0, withheld: 0, missing: 2, pending: 2 });
  });

  it('trial bad input is 400 and stores nothing: unknown or _UNSPECIFIED role, an item the version does not hold, a malformed run id, one run for two items, empty runs, huge maps', async () => {
    const p = await project();
    const ds = await p.setup(2);
    const r1 = 'a'.repeat(32);
    const bads: object[] = [
      { trial_id: 't', role: 'TRIAL_ROLE_UNSPECIFIED', label: 'x' },
      { trial_id: 't', role: 'BASELINE', label: 'x' },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: '' },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', runs: { 'no-such-item': r1 } },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', runs: { [ds.itemIds[0]]: 'not-a-run' } },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', runs: { [ds.itemIds[0]]: r1, [ds.itemIds[1]]: r1.toUpperCase() } },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', runs: {} },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', runs: [r1] },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', runs: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`i${i}`, r1])) },
      { trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', created_by: 'user:x' },
    ];
    for (const b of bads) {
      const r = await p.trial(b);
      expect(r.statusCode, JSON.stringify(b).slice(0, 160)).toBe(400);
    }
    const unknown = await p.trial(bads[3]);
    expect(unknown.json()).toMatchObject({ details: { reason: 'unknown_item', item_ids: ['no-such-item'] } });
    expect((await p.trial({ trial_id: 't', role: 'TRIAL_ROLE_CANDIDATE', label: 'x' }, 'nobody')).statusCode).toBe(404);
    expect((await p.call('GET', '/evaluation/experiments/exp')).json().trials).toEqual([]);
  });

  it('a judge rubric asking for recorded content cannot score frozen cases: a frozen-case trial is 400 naming it (a trial of new runs is accepted)', async () => {
    const p = await project();
    const ds = await p.setup(1);
    await p.evaluator('judge', 'EVALUATOR_KIND_LLM_JUDGE', CONTENT_JUDGE);
    const exp = await p.call('POST', '/evaluation/experiments', { experiment_id: 'judged', display_name: 'j', dataset: { dataset_id: ds.datasetId, version: ds.version }, evaluators: [{ evaluator_id: 'judge', version: 1 }] });
    expect(exp.statusCode, exp.body).toBe(201);
    const frozen = await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'x' }, 'judged');
    expect(frozen.statusCode).toBe(400);
    expect(frozen.json()).toMatchObject({ details: { reason: 'frozen_case_rubric_asks_content', evidence: ['model_transcript'] } });
    const runs = await p.trial({ trial_id: 'cand', role: 'TRIAL_ROLE_CANDIDATE', label: 'x', runs: { [ds.itemIds[0]]: await p.run() } }, 'judged');
    expect(runs.statusCode, runs.body).toBe(201);
  });
});

describe('experiments: run and comparison', () => {
  it('"a version cited by a stored score, and a dataset holding one, cannot be removed": once an experiment scored its items, deleting the dataset is 409 naming the cited version', async () => {
    const p = await project();
    const ds = await p.setup(1);
    await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'reviewed' });
    const admin = await signIn(t, await addPerson(t, 'admin'));
    expect((await p.runExp()).statusCode).toBe(200);
    const del = await admin.call({ method: 'DELETE', url: `/api/v1/evaluation/datasets/${ds.datasetId}?project_id=${p.projectId}` });
    expect(del.statusCode, del.body).toBe(409);
    expect(del.json().details.cited_versions).toEqual([ds.version]);
    const got = await p.call('GET', `/evaluation/datasets/${ds.datasetId}?project_id=${p.projectId}`);
    expect(got.json().versions[0]).toMatchObject({ version: ds.version, cited: true });
  });

  it('run scores every trial × item × evaluator through the one runner: frozen cases as dataset items <dataset>/<version>/<item>, new runs as runs, mode EXPERIMENT and sampling WHOLE_DATASET; unmeasured and missing are counted, never 0', async () => {
    const p = await project();
    // The first reviewed run reported a cost of 3000, the second none (unmeasured, never 0).
    const ds = await p.setup(2, 'exp', [3000]);
    await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'reviewed' });
    const newRun = await p.run({ chatCostNanos: 5000 });
    await p.trial({ trial_id: 'cand', role: 'TRIAL_ROLE_CANDIDATE', label: 'fix', runs: { [ds.itemIds[0]]: newRun } });
    const r = await p.runExp();
    expect(r.statusCode, r.body).toBe(200);
    // base: 2 items × 2 evaluators; cand: 1 mapped item × 2 evaluators, 1 item missing × 2.
    expect(r.json()).toMatchObject({ experiment_id: 'exp', asked: 6, scored: 5, unmeasured: 1, withheld: 0, already_evaluated: 0, missing: 2, stopped: null, truncated: false, remaining: 0, complete: true });
    const stored = await results(p);
    expect(stored).toHaveLength(5);
    for (const s of stored) expect(s.provenance).toMatchObject({ mode: 'EVALUATION_MODE_EXPERIMENT', execution: { sampling: 'WHOLE_DATASET' } });
    const items = [...new Set(stored.filter((s) => s.provenance.subject_kind === 'SUBJECT_KIND_DATASET_ITEM').map((s) => s.provenance.subject_ref))].sort();
    expect(items).toEqual(ds.itemIds.map((i) => `${ds.datasetId}/${ds.version}/${i}`).sort());
    const onRun = stored.filter((s) => s.provenance.subject_kind === 'SUBJECT_KIND_AGENT_RUN');
    expect(onRun.map((s) => [s.provenance.evaluator.evaluator_id, s.provenance.subject_ref, s.numeric_value]).sort()).toEqual([
      ['cost', newRun, 5000],
      ['few-errors', newRun, 1],
    ]);
    // "re-running scores nothing twice"
    const again = (await p.runExp()).json();
    expect(again).toMatchObject({ asked: 0, scored: 0, remaining: 0, complete: true });
    expect(await results(p)).toHaveLength(5);

    const cmp = await p.call('GET', '/evaluation/experiments/exp/comparison');
    expect(cmp.statusCode, cmp.body).toBe(200);
    const c = cmp.json();
    expect(c).toMatchObject({ experiment_id: 'exp', items: 2, baseline_trial_id: 'base', complete: true, pending: 0 });
    const few = c.metrics.find((m: { evaluator: { evaluator_id: string } }) => m.evaluator.evaluator_id === 'few-errors');
    expect(few.metric_name).toBe('few-errors');
    expect(few.trials[0]).toMatchObject({ trial_id: 'base', mean: 1, counts: { items: 2, scored: 2, numeric: 2, missing: 0 } });
    expect(few.trials[1]).toMatchObject({ trial_id: 'cand', mean: 1, counts: { items: 2, scored: 1, missing: 1 } });
    // A measured difference of zero is a real answer.
    expect(few.versus_baseline).toEqual([{ trial_id: 'cand', label: 'fix', delta: 0, paired: { items: 1, baseline_mean: 1, candidate_mean: 1, delta: 0 } }]);
    // The second reviewed run reported no cost: unmeasured, counted and left out of the mean (never a 0).
    const cost = c.metrics.find((m: { evaluator: { evaluator_id: string } }) => m.evaluator.evaluator_id === 'cost');
    expect(cost.trials[0]).toMatchObject({ mean: 3000, counts: { items: 2, scored: 1, numeric: 1, unmeasured: 1 } });
    expect(cost.trials[1]).toMatchObject({ mean: 5000, counts: { items: 2, scored: 1, missing: 1 } });
    expect(cost.versus_baseline).toEqual([{ trial_id: 'cand', label: 'fix', delta: 2000, paired: { items: 1, baseline_mean: 3000, candidate_mean: 5000, delta: 2000 } }]);
    const detail = (await p.call('GET', '/evaluation/experiments/exp')).json();
    expect(detail.trials.map((x: { status: string }) => x.status)).toEqual(['TRIAL_STATUS_COMPLETE', 'TRIAL_STATUS_COMPLETE']);
  });

  it('"the run is bounded per call": max_evaluations cuts it with truncated and remaining, the next call continues, nothing is scored twice; an experiment without trials is 409', async () => {
    const p = await project();
    await p.setup(3);
    expect((await p.runExp()).statusCode).toBe(409);
    await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'reviewed' });
    const first = (await p.runExp({ max_evaluations: 4 })).json();
    expect(first).toMatchObject({ asked: 4, stopped: 'bound', truncated: true, remaining: 2, complete: false });
    const mid = (await p.call('GET', '/evaluation/experiments/exp')).json();
    expect(mid.trials[0]).toMatchObject({ status: 'TRIAL_STATUS_IN_PROGRESS', counts: { pending: 2 } });
    expect((await p.call('GET', '/evaluation/experiments/exp/comparison')).json()).toMatchObject({ complete: false, pending: 2 });
    const second = (await p.runExp({ max_evaluations: 4 })).json();
    expect(second).toMatchObject({ asked: 2, stopped: null, truncated: false, remaining: 0, complete: true });
    expect(await results(p)).toHaveLength(3);
    for (const bad of [{ max_evaluations: 0 }, { max_evaluations: 201 }, { max_evaluations: 'all' }, { created_by: 'x' }, { extra: 1 }]) expect((await p.runExp(bad)).statusCode).toBe(400);
  });

  it('concurrent run calls: every answer is 200 and nothing doubles (the runner\'s claim answers already_evaluated or in progress)', async () => {
    const p = await project();
    const ds = await p.setup(3);
    await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'reviewed' });
    await p.trial({ trial_id: 'cand', role: 'TRIAL_ROLE_CANDIDATE', label: 'c', runs: Object.fromEntries(await Promise.all(ds.itemIds.map(async (i) => [i, await p.run()]))) });
    const answers = await Promise.all(Array.from({ length: 4 }, () => p.runExp()));
    for (const a of answers) expect(a.statusCode, a.body).toBe(200);
    // Scores never double; an unmeasured answer is not a result, so a racing call may at worst record it once more.
    expect(answers.map((a) => a.json()).reduce((n, a) => n + a.scored, 0)).toBe(6);
    expect(answers.map((a) => a.json()).reduce((n, a) => n + a.scored + a.unmeasured + a.already_evaluated, 0)).toBeGreaterThanOrEqual(12);
    const unscored = (await p.call('GET', '/evaluation/unscored-subjects')).json().unscored_subjects;
    expect(unscored).toHaveLength(6);
    const stored = await results(p);
    expect(stored).toHaveLength(6);
    expect(new Set(stored.map((s) => `${s.provenance.evaluator.evaluator_id}|${s.provenance.subject_ref}`)).size).toBe(6);
    expect((await p.runExp()).json()).toMatchObject({ complete: true, remaining: 0 });
  });

  it('no baseline: each arm is summarized and nothing is compared (baseline_trial_id null)', async () => {
    const p = await project();
    await p.setup(1);
    await p.trial({ trial_id: 'only', role: 'TRIAL_ROLE_CANDIDATE', label: 'c' });
    await p.runExp();
    const c = (await p.call('GET', '/evaluation/experiments/exp/comparison')).json();
    expect(c).toMatchObject({ baseline_trial_id: null });
    expect(c.metrics[0].versus_baseline).toEqual([]);
    expect(c.metrics[0].trials[0]).toMatchObject({ trial_id: 'only', mean: 1 });
  });

  it('"a dataset item is evaluated by an experiment over a dataset version": POST /evaluation/evaluate still answers 501 for SUBJECT_KIND_DATASET_ITEM', async () => {
    const p = await project();
    const ds = await p.setup(1);
    const r = await p.call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'few-errors', version: 1 }, subject_kind: 'SUBJECT_KIND_DATASET_ITEM', subject_ref: `${ds.datasetId}/${ds.version}/${ds.itemIds[0]}` });
    expect(r.statusCode).toBe(501);
  });
});

describe('experiments: projects and scopes', () => {
  it('"a project key naming another project is 404", and another project\'s experiment is 404 exactly like a missing one', async () => {
    const p = await project();
    await p.setup(1);
    await p.trial({ trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'x' });
    const q = await project();
    const missing = await q.call('GET', '/evaluation/experiments/nobody');
    for (const [m, url, body] of [
      ['GET', '/evaluation/experiments/exp'],
      ['GET', '/evaluation/experiments/exp/comparison'],
      ['POST', '/evaluation/experiments/exp/run', {}],
      ['POST', '/evaluation/experiments/exp/trials', { trial_id: 'x', role: 'TRIAL_ROLE_CANDIDATE', label: 'x' }],
    ] as const) {
      const r = await q.call(m, url, body);
      expect(r.statusCode, url).toBe(404);
      expect(r.json()).toEqual(missing.json());
    }
    expect((await q.call('GET', `/evaluation/experiments?project_id=${p.projectId}`)).statusCode).toBe(404);
    expect((await q.call('GET', '/evaluation/experiments')).json().experiments).toEqual([]);
    expect((await p.call('GET', `/evaluation/experiments/exp?project_id=${p.projectId}`)).statusCode).toBe(200);
  });

  it('scopes: reads need evals:read; create, trials and run need evals:write; no credential is 401', async () => {
    const p = await project();
    await p.setup(1);
    const reader = await projectWithKey(t, ['evals:read']);
    const writerOnly = await projectWithKey(t, ['evals:write']);
    const own = await projectWithKey(t, ['agents:read']);
    expect((await t.call({ method: 'GET', url: '/api/v1/evaluation/experiments', key: null })).statusCode).toBe(401);
    expect((await t.call({ method: 'GET', url: '/api/v1/evaluation/experiments', key: own.key })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: '/api/v1/evaluation/experiments', key: reader.key, payload: { experiment_id: 'x', display_name: 'x', dataset: { dataset_id: 'd', version: 1 }, evaluators: [{ evaluator_id: 'e', version: 1 }] } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: '/api/v1/evaluation/experiments', key: writerOnly.key })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: '/api/v1/evaluation/experiments', key: reader.key })).statusCode).toBe(200);
  });
});
