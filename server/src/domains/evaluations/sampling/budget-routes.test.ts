/**
 * `GET, PUT /evaluation/budget` over HTTP: "organization-wide; reads no project", "evals:read: read ...
 * budget", "evals:write: ... set budget", and bad input as an attacker sends it (a 4xx in our shape,
 * never a 5xx, and nothing changes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../../testing/app.js';

const clock = fixedClock('2026-06-01T10:00:00.000Z');
let t: TestApp;
const url = '/api/v1/evaluation/budget';

async function orgKey(scopes: string[]): Promise<string> {
  const k = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: `org-${scopes.join('-')}`, scopes, org_wide: true } });
  if (k.statusCode !== 201) throw new Error(k.body);
  return k.json().key;
}

const get = (key?: string, query = '') => t.call({ method: 'GET', url: `${url}${query}`, key });
const put = (payload: unknown, key?: string, query = '') => t.call({ method: 'PUT', url: `${url}${query}`, payload: payload as object, key });

/** The stored budget did not move. */
async function unchanged(before: unknown) {
  expect((await get()).json()).toEqual(before);
}

beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(async () => t.close());

describe('GET, PUT /evaluation/budget', () => {
  it('never set: the default (no judge spend, no count cap), with budget_set false and today\'s zero spend', async () => {
    const r = await get();
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      daily_limit_nano_usd: 0,
      daily_evaluation_limit: null,
      budget_set: false,
      day: '2026-06-01',
      spent_nano_usd: 0,
      evaluations: 0,
      remaining_nano_usd: 0,
      remaining_evaluations: null,
      resets_at: '2026-06-02T00:00:00.000Z',
      updated_at: null,
      updated_by: null,
      version: 0,
    });
  });

  it('PUT sets it; updated_by comes from the credential; the spend counts against it; a repeated PUT only moves version', async () => {
    const key = await orgKey(['evals:write', 'evals:read']);
    const keyId = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys' })).json().api_keys.find((k: { name: string }) => k.name === 'org-evals:write-evals:read').id;
    const body = { daily_limit_nano_usd: 2_500_000_000, daily_evaluation_limit: 100 };
    const r = await put(body, key);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ ...body, budget_set: true, updated_at: '2026-06-01T10:00:00.000Z', updated_by: `api_key:${keyId}`, version: 1 });
    await t.ctx.evaluationBudget.charge(t.orgId, { costNanos: 500_000_000, kind: 'EVALUATOR_KIND_LLM_JUDGE' });
    const after = (await get()).json();
    expect(after).toMatchObject({ spent_nano_usd: 500_000_000, evaluations: 1, remaining_nano_usd: 2_000_000_000, remaining_evaluations: 99 });
    const again = await put(body, key);
    expect(again.json()).toEqual({ ...after, version: 2 });
    // Every write is in the audit trail, naming the key.
    const audit = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?limit=20' })).json().audit_events;
    const writes = audit.filter((e: { resource: string; action: string }) => e.resource === 'evaluation.budget' && e.action === 'update');
    expect(writes).toHaveLength(2);
    expect(writes[0]).toMatchObject({ actor: { kind: 'api_key', id: keyId }, result: 'success' });
  });

  it('daily_evaluation_limit absent or null is no count cap; the largest exact integer is accepted', async () => {
    expect((await put({ daily_limit_nano_usd: Number.MAX_SAFE_INTEGER })).json()).toMatchObject({ daily_limit_nano_usd: Number.MAX_SAFE_INTEGER, daily_evaluation_limit: null });
    expect((await put({ daily_limit_nano_usd: 0, daily_evaluation_limit: null })).json()).toMatchObject({ daily_limit_nano_usd: 0, daily_evaluation_limit: null });
  });

  it('"organization-wide; reads no project": a project_id parameter is 400 saying so, on GET and PUT, repeated or empty too', async () => {
    const before = (await get()).json();
    for (const q of [`?project_id=${t.projectId}`, '?project_id=', `?project_id=a&project_id=b`]) {
      for (const r of [await get(undefined, q), await put({ daily_limit_nano_usd: 5 }, undefined, q)]) {
        expect(r.statusCode).toBe(400);
        // A repeated parameter is refused as such by the query parser first (still naming project_id).
        expect(r.json()).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(q.includes('&') ? /project_id/ : /organization-wide and reads no project/) });
      }
    }
    await unchanged(before);
  });

  it('a project-bound key may read (evals:read) but PUT is 403, even with evals:write', async () => {
    const before = (await get()).json();
    const p = await projectWithKey(t, ['evals:read', 'evals:write'], 'budget-p');
    expect((await get(p.key)).statusCode).toBe(200);
    const r = await put({ daily_limit_nano_usd: 1 }, p.key);
    expect(r.statusCode).toBe(403);
    expect(r.json()).toMatchObject({ error: 'permission_denied', message: expect.stringContaining('organization-level credential') });
    await unchanged(before);
  });

  it('scopes: GET needs evals:read, PUT needs evals:write', async () => {
    const before = (await get()).json();
    const readOnly = await orgKey(['evals:read']);
    const writeOnly = await orgKey(['evals:write']);
    const other = await orgKey(['agents:read']);
    expect((await get(other)).statusCode).toBe(403);
    expect((await get(writeOnly)).statusCode).toBe(403);
    expect((await put({ daily_limit_nano_usd: 1 }, readOnly)).statusCode).toBe(403);
    expect((await get(null as unknown as string)).statusCode).toBe(401);
    await unchanged(before);
    expect((await put({ daily_limit_nano_usd: 3 }, writeOnly)).statusCode).toBe(200);
  });

  it('bad bodies are 400 in our shape, never a 5xx, and change nothing', async () => {
    const before = (await get()).json();
    const deep: Record<string, unknown> = {};
    let cur = deep;
    for (let i = 0; i < 200; i++) cur = (cur.x = {}) as Record<string, unknown>;
    const bad: [unknown, RegExp][] = [
      [{}, /daily_limit_nano_usd/],
      [{ daily_limit_nano_usd: -1 }, /daily_limit_nano_usd/],
      [{ daily_limit_nano_usd: 1.5 }, /daily_limit_nano_usd/],
      [{ daily_limit_nano_usd: '100' }, /daily_limit_nano_usd/],
      [{ daily_limit_nano_usd: 1e300 }, /daily_limit_nano_usd/],
      [{ daily_limit_nano_usd: Number.MAX_SAFE_INTEGER + 1 }, /daily_limit_nano_usd/],
      [{ daily_limit_nano_usd: null }, /daily_limit_nano_usd/],
      [{ daily_limit_nano_usd: 1, daily_evaluation_limit: 0 }, /daily_evaluation_limit/],
      [{ daily_limit_nano_usd: 1, daily_evaluation_limit: -3 }, /daily_evaluation_limit/],
      [{ daily_limit_nano_usd: 1, daily_evaluation_limit: 'none' }, /daily_evaluation_limit/],
      [{ daily_limit_nano_usd: 1, daily_evaluation_limit: [5] }, /daily_evaluation_limit/],
      [{ daily_limit_nano_usd: 1, extra: deep }, /extra|additional/],
      [{ daily_limit_nano_usd: 1, limit_usd: 3 }, /limit_usd|additional/],
      [[{ daily_limit_nano_usd: 1 }], /object/],
      [{ daily_limit_nano_usd: 1, spent_nano_usd: 0 }, /spent_nano_usd is read-only/],
      [{ daily_limit_nano_usd: 1, version: 9 }, /version is read-only/],
      [{ daily_limit_nano_usd: 1, day: '2026-01-01' }, /day is read-only/],
      [{ daily_limit_nano_usd: 1, updated_by: 'user:someone' }, /updated_by is taken from the credential/],
      [{ daily_limit_nano_usd: 1, created_by: 'user:someone' }, /created_by is taken from the credential/],
    ];
    for (const [body, msg] of bad) {
      const r = await put(body);
      expect(r.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.json().error).toBe('invalid_request');
      expect(r.json().message).toMatch(msg);
    }
    const text = await t.call({ method: 'PUT', url, payload: 'daily_limit_nano_usd=5', headers: { 'content-type': 'text/plain' } });
    expect(text.statusCode).toBe(415);
    const broken = await t.call({ method: 'PUT', url, payload: '{"daily_limit_nano_usd": 5', headers: { 'content-type': 'application/json' } });
    expect(broken.statusCode).toBe(400);
    const huge = await t.call({ method: 'PUT', url, payload: JSON.stringify({ daily_limit_nano_usd: 1, pad: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    expect(huge.statusCode).toBe(413);
    expect((await t.call({ method: 'GET', url: `${url}?limit=5` })).statusCode).toBe(400);
    await unchanged(before);
  });

  it('concurrent identical PUTs all succeed with distinct versions and one resulting budget', async () => {
    const v0 = (await get()).json().version as number;
    const rs = await Promise.all(Array.from({ length: 8 }, () => put({ daily_limit_nano_usd: 777, daily_evaluation_limit: 9 })));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(rs.map((r) => r.json().version).sort((a, b) => a - b)).toEqual(Array.from({ length: 8 }, (_, i) => v0 + i + 1));
    expect((await get()).json()).toMatchObject({ daily_limit_nano_usd: 777, daily_evaluation_limit: 9, version: v0 + 8 });
  });

  it('"429 | daily evaluation budget spent": the answer carries budget_exhausted, the limit, today\'s spend and Retry-After', async () => {
    await put({ daily_limit_nano_usd: 100 });
    await t.ctx.evaluationBudget.charge(t.orgId, { costNanos: 10_000, kind: 'EVALUATOR_KIND_LLM_JUDGE' });
    const e = await t.ctx.evaluationBudget.admit(t.orgId, 'EVALUATOR_KIND_LLM_JUDGE').then(
      () => undefined,
      (err: unknown) => err as { status: number; code: string; headers: Record<string, string>; details: Record<string, unknown> },
    );
    expect(e).toMatchObject({ status: 429, code: 'budget_exhausted', headers: { 'retry-after': String(14 * 3600) }, details: { limit: 'daily_limit_nano_usd', daily_limit_nano_usd: 100 } });
  });
});
