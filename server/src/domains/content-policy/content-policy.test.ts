/**
 * Content policies through HTTP: the resource (grid, version, updated_by, expected_version), rules 1 to 7
 * of the content-policy table, retention windows, the refusal audit route, and attacker-style bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { gridRules, setContentPolicy } from '../../testing/content-policy.js';
import { secondOrganization } from '../../testing/people.js';
import { BOUNDARIES, CONTENT_CLASSES } from './model.js';

let t: TestApp;
const clock = fixedClock('2026-03-01T12:00:00.000Z');
beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;
const GOV = ['governance:read', 'governance:write'];
const url = (projectId: string, rest = '') => `/api/v1/projects/${projectId}/content-policy${rest}`;
const get = (u: string, key?: string) => t.call({ method: 'GET', url: u, ...(key ? { key } : {}) });
const put = (u: string, payload: unknown, key?: string) => t.call({ method: 'PUT', url: u, payload: payload as Obj, ...(key ? { key } : {}) });
const cell = (body: Obj, c: string, b: string) => body.rules.find((r: Obj) => r.content_class === c && r.sink === b)?.decision;

describe('the policy resource', () => {
  it('rule 1 "A project with no policy is answered as a fully-denied grid, not 404": version 0, no updated_by, all 24 cells deny', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    const r = await get(url(projectId), key);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ project_id: projectId, version: 0 });
    expect(body.updated_by).toBeUndefined();
    expect(body.rules).toHaveLength(24);
    expect(body.rules.every((x: Obj) => x.decision === 'deny')).toBe(true);
  });

  it('"every cell including denied ones"; rule 2 "A cell that is omitted equals deny"; "version increases on every change"; updated_by from the credential', async () => {
    const { projectId, key, keyId } = await projectWithKey(t, GOV);
    const a = await put(url(projectId), { rules: [{ content_class: 'model_transcript', sink: 'read', decision: 'allow' }] }, key);
    expect(a.statusCode, a.body).toBe(200);
    expect(a.json()).toMatchObject({ version: 1, updated_by: { api_key_id: keyId }, updated_at: '2026-03-01T12:00:00.000Z' });
    expect(a.json().rules).toHaveLength(24);
    expect(cell(a.json(), 'model_transcript', 'read')).toBe('allow');
    expect(cell(a.json(), 'model_transcript', 'store')).toBe('deny');
    const b = await put(url(projectId), { rules: [{ content_class: 'tool_arguments', sink: 'export', decision: 'allow_metadata' }] }, key);
    expect(b.json().version).toBe(2);
    // "replaces the grid": the earlier allow is gone.
    expect(cell(b.json(), 'model_transcript', 'read')).toBe('deny');
    expect(cell(b.json(), 'tool_arguments', 'export')).toBe('allow_metadata');
    // The same grid again is still a change of version.
    expect((await put(url(projectId), { rules: [{ content_class: 'tool_arguments', sink: 'export', decision: 'allow_metadata' }] }, key)).json().version).toBe(3);
    expect((await get(url(projectId), key)).json()).toMatchObject({ version: 3 });
  });

  it('rule 3 "expected_version mismatch returns 409; omitting it writes unconditionally"; 0 means "no policy yet"', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    const rules = gridRules('allow');
    expect((await put(url(projectId), { expected_version: 1, rules }, key)).statusCode).toBe(409);
    expect((await put(url(projectId), { expected_version: 0, rules }, key)).json().version).toBe(1);
    const stale = await put(url(projectId), { expected_version: 0, rules }, key);
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ error: 'conflict' });
    expect((await put(url(projectId), { expected_version: 1, rules: [] }, key)).json().version).toBe(2);
    expect((await put(url(projectId), { rules }, key)).json().version).toBe(3);
    expect(cell((await get(url(projectId), key)).json(), 'replay_dom', 'judge_transfer')).toBe('allow');
  });

  it('rule 3 under concurrency: of identical conditional writes exactly one wins, the rest are 409; unconditional ones all land', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    const rs = await Promise.all(Array.from({ length: 8 }, () => put(url(projectId), { expected_version: 0, rules: [] }, key)));
    expect(rs.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(rs.filter((r) => r.statusCode === 409)).toHaveLength(7);
    const us = await Promise.all(Array.from({ length: 5 }, () => put(url(projectId), { rules: [] }, key)));
    expect(us.every((r) => r.statusCode === 200)).toBe(true);
    expect((await get(url(projectId), key)).json().version).toBe(6);
  });

  it('rule 4 "An unrecognized class, boundary or decision returns 400"; a cell listed twice is 400; nothing changes', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    const bad = [
      { content_class: 'screenshots', sink: 'read', decision: 'allow' },
      { content_class: 'model_transcript', sink: 'sink', decision: 'allow' },
      { content_class: 'model_transcript', sink: 'read', decision: 'maybe' },
      { content_class: 'model_transcript', sink: 'read', decision: 'ALLOW' },
      { content_class: 'model_transcript', sink: 'read' },
      { content_class: 'model_transcript', boundary: 'read', decision: 'allow' },
    ];
    for (const rule of bad) {
      const r = await put(url(projectId), { rules: [rule] }, key);
      expect(r.statusCode, JSON.stringify(rule)).toBe(400);
      expect(r.json()).toMatchObject({ error: 'invalid_request' });
    }
    const twice = await put(url(projectId), { rules: [{ content_class: 'memory_item', sink: 'store', decision: 'allow' }, { content_class: 'memory_item', sink: 'store', decision: 'allow' }] }, key);
    expect(twice.statusCode).toBe(400);
    expect(twice.json().message).toMatch(/listed twice/);
    expect((await get(url(projectId), key)).json().version).toBe(0);
  });

  it('the credential names who changed it: updated_by (or any actor field) in the body is 400', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    for (const f of ['updated_by', 'updated_at', 'user_id']) {
      const r = await put(url(projectId), { rules: [], [f]: 'mallory' }, key);
      expect(r.statusCode, f).toBe(400);
      expect(r.json().message).toContain(f);
    }
    expect((await get(url(projectId), key)).json().version).toBe(0);
  });

  it('scopes: reads need governance:read, writes governance:write (403)', async () => {
    const { projectId, key } = await projectWithKey(t, ['governance:read']);
    const w = await projectWithKey(t, ['governance:write']);
    expect((await get(url(projectId), key)).statusCode).toBe(200);
    expect((await put(url(projectId), { rules: [] }, key)).statusCode).toBe(403);
    expect((await get(url(w.projectId), w.key)).statusCode).toBe(403);
    expect((await get('/api/v1/content-policies', w.key)).statusCode).toBe(403);
    expect((await get(url(projectId, '/retention'), w.key)).statusCode).toBe(403);
    expect((await put(url(projectId, '/retention'), { windows: [] }, key)).statusCode).toBe(403);
    expect((await get(url(projectId, '/refusals'), w.key)).statusCode).toBe(403);
  });
});

describe('rule 6: a project-scoped credential is pinned to its project', () => {
  it('"including routes with the project in the path": another project is 404 on every route; "list routes narrow to that project"', async () => {
    const mine = await projectWithKey(t, GOV);
    const other = await projectWithKey(t, GOV);
    await setContentPolicy(t, other.projectId, gridRules('allow'));
    for (const rest of ['', '/retention', '/refusals']) {
      const r = await get(url(other.projectId, rest), mine.key);
      expect(r.statusCode, rest).toBe(404);
      expect(r.json()).toMatchObject({ error: 'not_found' });
    }
    expect((await put(url(other.projectId), { rules: [] }, mine.key)).statusCode).toBe(404);
    expect((await put(url(other.projectId, '/retention'), { windows: [{ content_class: 'replay_dom', retention_days: 3 }] }, mine.key)).statusCode).toBe(404);
    expect((await get(url(other.projectId), other.key)).json().version).toBe(1);
    expect((await get(url(other.projectId, '/retention'), other.key)).json().windows).toEqual([]);
    const list = (await get('/api/v1/content-policies', mine.key)).json();
    expect(list.content_policies.map((p: Obj) => p.project_id)).toEqual([mine.projectId]);
    expect(list.next_cursor).toBeNull();
  });

  it('"organization-scoped credentials keep the organization-wide list and path selection"; another organization\'s project is 404', async () => {
    const a = await projectWithKey(t, GOV);
    expect((await get(url(a.projectId))).statusCode).toBe(200);
    const org2 = await secondOrganization(t);
    expect((await get(url(a.projectId), org2.ownerKey)).statusCode).toBe(404);
    expect((await put(url(a.projectId), { rules: [] }, org2.ownerKey)).statusCode).toBe(404);
    expect((await get(url('no-such-project'))).statusCode).toBe(404);
  });
});

describe('GET /content-policies', () => {
  it('"one policy per project, newest-changed first; limit, opaque cursor; follow next_cursor until empty"', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { projectId } = await projectWithKey(t, GOV);
      clock.advance(1000);
      await setContentPolicy(t, projectId, gridRules('allow_metadata'));
      ids.push(projectId);
    }
    // The first one changes again: it is now the newest.
    clock.advance(1000);
    await setContentPolicy(t, ids[0], gridRules('allow'));
    const seen: Obj[] = [];
    let cursor = '';
    for (let n = 0; n < 100; n++) {
      const r = await get(`/api/v1/content-policies?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.statusCode, r.body).toBe(200);
      seen.push(...r.json().content_policies);
      if (!r.json().next_cursor) break;
      expect(r.json().content_policies).toHaveLength(2);
      cursor = r.json().next_cursor;
    }
    expect(seen.slice(0, 3).map((p) => p.project_id)).toEqual([ids[0], ids[2], ids[1]]);
    expect(seen[0].version).toBe(2);
    const pids = seen.map((p) => p.project_id);
    expect(new Set(pids).size).toBe(pids.length);
    expect(pids).toContain(t.projectId);
    // Projects without a policy come last, as the fully denied grid.
    const firstUnset = seen.findIndex((p) => p.version === 0);
    expect(seen.slice(firstUnset).every((p) => p.version === 0 && p.updated_by === undefined)).toBe(true);
  });

  it('a malformed cursor, a limit out of range, a repeated cursor are 400', async () => {
    for (const q of ['cursor=%%%', 'cursor=abc', 'limit=0', 'limit=201', 'limit=x', 'cursor=a&cursor=b']) expect((await get(`/api/v1/content-policies?${q}`)).statusCode, q).toBe(400);
  });
});

describe('retention windows (rule 7)', () => {
  it('"only classes that have a window"; "no default is synthesized"; a write replaces the windows; updated_by from the credential', async () => {
    const { projectId, key, keyId } = await projectWithKey(t, GOV);
    expect((await get(url(projectId, '/retention'), key)).json()).toEqual({ project_id: projectId, windows: [] });
    const r = await put(url(projectId, '/retention'), { windows: [{ content_class: 'replay_dom', retention_days: 30 }, { content_class: 'model_transcript', retention_days: 365 }] }, key);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().windows).toEqual([
      { content_class: 'model_transcript', retention_days: 365, updated_by: { api_key_id: keyId }, updated_at: expect.any(String) },
      { content_class: 'replay_dom', retention_days: 30, updated_by: { api_key_id: keyId }, updated_at: expect.any(String) },
    ]);
    expect(await t.ctx.contentPolicy.retentionWindows(projectId)).toEqual([
      { contentClass: 'model_transcript', retentionDays: 365 },
      { contentClass: 'replay_dom', retentionDays: 30 },
    ]);
    await put(url(projectId, '/retention'), { windows: [{ content_class: 'replay_dom', retention_days: 1 }] }, key);
    expect((await get(url(projectId, '/retention'), key)).json().windows.map((w: Obj) => [w.content_class, w.retention_days])).toEqual([['replay_dom', 1]]);
  });

  it('"a longer value than the platform ceiling and 0 are refused with 400"; unknown class, a class twice, non-integers are 400; nothing changes', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    const bodies = [
      { windows: [{ content_class: 'replay_dom', retention_days: 0 }] },
      { windows: [{ content_class: 'replay_dom', retention_days: 366 }] },
      { windows: [{ content_class: 'replay_dom', retention_days: -1 }] },
      { windows: [{ content_class: 'replay_dom', retention_days: 1.5 }] },
      { windows: [{ content_class: 'replay_dom', retention_days: '30' }] },
      { windows: [{ content_class: 'videos', retention_days: 30 }] },
      { windows: [{ content_class: 'replay_dom', retention_days: 30 }, { content_class: 'replay_dom', retention_days: 20 }] },
      { windows: [{ content_class: 'replay_dom' }] },
      {},
      { windows: 'all' },
    ];
    for (const b of bodies) expect((await put(url(projectId, '/retention'), b, key)).statusCode, JSON.stringify(b)).toBe(400);
    expect((await get(url(projectId, '/retention'), key)).json().windows).toEqual([]);
  });
});

describe('bad input never gives 5xx and changes nothing', () => {
  it('malformed, huge, deeply nested, repeated bodies and odd ids', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    const nested: Obj = {};
    let n = nested;
    for (let i = 0; i < 2000; i++) n = n.x = {};
    const cases: { payload?: unknown; body?: string; ct?: string }[] = [
      { body: '{"rules":[', ct: 'application/json' },
      { body: 'rules=all', ct: 'text/plain' },
      { payload: nested },
      { payload: { rules: nested } },
      { payload: { rules: Array.from({ length: 25 }, () => ({ content_class: 'model_transcript', sink: 'read', decision: 'allow' })) } },
      { payload: { rules: Array.from({ length: 100_000 }, () => ({ content_class: 'model_transcript', sink: 'read', decision: 'allow' })) } },
      { payload: { rules: [{ content_class: 'x'.repeat(100_000), sink: 'read', decision: 'allow' }] } },
      { payload: { rules: [], expected_version: -1 } },
      { payload: { rules: [], expected_version: 'one' } },
      { payload: { rules: [], expected_version: 1e30 } },
      { payload: [] },
      { payload: null as unknown as Obj },
    ];
    for (const c of cases) {
      const r = await t.call({
        method: 'PUT',
        url: url(projectId),
        key,
        ...(c.body !== undefined ? { body: c.body, headers: { 'content-type': c.ct! } } : { payload: c.payload as Obj }),
      });
      expect(r.statusCode, JSON.stringify(c).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(r.statusCode, r.body.slice(0, 200)).toBeLessThan(500);
      expect(Object.keys(r.json())).toEqual(expect.arrayContaining(['error', 'message']));
    }
    for (const id of ['%00', 'x'.repeat(300), '..%2F..']) expect((await get(url(id), key)).statusCode).toBeLessThan(500);
    expect((await get(url(projectId), key)).json().version).toBe(0);
  });

  it('refusal route: unknown filters, bad times, reversed window, bad cursor are 400', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    for (const q of ['content_class=videos', 'boundary=sink', 'from=yesterday', 'to=2026-13-01T00:00:00Z', 'from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'cursor=zzz', 'limit=500', 'decision=deny'])
      expect((await get(url(projectId, `/refusals?${q}`), key)).statusCode, q).toBe(400);
  });
});

describe('the refusal audit', () => {
  it('counts what the policy refused per minute, class, boundary and decider; filters and pages', async () => {
    const { projectId, key } = await projectWithKey(t, GOV);
    const svc = t.ctx.contentPolicy;
    // No policy: judge transfer is denied by "no_policy".
    expect(await svc.decide(projectId, 'model_transcript', 'judge_transfer')).toEqual({ decision: 'deny', decided_by: 'no_policy' });
    expect(await svc.decide(projectId, 'model_transcript', 'judge_transfer')).toEqual({ decision: 'deny', decided_by: 'no_policy' });
    await setContentPolicy(t, projectId, gridRules((c, b) => (b === 'export' ? 'allow_metadata' : 'allow')));
    expect(await svc.decide(projectId, 'tool_arguments', 'export')).toEqual({ decision: 'allow_metadata', decided_by: 'policy' });
    expect(await svc.decide(projectId, 'tool_arguments', 'read')).toEqual({ decision: 'allow', decided_by: 'policy' });
    const all = (await get(url(projectId, '/refusals'), key)).json();
    expect(all.refusals).toEqual(
      expect.arrayContaining([
        { minute: '2026-03-01T12:00:00.000Z', content_class: 'model_transcript', boundary: 'judge_transfer', decided_by: 'no_policy', decision: 'deny', count: 2 },
        { minute: '2026-03-01T12:00:00.000Z', content_class: 'tool_arguments', boundary: 'export', decided_by: 'policy', decision: 'allow_metadata', count: 1 },
      ]),
    );
    expect(all.refusals).toHaveLength(2);
    const onlyExport = (await get(url(projectId, '/refusals?boundary=export'), key)).json().refusals;
    expect(onlyExport.map((r: Obj) => r.content_class)).toEqual(['tool_arguments']);
    expect((await get(url(projectId, '/refusals?content_class=replay_dom'), key)).json().refusals).toEqual([]);
    expect((await get(url(projectId, '/refusals?from=2026-03-01T12:01:00Z'), key)).json().refusals).toEqual([]);
    expect((await get(url(projectId, '/refusals?to=2026-03-01T12:00:59Z'), key)).json().refusals).toHaveLength(2);
    const p1 = (await get(url(projectId, '/refusals?limit=1'), key)).json();
    expect(p1.refusals).toHaveLength(1);
    const p2 = (await get(url(projectId, `/refusals?limit=1&cursor=${p1.next_cursor}`), key)).json();
    expect(p2.refusals).toHaveLength(1);
    expect(p2.next_cursor).toBeNull();
    expect(p2.refusals[0]).not.toEqual(p1.refusals[0]);
    // A cursor of one query does not continue another.
    expect((await get(url(projectId, `/refusals?limit=1&boundary=export&cursor=${p1.next_cursor}`), key)).statusCode).toBe(400);
  });
});

describe('rule 5: "A change takes up to 30 seconds to apply everywhere"', () => {
  it('another process sees a change within the TTL; the writing process at once', async () => {
    const { projectId } = await projectWithKey(t, GOV);
    const svc = t.ctx.contentPolicy;
    // A second service over the same store stands for another node.
    const { ContentPolicyService } = await import('./service.js');
    const other = new ContentPolicyService(t.ctx.control.contentPolicies, t.ctx.projects, clock, 30);
    expect((await other.decide(projectId, 'replay_dom', 'store')).decision).toBe('deny');
    await setContentPolicy(t, projectId, gridRules('allow'));
    expect((await svc.decide(projectId, 'replay_dom', 'store')).decision).toBe('allow');
    expect((await other.decide(projectId, 'replay_dom', 'store')).decision).toBe('deny');
    clock.advance(29_000);
    expect((await other.decide(projectId, 'replay_dom', 'store')).decision).toBe('deny');
    clock.advance(1_000);
    expect((await other.decide(projectId, 'replay_dom', 'store')).decision).toBe('allow');
  });

  it('SVC_CONTENT_POLICY_TTL_SECONDS accepts 0 to 30 only', async () => {
    const { loadConfig } = await import('../../config.js');
    expect(loadConfig({ SVC_CONTENT_POLICY_TTL_SECONDS: '5' }).contentPolicyTtlSeconds).toBe(5);
    expect(loadConfig({}).contentPolicyTtlSeconds).toBe(30);
    expect(() => loadConfig({ SVC_CONTENT_POLICY_TTL_SECONDS: '31' })).toThrow(/SVC_CONTENT_POLICY_TTL_SECONDS/);
  });
});

describe('export and judge_transfer: the decision function over all 24 cells', () => {
  it.each(BOUNDARIES.flatMap((b) => CONTENT_CLASSES.map((c) => [c, b] as const)))('%s at %s: each decision of the cell is returned as the policy\'s', async (c, b) => {
    const { projectId } = await projectWithKey(t, GOV);
    for (const d of ['allow', 'allow_metadata', 'deny'] as const) {
      await setContentPolicy(t, projectId, gridRules((cc, bb) => (cc === c && bb === b ? d : cc === c ? 'deny' : 'allow')));
      expect(await t.ctx.contentPolicy.decide(projectId, c, b)).toEqual({ decision: d, decided_by: 'policy' });
    }
  });

  it('"policy unreadable": a failing store read denies, never allows, and says so', async () => {
    const { projectId } = await projectWithKey(t, GOV);
    await setContentPolicy(t, projectId, gridRules('allow'));
    const { ContentPolicyService } = await import('./service.js');
    const broken = { ...t.ctx.control.contentPolicies, find: async () => Promise.reject(new Error('disk on fire')) };
    const svc = new ContentPolicyService(broken as never, t.ctx.projects, clock, 30);
    for (const b of BOUNDARIES) expect(await svc.decide(projectId, 'model_transcript', b)).toEqual({ decision: 'deny', decided_by: 'policy_unreadable' });
    const access = await svc.storeAccess(projectId);
    expect(access.of('model_transcript')).toBe('deny');
    expect(access.decidedBy).toBe('policy_unreadable');
  });
});
