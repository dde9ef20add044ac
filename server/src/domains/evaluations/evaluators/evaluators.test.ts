/** Evaluators through HTTP: create, read, append versions, exact versions, project pinning, and bad input on every route. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const MEASURE = JSON.stringify({ measurement: 'run.duration_ms' });
const GATE = JSON.stringify({ aggregation: 'all', assertions: [{ field: 'run.status', op: 'equals', value: 'completed' }] });
const JUDGE = JSON.stringify({ criteria: [{ name: 'helpful', description: 'answers the question' }], evidence: ['run_summary'] });
const body = (over: Record<string, unknown> = {}) => ({ evaluator_id: 'latency', display_name: 'Latency', metric_name: 'latency_ms', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE, ...over });

async function project(scopes = ['evals:read', 'evals:write']) {
  const p = await projectWithKey(t, scopes);
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, key = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { ...p, call };
}

function expectError(res: LightMyRequestResponse, status: number, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const b = res.json();
  expect(Object.keys(b).sort()).toEqual(b.details ? ['details', 'error', 'message'] : ['error', 'message']);
  if (message) expect(b.message).toMatch(message);
  return b;
}

/** What a refused request must not change: the project's evaluators with every version. */
async function snapshot(projectId: string) {
  const db = t.db;
  const heads = await db.selectFrom('evaluators').selectAll().where('project_id', '=', projectId).orderBy('evaluator_id').execute();
  const versions = await db.selectFrom('evaluator_versions').selectAll().where('project_id', '=', projectId).orderBy('evaluator_id').orderBy('version').execute();
  return JSON.stringify({ heads, versions });
}

