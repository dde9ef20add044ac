/** Sampling rules through HTTP: upsert by rule_id, exact evaluator versions, what can be sampled, list, delete, bad input. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const MEASURE = JSON.stringify({ measurement: 'run.duration_ms' });
const SESSION = JSON.stringify({ measurement: 'session.turn_count' });
const JUDGE = JSON.stringify({ criteria: [{ name: 'helpful', description: 'answers' }], evidence: ['model_transcript'] });
const rule = (over: Record<string, unknown> = {}) => ({
  rule_id: 'nightly',
  evaluator: { evaluator_id: 'latency', version: 1 },
  subject_kind: 'SUBJECT_KIND_AGENT_RUN',
  sampling_rate: 0.1,
  per_tick_limit: 50,
  enabled: true,
  ...over,
});

async function project(scopes = ['evals:read', 'evals:write']) {
  const p = await projectWithKey(t, scopes);
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, key = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const evaluator = async (id: string, kind: string, config: string) =>
    expect((await call('POST', '/evaluation/evaluators', { evaluator_id: id, display_name: id, metric_name: 'm', kind, config_json: config })).statusCode).toBe(201);
  await evaluator('latency', 'EVALUATOR_KIND_DETERMINISTIC', MEASURE);
  const rules = async (q = '') => (await call('GET', `/evaluation/sampling-rules${q}`)).json().sampling_rules as Record<string, unknown>[];
  return { ...p, call, evaluator, rules };
}

function expectError(res: LightMyRequestResponse, status: number, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const b = res.json();
  expect(typeof b.error).toBe('string');
  if (message) expect(b.message).toMatch(message);
}

describe('PUT /evaluation/sampling-rules', () => {
  it('creates (201, created true) then replaces (200, created false); updated_by is the credential; a retried identical PUT changes nothing', async () => {
    const p = await project();
    const first = await p.call('PUT', '/evaluation/sampling-rules', rule());
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toEqual({
      ...rule(),
      project_id: p.projectId,
      active: true,
      created: true,
      created_at: expect.any(String),
      created_by: `api_key:${p.keyId}`,
      updated_at: expect.any(String),
      updated_by: `api_key:${p.keyId}`,
    });
    const again = await p.call('PUT', '/evaluation/sampling-rules', rule());
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...first.json(), created: false });
    const changed = await p.call('PUT', '/evaluation/sampling-rules', rule({ sampling_rate: 1 }));
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ sampling_rate: 1, created: false, created_at: first.json().created_at });
    expect(await p.rules()).toHaveLength(1);
  });

  it('concurrent identical PUTs of a new rule: one creates it, none fails', async () => {
    const p = await project();
    const out = await Promise.all(Array.from({ length: 6 }, () => p.call('PUT', '/evaluation/sampling-rules', rule({ rule_id: 'race' }))));
    expect(out.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(await p.rules()).toHaveLength(1);
  });

  it('"A zero rate, enabled: false, or per_tick_limit of 0 disables a rule": stored, shown inactive, left out of active()', async () => {
    const p = await project();
    for (const [id, over] of [
      ['zero-rate', { sampling_rate: 0 }],
      ['off', { enabled: false }],
      ['zero-limit', { per_tick_limit: 0 }],
      ['on', { sampling_rate: 1, per_tick_limit: 1000 }],
    ] as const)
      expect((await p.call('PUT', '/evaluation/sampling-rules', rule({ rule_id: id, ...over }))).json()).toMatchObject({ rule_id: id, active: id === 'on' });
    const active = (await t.ctx.samplingRules.active()).filter((r) => r.projectId === p.projectId);
    expect(active.map((r) => r.ruleId)).toEqual(['on']);
    expect(active[0]).toMatchObject({ evaluator: { evaluator_id: 'latency', version: 1 }, subjectKind: 'SUBJECT_KIND_AGENT_RUN', samplingRate: 1, perTickLimit: 1000, enabled: true });
  });

  it('"References are validated when written": a missing evaluator or version is 404 and nothing is stored', async () => {
    const p = await project();
    expectError(await p.call('PUT', '/evaluation/sampling-rules', rule({ evaluator: { evaluator_id: 'latency', version: 2 } })), 404, /evaluator version/);
    expectError(await p.call('PUT', '/evaluation/sampling-rules', rule({ evaluator: { evaluator_id: 'nobody', version: 1 } })), 404, /evaluator version/);
    expect(await p.rules()).toEqual([]);
  });

  it('only runs can be sampled; a session-only evaluator cannot sample runs; a judge evaluator can', async () => {
    const p = await project();
    await p.evaluator('turns', 'EVALUATOR_KIND_DETERMINISTIC', SESSION);
    await p.evaluator('judge', 'EVALUATOR_KIND_LLM_JUDGE', JUDGE);
    for (const k of ['SUBJECT_KIND_AGENT_STEP', 'SUBJECT_KIND_AGENT_SESSION', 'SUBJECT_KIND_AGENT_TURN', 'SUBJECT_KIND_DATASET_ITEM'])
      expectError(await p.call('PUT', '/evaluation/sampling-rules', rule({ subject_kind: k })), 400, /cannot be sampled: a rule selects new runs/);
    expectError(await p.call('PUT', '/evaluation/sampling-rules', rule({ evaluator: { evaluator_id: 'turns', version: 1 } })), 400, /scores only sessions/);
    expect((await p.call('PUT', '/evaluation/sampling-rules', rule({ evaluator: { evaluator_id: 'judge', version: 1 } }))).statusCode).toBe(201);
    expect((await p.rules()).map((r) => r.rule_id)).toEqual(['nightly']);
  });

  it('bad input is 400 naming the field, and nothing is stored', async () => {
    const p = await project();
    const cases: [unknown, RegExp][] = [
      [rule({ evaluator: { evaluator_id: 'latency', version: 'latest' } }), /no "latest" alias/],
      [rule({ evaluator: { evaluator_id: 'latency', version: '1' } }), /version must be integer/],
      [rule({ evaluator: { evaluator_id: 'latency', version: 0 } }), /version must be >= 1/],
      [rule({ evaluator: { evaluator_id: 'latency', version: 1.5 } }), /version must be integer/],
      [rule({ evaluator: { evaluator_id: 'latency' } }), /version/],
      [rule({ evaluator: { evaluator_id: 'legacy/a/b', version: 1 } }), /legacy/],
      [rule({ subject_kind: 'SUBJECT_KIND_UNSPECIFIED' }), /must be one of: SUBJECT_KIND_AGENT_RUN/],
      [rule({ subject_kind: 'run' }), /must be one of/],
      [rule({ sampling_rate: 1.01 }), /sampling_rate must be <= 1/],
      [rule({ sampling_rate: -0.1 }), /sampling_rate must be >= 0/],
      [rule({ sampling_rate: '0.5' }), /sampling_rate must be number/],
      [rule({ per_tick_limit: -1 }), /per_tick_limit must be >= 0/],
      [rule({ per_tick_limit: 1001 }), /per_tick_limit must be <= 1000/],
      [rule({ per_tick_limit: 2.5 }), /per_tick_limit must be integer/],
      [rule({ enabled: 'yes' }), /enabled must be boolean/],
      [rule({ rule_id: 'Nightly Run' }), /rule_id must match/],
      [{ ...rule(), rule_id: undefined }, /rule_id/],
      [rule({ updated_by: 'user:mallory' }), /updated_by .*cannot be sent/],
      [rule({ created_by: 'user:mallory' }), /created_by .*cannot be sent/],
      [rule({ extra: true }), /unknown field "extra"/],
      [rule({ evaluator: { evaluator_id: 'latency', version: 1, deep: { a: { b: { c: [] } } } } }), /unknown field "deep"/],
    ];
    for (const [payload, msg] of cases) expectError(await p.call('PUT', '/evaluation/sampling-rules', payload), 400, msg);
    expect(await p.rules()).toEqual([]);
  });
});

describe('GET and DELETE', () => {
  it('list filters evaluator_id and enabled, pages by rule id; bad filters are 400', async () => {
    const p = await project();
    await p.evaluator('judge', 'EVALUATOR_KIND_LLM_JUDGE', JUDGE);
    await p.call('PUT', '/evaluation/sampling-rules', rule({ rule_id: 'c' }));
    await p.call('PUT', '/evaluation/sampling-rules', rule({ rule_id: 'a', enabled: false }));
    await p.call('PUT', '/evaluation/sampling-rules', rule({ rule_id: 'b', evaluator: { evaluator_id: 'judge', version: 1 } }));
    const ids = (rs: Record<string, unknown>[]) => rs.map((r) => r.rule_id);
    expect(ids(await p.rules())).toEqual(['a', 'b', 'c']);
    expect(ids(await p.rules('?enabled=false'))).toEqual(['a']);
    expect(ids(await p.rules('?enabled=true&evaluator_id=latency'))).toEqual(['c']);
    const first = (await p.call('GET', '/evaluation/sampling-rules?limit=2')).json();
    expect(ids(first.sampling_rules)).toEqual(['a', 'b']);
    expect((await p.call('GET', `/evaluation/sampling-rules?limit=2&cursor=${first.next_cursor}`)).json()).toMatchObject({ sampling_rules: [{ rule_id: 'c' }], next_cursor: null });
    expectError(await p.call('GET', `/evaluation/sampling-rules?limit=2&enabled=true&cursor=${first.next_cursor}`), 400, /another query/);
    expectError(await p.call('GET', '/evaluation/sampling-rules?enabled=maybe'), 400);
    expectError(await p.call('GET', '/evaluation/sampling-rules?enabled=true&enabled=false'), 400);
    expectError(await p.call('GET', '/evaluation/sampling-rules?limit=201'), 400);
    expectError(await p.call('GET', '/evaluation/sampling-rules?subject_kind=x'), 400);
  });

  it('DELETE removes the rule (204); a missing rule is 404; another project\'s rule is 404 and stays', async () => {
    const a = await project();
    const b = await project();
    await a.call('PUT', '/evaluation/sampling-rules', rule());
    await b.call('PUT', '/evaluation/sampling-rules', rule());
    const del = await a.call('DELETE', '/evaluation/sampling-rules/nightly');
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expectError(await a.call('DELETE', '/evaluation/sampling-rules/nightly'), 404, /sampling rule not found/);
    expectError(await a.call('DELETE', `/evaluation/sampling-rules/nightly?project_id=${b.projectId}`), 404);
    expectError(await a.call('GET', `/evaluation/sampling-rules?project_id=${b.projectId}`), 404);
    expectError(await a.call('PUT', `/evaluation/sampling-rules?project_id=${b.projectId}`, rule({ rule_id: 'planted' })), 404);
    expectError(await a.call('DELETE', '/evaluation/sampling-rules/Not%20A%20Slug'), 400, /ruleId must match/);
    expect((await b.rules()).map((r) => r.rule_id)).toEqual(['nightly']);
    expect(await a.rules()).toEqual([]);
  });

  it('an organization key reaches a project by project_id; a rule cites a version of that project only', async () => {
    const p = await project();
    const res = await t.call({ method: 'PUT', url: `/api/v1/evaluation/sampling-rules?project_id=${p.projectId}`, payload: rule({ rule_id: 'org' }) });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().updated_by).toMatch(/^(user|api_key):/);
    const other = await t.call({ method: 'PUT', url: `/api/v1/evaluation/sampling-rules?project_id=${t.projectId}`, payload: rule({ rule_id: 'org' }) });
    expectError(other, 404, /evaluator version/);
  });
});
