/**
 * Calibration over HTTP: every state, "recompute over unchanged judgments returns the existing record with
 * created: false; changed judgments or a re-run judge add a new record", the 200-run refusal, "min_labels
 * (required, 0 refused)", bad input, foreign projects and scopes. Runs are sent by the real OpenTelemetry
 * SDK; people record their judgments through the annotation route; the judge's results are written
 * through the results store (how the judge produces them is tested in judge-e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { addPerson, signIn, type Browser } from '../../../testing/people.js';
import { sendAgentRun } from '../../../testing/otel-agent-run.js';
import type { ResultRecord } from '../results/store.js';
import { cohensKappa, linsCcc } from './math.js';

let t: TestApp;
let base: string;
let alice: Browser;
let bob: Browser;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  alice = await signIn(t, await addPerson(t, 'member'));
  bob = await signIn(t, await addPerson(t, 'member'));
});
afterAll(async () => t?.close());

const RUBRIC = { criteria: [{ name: 'helpful', description: 'the answer addresses the question' }], evidence: ['run_summary'] };
let seq = 0;

async function project() {
  const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'evals:read', 'evals:write', 'scores:read', 'scores:write']);
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, key: string | null = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload: payload as object } : {}) });
  for (const [evaluator_id, kind, config] of [
    ['judge', 'EVALUATOR_KIND_LLM_JUDGE', RUBRIC],
    ['det', 'EVALUATOR_KIND_DETERMINISTIC', { measurement: 'run.duration_ms' }],
  ] as const) {
    const res = await call('POST', '/evaluation/evaluators', { evaluator_id, display_name: evaluator_id, metric_name: 'quality', kind, config_json: JSON.stringify(config) });
    expect(res.statusCode, res.body).toBe(201);
  }
  const runs = async (n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push((await sendAgentRun({ base, format: 'json', key: p.key })).root.spanContext().traceId);
    return out;
  };
  /** The judge's stored result of `judge` version `version` on a run. */
  const scored = async (run: string, v: { numeric?: number | null; label?: string | null; version?: number; evaluatorId?: string }) => {
    const r: ResultRecord = {
      id: `res-${String(++seq).padStart(6, '0')}`,
      orgId: t.orgId,
      projectId: p.projectId,
      evaluatorId: v.evaluatorId ?? 'judge',
      evaluatorVersion: v.version ?? 1,
      metricName: 'quality',
      mode: 'EVALUATION_MODE_ON_DEMAND',
      subjectKind: 'SUBJECT_KIND_AGENT_RUN',
      subjectRef: run,
      numericValue: v.numeric === undefined ? 0.5 : v.numeric,
      label: v.label === undefined ? null : v.label,
      explanation: null,
      subjectRelease: null,
      legacySource: '',
      occurredAt: '2026-03-01T00:00:00.000000Z',
      evaluatedAt: new Date(Date.UTC(2026, 2, 1) + seq * 1000).toISOString(),
      execution: null,
    };
    expect(await t.ctx.control.evaluationResults.insert(r)).toBe(true);
    return r;
  };
  /** A person's judgment through the annotation route; answers the annotation id. */
  const judge = async (who: Browser, run: string, body: Record<string, unknown>) => {
    const res = await who.call({ method: 'POST', url: `/api/v1/agent-runs/${run}/annotations?project_id=${p.projectId}`, payload: { metric_name: 'quality', ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().annotation.annotation_id as string;
  };
  const calibrate = (body: unknown, o: { evaluator?: string; version?: string | number; key?: string | null; query?: string } = {}) =>
    call('POST', `/evaluation/evaluators/${o.evaluator ?? 'judge'}/versions/${o.version ?? 1}/calibrations${o.query ?? ''}`, body, o.key === undefined ? p.key : o.key);
  const list = (query = '', evaluator = 'judge', key: string | null = p.key) => call('GET', `/evaluation/evaluators/${evaluator}/calibrations${query ? `?${query}` : ''}`, undefined, key);
  const stored = async () => (await t.ctx.control.calibrations.list({ projectId: p.projectId, evaluatorId: 'judge' }, { limit: 1000 })).length;
  return { ...p, call, runs, scored, judge, calibrate, list, stored };
}

describe('POST /evaluation/evaluators/{evaluatorId}/versions/{version}/calibrations', () => {
  it('"numeric ratings use a concordance coefficient": every reviewer of a named run is a pair against the judge\'s result of that exact version; LINS_CCC, agreement, ids used', async () => {
    const p = await project();
    const [r1, r2, r3] = await p.runs(3);
    const res1 = await p.scored(r1, { numeric: 0.2 });
    const res2 = await p.scored(r2, { numeric: 0.5 });
    const res3 = await p.scored(r3, { numeric: 0.9 });
    // Another version's result on r1 is not this version's evidence.
    await p.scored(r1, { numeric: 0.99, version: 2 });
    const ids = [await p.judge(alice, r1, { numeric_value: 0.1 }), await p.judge(alice, r2, { numeric_value: 0.6 }), await p.judge(alice, r3, { numeric_value: 0.9 })];
    ids.push(await p.judge(bob, r1, { numeric_value: 0.3 }));
    // A judgment of another metric is not compared.
    await p.judge(bob, r2, { metric_name: 'tone', numeric_value: 0 });
    const res = await p.calibrate({ subject_refs: [r1, r2, r3], min_labels: 3 });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      project_id: p.projectId,
      evaluator: { evaluator_id: 'judge', version: 1 },
      metric_name: 'quality',
      state: 'CALIBRATED',
      statistic: 'LINS_CCC',
      value_kind: 'NUMERIC',
      pair_count: 4,
      excluded_count: 0,
      runs_without_judgment: 0,
      min_labels: 3,
      created: true,
      created_by: `api_key:${p.keyId}`,
    });
    expect(body.agreement).toBeCloseTo(linsCcc([0.2, 0.5, 0.9, 0.2], [0.1, 0.6, 0.9, 0.3])!, 12);
    expect(body).not.toHaveProperty('agreement_rate');
    expect(body.judgment_ids).toEqual([...ids].sort());
    expect(body.result_ids).toEqual([res1.id, res2.id, res3.id].sort());
    expect(body.subject_refs).toEqual([r1, r2, r3].sort());
  });

  it('"verdict labels use chance-corrected kappa": COHENS_KAPPA with agreement_rate beside it, which is never the calibration', async () => {
    const p = await project();
    const rs = await p.runs(4);
    const judgeSays = ['pass', 'fail', 'pass', 'fail'];
    const people = ['pass', 'fail', 'fail', 'fail'];
    for (let i = 0; i < 4; i++) {
      await p.scored(rs[i], { numeric: null, label: judgeSays[i] });
      await p.judge(alice, rs[i], { label: people[i] });
    }
    const body = (await p.calibrate({ subject_refs: rs, min_labels: 4 })).json();
    expect(body).toMatchObject({ state: 'CALIBRATED', statistic: 'COHENS_KAPPA', value_kind: 'LABEL', agreement_rate: 0.75, pair_count: 4 });
    expect(body.agreement).toBeCloseTo(cohensKappa(judgeSays, people)!, 12);
    expect(body.agreement).not.toBe(body.agreement_rate);
  });

  it('"if reviewers vary and the judge is constant the result is a measurable zero, not UNDEFINED_STATISTIC": CALIBRATED with agreement 0, for CCC and for kappa', async () => {
    const p = await project();
    const rs = await p.runs(3);
    for (const r of rs) await p.scored(r, { numeric: 0.8, label: 'pass' });
    for (const [i, v] of [0.1, 0.5, 0.9].entries()) await p.judge(alice, rs[i], { numeric_value: v });
    const numeric = (await p.calibrate({ subject_refs: rs, min_labels: 3 })).json();
    expect(numeric).toMatchObject({ state: 'CALIBRATED', statistic: 'LINS_CCC', agreement: 0 });
    for (const [i, l] of ['pass', 'fail', 'fail'].entries()) await p.judge(bob, rs[i], { label: l });
    // Alice's numeric pairs and Bob's label pairs tie at 3 each: numbers win the tie, so ask Bob to judge a fourth run.
    const [r4] = await p.runs(1);
    await p.scored(r4, { numeric: 0.8, label: 'pass' });
    await p.judge(bob, r4, { label: 'fail' });
    const labels = (await p.calibrate({ subject_refs: [...rs, r4], min_labels: 3 })).json();
    expect(labels).toMatchObject({ state: 'CALIBRATED', statistic: 'COHENS_KAPPA', value_kind: 'LABEL', agreement: 0, agreement_rate: 0.25, excluded: { other_value_kind: 3 }, excluded_count: 3 });
  });

  it('"UNCALIBRATED: model judge never compared to a person": the judge scored the runs but no one judged them (judgments of other projects do not count)', async () => {
    const p = await project();
    const other = await project();
    const rs = await p.runs(2);
    for (const r of rs) await p.scored(r, { numeric: 0.4 });
    const [elsewhere] = await other.runs(1);
    await other.judge(alice, elsewhere, { numeric_value: 1 });
    const res = await p.calibrate({ subject_refs: [...rs, elsewhere], min_labels: 1 });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ state: 'UNCALIBRATED', pair_count: 0, runs_without_judgment: 2, judgment_ids: [], result_ids: [] });
    for (const f of ['agreement', 'statistic', 'agreement_rate', 'value_kind']) expect(body).not.toHaveProperty(f);
    // Judgments of runs the judge never scored are counted as excluded, and still never compared.
    const [unscored] = await p.runs(1);
    await p.judge(alice, unscored, { numeric_value: 0.3 });
    expect((await p.calibrate({ subject_refs: [unscored], min_labels: 1 })).json()).toMatchObject({
      state: 'UNCALIBRATED',
      excluded_count: 1,
      excluded: { no_judge_result: 1, no_shared_value: 0, other_value_kind: 0 },
    });
  });

  it('"INSUFFICIENT_LABELS: fewer comparable judgments than min_labels": no statistic and no number', async () => {
    const p = await project();
    const rs = await p.runs(2);
    for (const [i, r] of rs.entries()) {
      await p.scored(r, { numeric: i / 2 });
      await p.judge(alice, r, { numeric_value: i / 3 });
    }
    const body = (await p.calibrate({ subject_refs: rs, min_labels: 3 })).json();
    expect(body).toMatchObject({ state: 'INSUFFICIENT_LABELS', pair_count: 2, value_kind: 'NUMERIC', min_labels: 3 });
    for (const f of ['agreement', 'statistic', 'agreement_rate']) expect(body).not.toHaveProperty(f);
  });

  it('"UNDEFINED_STATISTIC: enough judgments but statistic not computable (all one verdict, or both sides constant)"', async () => {
    const p = await project();
    const rs = await p.runs(2);
    for (const r of rs) {
      await p.scored(r, { numeric: null, label: 'pass' });
      await p.judge(alice, r, { label: 'Pass' });
    }
    const labels = (await p.calibrate({ subject_refs: rs, min_labels: 2 })).json();
    expect(labels).toMatchObject({ state: 'UNDEFINED_STATISTIC', statistic: 'COHENS_KAPPA', agreement_rate: 1, pair_count: 2 });
    expect(labels).not.toHaveProperty('agreement');
    const q = await project();
    const qs = await q.runs(2);
    for (const r of qs) {
      await q.scored(r, { numeric: 0.5 });
      await q.judge(alice, r, { numeric_value: 0.9 });
    }
    const numeric = (await q.calibrate({ subject_refs: qs, min_labels: 1 })).json();
    expect(numeric).toMatchObject({ state: 'UNDEFINED_STATISTIC', statistic: 'LINS_CCC' });
    expect(numeric).not.toHaveProperty('agreement');
  });

  it('"NOT_APPLICABLE: evaluator is not a model judge": a deterministic evaluator is never calibrated, whatever people said', async () => {
    const p = await project();
    const [r] = await p.runs(1);
    await p.scored(r, { numeric: 1, evaluatorId: 'det' });
    await p.judge(alice, r, { numeric_value: 1 });
    const res = await p.calibrate({ subject_refs: [r], min_labels: 1 }, { evaluator: 'det' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ state: 'NOT_APPLICABLE', pair_count: 0, judgment_ids: [], evaluator: { evaluator_id: 'det', version: 1 } });
    expect(res.json()).not.toHaveProperty('agreement');
  });

  it('"recompute over unchanged judgments returns the existing record with created: false; changed judgments or a re-run judge add a new record" (concurrent identical requests give one record)', async () => {
    const p = await project();
    const [r1, r2, r3] = await p.runs(3);
    await p.scored(r1, { numeric: 0.1 });
    await p.scored(r2, { numeric: 0.9 });
    await p.judge(alice, r1, { numeric_value: 0.2 });
    await p.judge(alice, r2, { numeric_value: 0.8 });
    await p.judge(alice, r3, { numeric_value: 0.5 });
    const body = { subject_refs: [r1, r2, r3], min_labels: 2 };
    const first = await p.calibrate(body);
    expect(first.statusCode).toBe(201);
    const again = await p.calibrate({ subject_refs: [r3, r2, r1, r1.toUpperCase()], min_labels: 2 });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...first.json(), created: false });
    expect(await p.stored()).toBe(1);
    // Concurrent identical asks (a fresh min_labels, so a fresh digest): one record, every answer names it.
    const answers = await Promise.all(Array.from({ length: 6 }, () => p.calibrate({ ...body, min_labels: 1 })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.json().calibration_id)).size).toBe(1);
    expect(await p.stored()).toBe(2);
    // Alice changes her judgment (a new annotation id): a new record.
    await p.judge(alice, r1, { numeric_value: 0.3 });
    const changed = await p.calibrate(body);
    expect(changed.statusCode).toBe(201);
    expect(changed.json().calibration_id).not.toBe(first.json().calibration_id);
    // The judge scores r3, which it had not: a new record, with one more pair.
    await p.scored(r3, { numeric: 0.5 });
    const rerun = await p.calibrate(body);
    expect(rerun.statusCode).toBe(201);
    expect(rerun.json()).toMatchObject({ pair_count: 3, excluded_count: 0 });
    expect(changed.json()).toMatchObject({ pair_count: 2, excluded_count: 1, excluded: { no_judge_result: 1 } });
    expect(await p.stored()).toBe(4);
  });

  it('bad input as an attacker writes it: 400 in our error shape, nothing stored', async () => {
    const p = await project();
    const [r] = await p.runs(1);
    const refs201 = Array.from({ length: 201 }, (_, i) => i.toString(16).padStart(32, '0'));
    const cases: [string, unknown][] = [
      ['min_labels 0 ("0 refused")', { subject_refs: [r], min_labels: 0 }],
      ['min_labels missing ("required")', { subject_refs: [r] }],
      ['min_labels negative', { subject_refs: [r], min_labels: -1 }],
      ['min_labels not an integer', { subject_refs: [r], min_labels: 1.5 }],
      ['min_labels huge', { subject_refs: [r], min_labels: 1e300 }],
      ['min_labels above its maximum', { subject_refs: [r], min_labels: 100_001 }],
      ['min_labels as a string', { subject_refs: [r], min_labels: '3' }],
      ['min_labels null', { subject_refs: [r], min_labels: null }],
      ['201 runs ("more than 200 subject references")', { subject_refs: refs201, min_labels: 1 }],
      ['no runs', { subject_refs: [], min_labels: 1 }],
      ['subject_refs missing', { min_labels: 1 }],
      ['subject_refs not an array', { subject_refs: r, min_labels: 1 }],
      ['a run ref that is not a run id', { subject_refs: [`${r}/0123456789abcdef`], min_labels: 1 }],
      ['a run ref that is a number', { subject_refs: [1], min_labels: 1 }],
      ['a huge string', { subject_refs: ['a'.repeat(100_000)], min_labels: 1 }],
      ['a huge array', { subject_refs: Array.from({ length: 5000 }, () => r), min_labels: 1 }],
      ['unknown field', { subject_refs: [r], min_labels: 1, statistic: 'LINS_CCC' }],
      ['actor field created_by', { subject_refs: [r], min_labels: 1, created_by: 'user:someone' }],
      ['actor field author_id', { subject_refs: [r], min_labels: 1, author_id: 'someone' }],
      ['deeply nested', { subject_refs: [r], min_labels: JSON.parse('['.repeat(200) + ']'.repeat(200)) }],
      ['an array body', [{ subject_refs: [r], min_labels: 1 }]],
    ];
    for (const [name, payload] of cases) {
      const res = await p.calibrate(payload);
      expect(res.statusCode, `${name}: ${res.body.slice(0, 200)}`).toBe(400);
      expect(typeof res.json().message, name).toBe('string');
      expect(res.json().error, name).toBe('invalid_request');
    }
    const over = await p.calibrate({ subject_refs: refs201, min_labels: 1 });
    expect(over.json()).toMatchObject({ details: { limit: 200, subjects: 201 } });
    // Repeats count once: 200 distinct runs named with a repeat are fine.
    expect((await p.calibrate({ subject_refs: [...refs201.slice(0, 200), refs201[0]], min_labels: 1 })).statusCode).toBe(201);
    const malformed = await t.call({
      method: 'POST',
      url: '/api/v1/evaluation/evaluators/judge/versions/1/calibrations',
      key: p.key,
      headers: { 'content-type': 'application/json' },
      payload: '{"subject_refs": [',
    });
    expect(malformed.statusCode).toBe(400);
    for (const version of ['latest', '0', '1.0', '-1', '99999999999']) expect((await p.calibrate({ subject_refs: [r], min_labels: 1 }, { version })).statusCode, version).toBe(400);
    expect((await p.calibrate({ subject_refs: [r], min_labels: 1 }, { evaluator: 'legacy%2Fa%2Fb' })).statusCode).toBe(400);
    expect(await p.stored()).toBe(1);
  });

  it('404: no such evaluator version, an evaluator of another project, a project key naming another project (the same answer as missing)', async () => {
    const p = await project();
    const other = await project();
    const [r] = await p.runs(1);
    const body = { subject_refs: [r], min_labels: 1 };
    for (const res of [
      await p.calibrate(body, { version: 2 }),
      await p.calibrate(body, { evaluator: 'nobody' }),
      await p.calibrate(body, { query: `?project_id=${other.projectId}` }),
      await p.list(`project_id=${other.projectId}`),
      await p.list('', 'nobody'),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
    // An organization credential reaches the other project's evaluator only by naming that project.
    const owner = await t.call({ method: 'POST', url: `/api/v1/evaluation/evaluators/judge/versions/1/calibrations?project_id=${other.projectId}`, payload: body });
    expect(owner.statusCode, owner.body).toBe(201);
    expect(owner.json().created_by).toMatch(/^api_key:/);
    expect(await other.stored()).toBe(1);
    expect(await p.stored()).toBe(0);
  });

  it('scopes: POST needs evals:write (evals:read or scores:write alone is 403); GET needs evals:read', async () => {
    const p = await project();
    const [r] = await p.runs(1);
    const reader = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'r', scopes: ['evals:read'], project_id: p.projectId } });
    const scorer = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 's', scopes: ['scores:write', 'scores:read'], project_id: p.projectId } });
    const body = { subject_refs: [r], min_labels: 1 };
    expect((await p.calibrate(body, { key: reader.json().key })).statusCode).toBe(403);
    expect((await p.calibrate(body, { key: scorer.json().key })).statusCode).toBe(403);
    expect((await p.list('', 'judge', scorer.json().key)).statusCode).toBe(403);
    expect((await p.list('', 'judge', reader.json().key)).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: '/api/v1/evaluation/evaluators/judge/versions/1/calibrations', key: 'svc_nope', payload: body })).statusCode).toBe(401);
    expect(await p.stored()).toBe(0);
  });
});