describe('POST /evaluation/evaluators', () => {
  it('"Creation returns the evaluator with version 1"; created_by is the credential; config_json exactly as sent', async () => {
    const p = await project();
    const cfg = '{ "measurement" : "run.duration_ms" }';
    const res = await p.call('POST', '/evaluation/evaluators', body({ config_json: cfg }));
    expect(res.statusCode, res.body).toBe(201);
    const e = res.json();
    expect(e).toMatchObject({ project_id: p.projectId, evaluator_id: 'latency', kind: 'EVALUATOR_KIND_DETERMINISTIC', latest_version: 1, versions: [1], created_by: `api_key:${p.keyId}` });
    expect(e.latest).toEqual({
      project_id: p.projectId,
      evaluator_id: 'latency',
      version: 1,
      display_name: 'Latency',
      metric_name: 'latency_ms',
      kind: 'EVALUATOR_KIND_DETERMINISTIC',
      config_json: cfg,
      created_at: e.created_at,
      created_by: `api_key:${p.keyId}`,
    });
    expect((await p.call('GET', '/evaluation/evaluators/latency')).json()).toEqual(e);
  });

  it('an existing evaluator_id is 409, and nothing changes', async () => {
    const p = await project();
    expect((await p.call('POST', '/evaluation/evaluators', body())).statusCode).toBe(201);
    const before = await snapshot(p.projectId);
    expectError(await p.call('POST', '/evaluation/evaluators', body({ display_name: 'Other' })), 409, /already exists/);
    expect(await snapshot(p.projectId)).toBe(before);
  });

  it('bad input is 400 in our shape and writes nothing', async () => {
    const p = await project();
    const cases: [unknown, RegExp][] = [
      [body({ evaluator_id: 'Upper' }), /evaluator_id must match/],
      [body({ evaluator_id: 'legacy/alice/helpful' }), /legacy/],
      [body({ evaluator_id: '' }), /evaluator_id must match/],
      [body({ evaluator_id: 'a'.repeat(129) }), /evaluator_id must match/],
      [body({ kind: 'EVALUATOR_KIND_UNSPECIFIED' }), /EVALUATOR_KIND_DETERMINISTIC/],
      [body({ kind: 'EVALUATOR_KIND_MAGIC' }), /must be one of/],
      [body({ config_json: { measurement: 'run.duration_ms' } }), /config_json is a string holding JSON/],
      [body({ config_json: '{"measurement":"run.tokens"}' }), /measurement_unknown/],
      [body({ config_json: `${'['.repeat(5000)}${']'.repeat(5000)}` }), /config_not_an_object/],
      [body({ config_json: 'x'.repeat(70_000) }), /config_json_too_long/],
      [body({ display_name: ' ' }), /display_name must not be blank/],
      [body({ metric_name: 'Latency MS' }), /metric_name must match/],
      [body({ created_by: 'user:mallory' }), /created_by .*cannot be sent/],
      [body({ author: 'mallory' }), /author is taken from the credential/],
      [body({ version: 7 }), /version is set by the server/],
      [body({ extra: 1 }), /unknown field "extra"/],
      [{ ...body(), evaluator_id: undefined }, /evaluator_id/],
      [[body()], /must be object/],
      [body({ evaluator_id: 3 }), /must be string/],
    ];
    const before = await snapshot(p.projectId);
    for (const [payload, msg] of cases) expectError(await p.call('POST', '/evaluation/evaluators', payload), 400, msg);
    const badJson = await t.call({ method: 'POST', url: '/api/v1/evaluation/evaluators', key: p.key, headers: { 'content-type': 'application/json' }, payload: '{"evaluator_id":' });
    expectError(badJson, 400);
    const invalid = expectError(await p.call('POST', '/evaluation/evaluators', body({ config_json: GATE.replace('completed', 'done') })), 400);
    expect(invalid.details).toEqual({ reason: 'value_unknown', path: '$.assertions[0].value' });
    expect(await snapshot(p.projectId)).toBe(before);
  });

  it('concurrent identical creates: one 201, the rest 409, never a 5xx', async () => {
    const p = await project();
    const out = await Promise.all(Array.from({ length: 6 }, () => p.call('POST', '/evaluation/evaluators', body({ evaluator_id: 'race' }))));
    expect(out.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe('versions', () => {
  it('"changing a rule creates a new version": append n+1; earlier versions never change; display and metric names default to the latest', async () => {
    const p = await project();
    await p.call('POST', '/evaluation/evaluators', body({ evaluator_id: 'gate', config_json: GATE }));
    const v1 = (await p.call('GET', '/evaluation/evaluators/gate/versions/1')).json();
    const r2 = await p.call('POST', '/evaluation/evaluators/gate/versions', { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE });
    expect(r2.statusCode, r2.body).toBe(201);
    expect(r2.json()).toMatchObject({ version: 2, display_name: 'Latency', metric_name: 'latency_ms', config_json: MEASURE, created: true, created_by: `api_key:${p.keyId}` });
    const r3 = await p.call('POST', '/evaluation/evaluators/gate/versions', { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE, metric_name: 'duration', display_name: 'Duration' });
    expect(r3.json()).toMatchObject({ version: 3, display_name: 'Duration', metric_name: 'duration' });
    expect((await p.call('GET', '/evaluation/evaluators/gate/versions/1')).json()).toEqual(v1);
    const e = (await p.call('GET', '/evaluation/evaluators/gate')).json();
    expect(e).toMatchObject({ latest_version: 3, versions: [1, 2, 3], latest: { version: 3, metric_name: 'duration' } });
  });

  it('an append identical to the latest version writes nothing and answers it (200, created false): a retried append is safe', async () => {
    const p = await project();
    await p.call('POST', '/evaluation/evaluators', body({ evaluator_id: 'same' }));
    const before = await snapshot(p.projectId);
    const again = await p.call('POST', '/evaluation/evaluators/same/versions', { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ version: 1, created: false });
    expect(await snapshot(p.projectId)).toBe(before);
  });

  it('the kind is fixed for life: another kind is 409; a missing evaluator is 404; bad bodies are 400; nothing changes', async () => {
    const p = await project();
    await p.call('POST', '/evaluation/evaluators', body({ evaluator_id: 'k' }));
    const before = await snapshot(p.projectId);
    expectError(await p.call('POST', '/evaluation/evaluators/k/versions', { kind: 'EVALUATOR_KIND_LLM_JUDGE', config_json: JUDGE }), 409, /kind is fixed/);
    expectError(await p.call('POST', '/evaluation/evaluators/nobody/versions', { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE }), 404);
    for (const [payload, msg] of [
      [{ config_json: MEASURE }, /kind/],
      [{ kind: 'EVALUATOR_KIND_UNSPECIFIED', config_json: MEASURE }, /must be one of: EVALUATOR_KIND_DETERMINISTIC/],
      [{ kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: JUDGE }, /form_missing/],
      [{ kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: { measurement: 'run.duration_ms' } }, /config_json is a string/],
      [{ kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE, version: 9 }, /version is set by the server/],
      [{ kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE, evaluator_id: 'k' }, /unknown field "evaluator_id"/],
      [{ kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE, created_by: 'x' }, /created_by/],
    ] as [unknown, RegExp][])
      expectError(await p.call('POST', '/evaluation/evaluators/k/versions', payload), 400, msg);
    expectError(await p.call('POST', '/evaluation/evaluators/Bad%20Id/versions', { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: MEASURE }), 400);
    expect(await snapshot(p.projectId)).toBe(before);
  });

  it('"there is no latest alias": latest, 0, 1.0, -1, 01, huge are 400; a version the evaluator lacks is 404', async () => {
    const p = await project();
    await p.call('POST', '/evaluation/evaluators', body({ evaluator_id: 'v' }));
    expectError(await p.call('GET', '/evaluation/evaluators/v/versions/latest'), 400, /no "latest" alias/);
    expectError(await p.call('GET', '/evaluation/evaluators/v/versions/0'), 400, /reserved for legacy/);
    for (const v of ['1.0', '-1', '01', '1e0', '99999999999', '%20', 'abc']) expectError(await p.call('GET', `/evaluation/evaluators/v/versions/${v}`), 400, /exact integer/);
    expectError(await p.call('GET', '/evaluation/evaluators/v/versions/2'), 404, /evaluator version not found/);
    expectError(await p.call('GET', '/evaluation/evaluators/nobody/versions/1'), 404);
    expect((await p.call('GET', '/evaluation/evaluators/v/versions/1')).json()).toMatchObject({ version: 1 });
  });

  it('no update or patch route exists', async () => {
    const p = await project();
    await p.call('POST', '/evaluation/evaluators', body({ evaluator_id: 'np' }));
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.call({ method, url: '/api/v1/evaluation/evaluators/np', key: p.key, payload: body() });
      expect([404, 405]).toContain(res.statusCode);
    }
    const res = await t.call({ method: 'PATCH', url: '/api/v1/evaluation/evaluators/np/versions/1', key: p.key, payload: body() });
    expect([404, 405]).toContain(res.statusCode);
  });
});

describe('reads and projects', () => {
  it('list: by id with the latest version, kind filter (unknown 400), cursor paging; limit bounds', async () => {
    const p = await project();
    for (const [id, kind, cfg] of [
      ['c-judge', 'EVALUATOR_KIND_LLM_JUDGE', JUDGE],
      ['a-gate', 'EVALUATOR_KIND_DETERMINISTIC', GATE],
      ['b-path', 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', JSON.stringify({ step_key: 'tool_name', reference: ['search'] })],
    ])
      expect((await p.call('POST', '/evaluation/evaluators', body({ evaluator_id: id, kind, config_json: cfg }))).statusCode).toBe(201);
    const all = (await p.call('GET', '/evaluation/evaluators')).json();
    expect(all.evaluators.map((e: { evaluator_id: string }) => e.evaluator_id)).toEqual(['a-gate', 'b-path', 'c-judge']);
    expect(all.evaluators[0]).not.toHaveProperty('versions');
    const judges = (await p.call('GET', '/evaluation/evaluators?kind=EVALUATOR_KIND_LLM_JUDGE,EVALUATOR_KIND_REFERENCE_TRAJECTORY')).json();
    expect(judges.evaluators.map((e: { evaluator_id: string }) => e.evaluator_id)).toEqual(['b-path', 'c-judge']);
    const first = (await p.call('GET', '/evaluation/evaluators?limit=2')).json();
    expect(first.evaluators).toHaveLength(2);
    const second = (await p.call('GET', `/evaluation/evaluators?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second).toMatchObject({ evaluators: [{ evaluator_id: 'c-judge' }], next_cursor: null });
    expectError(await p.call('GET', `/evaluation/evaluators?limit=2&kind=EVALUATOR_KIND_LLM_JUDGE&cursor=${first.next_cursor}`), 400, /another query/);
    expectError(await p.call('GET', '/evaluation/evaluators?kind=EVALUATOR_KIND_UNSPECIFIED'), 400, /not recognized/);
    expectError(await p.call('GET', '/evaluation/evaluators?limit=0'), 400);
    expectError(await p.call('GET', '/evaluation/evaluators?limit=201'), 400);
    expectError(await p.call('GET', '/evaluation/evaluators?limit=abc'), 400);
    expectError(await p.call('GET', '/evaluation/evaluators?cursor=!!!'), 400);
    expectError(await p.call('GET', '/evaluation/evaluators?cursor=a&cursor=b'), 400);
    expectError(await p.call('GET', '/evaluation/evaluators?nested[a][b]=1'), 400);
  });

  it('"an object of another project answers exactly like a missing one": a project key naming the other project is 404, and so is its evaluator', async () => {
    const a = await project();
    const b = await project();
    await b.call('POST', '/evaluation/evaluators', body({ evaluator_id: 'theirs' }));
    const missing = await a.call('GET', '/evaluation/evaluators/nobody');
    const theirs = await a.call('GET', '/evaluation/evaluators/theirs');
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json()).toEqual(missing.json());
    expectError(await a.call('GET', `/evaluation/evaluators/theirs?project_id=${b.projectId}`), 404);
    expectError(await a.call('GET', `/evaluation/evaluators/theirs/versions/1?project_id=${b.projectId}`), 404);
    expectError(await a.call('POST', `/evaluation/evaluators/theirs/versions?project_id=${b.projectId}`, { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: GATE }), 404);
    expectError(await a.call('POST', `/evaluation/evaluators?project_id=${b.projectId}`, body({ evaluator_id: 'planted' })), 404);
    expect((await b.call('GET', '/evaluation/evaluators')).json().evaluators.map((e: { evaluator_id: string }) => e.evaluator_id)).toEqual(['theirs']);
    expect((await b.call('GET', '/evaluation/evaluators/theirs')).json().latest_version).toBe(1);
  });

  it('scopes: reads need evals:read, writes evals:write', async () => {
    const reader = await project(['evals:read']);
    expectError(await reader.call('POST', '/evaluation/evaluators', body()), 403);
    expect((await reader.call('GET', '/evaluation/evaluators')).statusCode).toBe(200);
    const writer = await project(['evals:write']);
    expectError(await writer.call('GET', '/evaluation/evaluators'), 403);
  });
});