describe('GET /evaluation/evaluators/{evaluatorId}/calibrations', () => {
  it('the records, newest first, paged without repeats; filters version and state (closed: unknown is 400)', async () => {
    const p = await project();
    const [r] = await p.runs(1);
    await p.scored(r, { numeric: 0.5 });
    await p.judge(alice, r, { numeric_value: 0.5 });
    const records: { id: string; at: string }[] = [];
    for (let m = 1; m <= 3; m++) {
      const c = (await p.calibrate({ subject_refs: [r], min_labels: m })).json();
      records.push({ id: c.calibration_id, at: c.created_at });
    }
    // Newest first; records made in the same millisecond are ordered by id, descending.
    const made = records.sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1)).map((c) => c.id);
    const all = (await p.list()).json();
    expect(all.calibrations.map((c: { calibration_id: string }) => c.calibration_id)).toEqual(made);
    expect(all.next_cursor).toBeNull();
    const first = (await p.list('limit=2')).json();
    const second = (await p.list(`limit=2&cursor=${first.next_cursor}`)).json();
    expect([...first.calibrations, ...second.calibrations].map((c: { calibration_id: string }) => c.calibration_id)).toEqual(made);
    expect(second.next_cursor).toBeNull();
    // One pair: min_labels 1 reaches it but one pair is one value on each side (undefined); 2 and 3 are insufficient.
    expect((await p.list('state=UNDEFINED_STATISTIC')).json().calibrations).toHaveLength(1);
    expect((await p.list('state=INSUFFICIENT_LABELS,CALIBRATED')).json().calibrations).toHaveLength(2);
    expect((await p.list('version=1')).json().calibrations).toHaveLength(3);
    expect((await p.list('version=2')).json().calibrations).toHaveLength(0);
    for (const q of ['state=CALIBRATION_STATE_UNSPECIFIED', 'state=bogus', 'state=', 'limit=0', 'limit=201', 'version=0', 'version=latest', 'unknown=1', 'limit=1&limit=2', `cursor=${first.next_cursor}&state=CALIBRATED`, 'cursor=junk']) {
      const res = await p.list(q);
      expect(res.statusCode, `${q}: ${res.body}`).toBe(400);
      expect(typeof res.json().message).toBe('string');
    }
  });
});
