/** The agent inventory through HTTP (spec 2 "Asset", endpoint table "Assets and review signals", Authentication, Errors, Limits). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSightings, us } from '../../testing/agent-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { secondOrganization } from '../../testing/people.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

async function project(scopes = ['agents:read', 'agents:write']) {
  const p = await projectWithKey(t, scopes);
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, key = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload === undefined ? {} : { payload: payload as object }) });
  const declare = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/assets', body);
    if (res.statusCode !== 201) throw new Error(res.body);
    return res.json();
  };
  return { ...p, call, declare };
}

const REVIEW = { approval_state: 'APPROVAL_STATE_APPROVED', risk_tier: 'RISK_TIER_LOW', reason: 'looked at it' };

describe('assets: declare, get, list', () => {
  it('POST /assets declares an asset: UNREVIEWED, RISK_TIER_UNASSESSED ("value until first review"), DATA_CLASSIFICATION_UNCLASSIFIED (default), unowned, version 1', async () => {
    const p = await project();
    const res = await p.call('POST', '/assets', { name: 'Support bot', description: 'answers tickets', observation_keys: ['svc/support', 'svc/a'] });
    expect(res.statusCode).toBe(201);
    const a = res.json();
    expect(a).toMatchObject({
      project_id: p.projectId,
      name: 'Support bot',
      description: 'answers tickets',
      origin: 'declared',
      shadow: false,
      observation_keys: ['svc/a', 'svc/support'],
      approval_state: 'APPROVAL_STATE_UNREVIEWED',
      approver_principal: null,
      risk_tier: 'RISK_TIER_UNASSESSED',
      data_classification: 'DATA_CLASSIFICATION_UNCLASSIFIED',
      classified_by: null,
      owner_team: null,
      owner_principal: null,
      quarantined: false,
      version: 1,
      created_by: `api_key:${p.keyId}`,
    });
    expect((await p.call('GET', `/assets/${a.id}`)).json()).toEqual(a);
  });

  it('"an observation key maps to at most one current asset per project": a second declaration of a mapped key is 409 and creates nothing', async () => {
    const p = await project();
    await p.declare({ name: 'one', observation_keys: ['k1'] });
    const res = await p.call('POST', '/assets', { name: 'two', observation_keys: ['k2', 'k1'] });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('conflict');
    const list = (await p.call('GET', '/assets')).json();
    expect(list.assets.map((x: { name: string }) => x.name)).toEqual(['one']);
    // k2 was not mapped by the refused declaration.
    expect((await p.call('POST', '/assets', { name: 'three', observation_keys: ['k2'] })).statusCode).toBe(201);
    // Another project may map the same key.
    const q = await project();
    expect((await q.call('POST', '/assets', { name: 'one', observation_keys: ['k1'] })).statusCode).toBe(201);
  });

  it('a key repeated in one declaration is 400', async () => {
    const p = await project();
    expect((await p.call('POST', '/assets', { name: 'x', observation_keys: ['a', 'a'] })).statusCode).toBe(400);
  });

  it('the project may be named in the body as scope.project_id or project_id; a disagreement is 400', async () => {
    const p = await project();
    expect((await t.call({ method: 'POST', url: '/api/v1/assets', payload: { scope: { project_id: p.projectId }, name: 'a' } })).statusCode).toBe(201);
    expect((await t.call({ method: 'POST', url: '/api/v1/assets', payload: { project_id: p.projectId, name: 'b' } })).statusCode).toBe(201);
    expect((await t.call({ method: 'POST', url: '/api/v1/assets', payload: { name: 'c' } })).statusCode).toBe(400);
    const other = await project();
    const res = await t.call({ method: 'POST', url: '/api/v1/assets', payload: { project_id: p.projectId, scope: { project_id: other.projectId }, name: 'd' } });
    expect(res.statusCode).toBe(400);
  });

  it("another project's or organization's asset answers exactly like a missing one (404)", async () => {
    const p = await project();
    const q = await project();
    const a = await p.declare({ name: 'mine' });
    const missing = await q.call('GET', '/assets/00000000-0000-0000-0000-000000000000');
    const foreign = await q.call('GET', `/assets/${a.id}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    expect((await q.call('POST', `/assets/${a.id}/reviews`, REVIEW)).statusCode).toBe(404);
    const org2 = await secondOrganization(t);
    expect((await t.call({ method: 'GET', url: `/api/v1/assets/${a.id}`, key: org2.ownerKey })).statusCode).toBe(404);
    // An org-wide credential naming another project than the asset's: 404 too.
    expect((await t.call({ method: 'GET', url: `/api/v1/assets/${a.id}?project_id=${q.projectId}` })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `/api/v1/assets/${a.id}` })).statusCode).toBe(200);
  });

  it('GET /assets: "filters include shadow=true, risk_tier"; OR within (repeated or comma), AND across; an unknown value is 400', async () => {
    const p = await project();
    const low = await p.declare({ name: 'low' });
    const high = await p.declare({ name: 'high' });
    await p.declare({ name: 'unassessed' });
    await p.call('POST', `/assets/${low.id}/reviews`, REVIEW);
    await p.call('POST', `/assets/${high.id}/reviews`, { ...REVIEW, risk_tier: 'RISK_TIER_HIGH' });
    await insertSightings(t, p.projectId, [{ observationKey: 'ghost', source: 'bearer_token', firstSeenUs: us('2026-03-01T00:00:00Z'), lastSeenUs: us('2026-03-01T00:00:00Z'), sightingCount: 1 }]);
    await t.ctx.assets.discoverAssets(p.projectId);
    const names = async (q: string) => (await p.call('GET', `/assets?${q}`)).json().assets.map((a: { name: string }) => a.name);
    expect(await names('shadow=true')).toEqual(['ghost']);
    expect(await names('shadow=false')).toEqual(['unassessed', 'high', 'low']);
    expect(await names('risk_tier=RISK_TIER_LOW')).toEqual(['low']);
    expect(await names('risk_tier=RISK_TIER_LOW,RISK_TIER_HIGH')).toEqual(['high', 'low']);
    expect(await names('risk_tier=RISK_TIER_LOW&risk_tier=RISK_TIER_HIGH')).toEqual(['high', 'low']);
    expect(await names('risk_tier=RISK_TIER_UNASSESSED&shadow=true')).toEqual(['ghost']);
    expect(await names('approval_state=APPROVAL_STATE_UNREVIEWED&shadow=false')).toEqual(['unassessed']);
    for (const bad of ['risk_tier=RISK_TIER_BOGUS', 'risk_tier=', 'approval_state=nope', 'shadow=maybe', 'data_classification=X']) {
      const res = await p.call('GET', `/assets?${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('"Asset pages: default 100, max 200"; the cursor walks every asset once, newest first', async () => {
    const p = await project();
    for (let i = 0; i < 5; i++) await p.declare({ name: `a${i}` });
    expect((await p.call('GET', '/assets?limit=201')).statusCode).toBe(400);
    expect((await p.call('GET', '/assets?limit=0')).statusCode).toBe(400);
    expect((await p.call('GET', '/assets?limit=200')).statusCode).toBe(200);
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const res = (await p.call('GET', `/assets?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json();
      seen.push(...res.assets.map((a: { name: string }) => a.name));
      if (!res.next_cursor) break;
      cursor = res.next_cursor;
    }
    // Every asset once, in the order of one whole page: newest first by created_at, then id (assets created
    // in the same millisecond are ordered by their random ids, not by creation).
    const whole = (await p.call('GET', '/assets?limit=200')).json().assets as { name: string; created_at: string }[];
    expect(seen).toEqual(whole.map((a) => a.name));
    expect([...seen].sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(whole.every((a, i) => i === 0 || whole[i - 1]!.created_at >= a.created_at)).toBe(true);
    // A cursor continues only the query it came from.
    const first = (await p.call('GET', '/assets?limit=2')).json();
    expect((await p.call('GET', `/assets?limit=2&shadow=true&cursor=${first.next_cursor}`)).statusCode).toBe(400);
  });
});

describe('assets: reviews', () => {
  it('POST /assets/{assetId}/reviews: response is the updated asset; the approver comes from the credential', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    const res = await p.call('POST', `/assets/${a.id}/reviews`, { scope: { project_id: p.projectId }, ...REVIEW });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      approval_state: 'APPROVAL_STATE_APPROVED',
      risk_tier: 'RISK_TIER_LOW',
      approval_reason: 'looked at it',
      approver_principal: `api_key:${p.keyId}`,
      version: 2,
    });
    expect(res.json().reviewed_at).toMatch(/^\d{4}-/);
  });

  it('"Approver cannot be supplied": a body naming the approver is 400 and changes nothing', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    for (const field of ['approver_principal', 'approver', 'reviewed_by', 'reviewed_at']) {
      const res = await p.call('POST', `/assets/${a.id}/reviews`, { ...REVIEW, [field]: 'someone' });
      expect(res.statusCode, field).toBe(400);
      expect(res.json().message).toContain(field);
    }
    expect((await p.call('GET', `/assets/${a.id}`)).json().version).toBe(1);
  });

  it('"missing required reason or risk_tier" is 400', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    const { reason: _r, ...noReason } = REVIEW;
    const { risk_tier: _t, ...noTier } = REVIEW;
    expect((await p.call('POST', `/assets/${a.id}/reviews`, noReason)).statusCode).toBe(400);
    expect((await p.call('POST', `/assets/${a.id}/reviews`, noTier)).statusCode).toBe(400);
    expect((await p.call('POST', `/assets/${a.id}/reviews`, { ...REVIEW, reason: '' })).statusCode).toBe(400);
    expect((await p.call('POST', `/assets/${a.id}/reviews`, { ...REVIEW, reason: 'x'.repeat(1025) })).statusCode).toBe(400);
  });

  it('"_UNSPECIFIED rejected on write" (approval_state, risk_tier), with a message naming the accepted values', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    const state = await p.call('POST', `/assets/${a.id}/reviews`, { ...REVIEW, approval_state: 'APPROVAL_STATE_UNSPECIFIED' });
    expect(state.statusCode).toBe(400);
    expect(state.json().message).toContain('APPROVAL_STATE_APPROVED');
    const tier = await p.call('POST', `/assets/${a.id}/reviews`, { ...REVIEW, risk_tier: 'RISK_TIER_UNSPECIFIED' });
    expect(tier.statusCode).toBe(400);
    expect(tier.json().message).toContain('RISK_TIER_CRITICAL');
  });

  it('an approval needs an assessed risk tier (RISK_TIER_UNASSESSED with APPROVED is 400)', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    expect((await p.call('POST', `/assets/${a.id}/reviews`, { ...REVIEW, risk_tier: 'RISK_TIER_UNASSESSED' })).statusCode).toBe(400);
  });

  it('the review is the "only writer of risk_tier": classification and ownership bodies naming it are 400', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    expect((await p.call('PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_PUBLIC', reason: 'r', risk_tier: 'RISK_TIER_LOW' })).statusCode).toBe(400);
    expect((await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: 'x', risk_tier: 'RISK_TIER_LOW' })).statusCode).toBe(400);
    expect((await p.call('POST', '/assets', { name: 'y', risk_tier: 'RISK_TIER_LOW' })).statusCode).toBe(400);
  });

  it('"Approving a quarantined asset does not un-quarantine it"', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    await t.ctx.assets.markQuarantine(a.id, 'q-1', 'user:approver');
    const res = await p.call('POST', `/assets/${a.id}/reviews`, REVIEW);
    expect(res.json()).toMatchObject({ approval_state: 'APPROVAL_STATE_APPROVED', quarantined: true, quarantine_id: 'q-1' });
  });
});

describe('assets: data classification and ownership', () => {
  it('PUT .../data-classification: the classifier comes from the credential; "independent of approval, tier, owner, lifecycle"', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    await p.call('POST', `/assets/${a.id}/reviews`, REVIEW);
    await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: 'platform' });
    const res = await p.call('PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_RESTRICTED', reason: 'customer PII' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      data_classification: 'DATA_CLASSIFICATION_RESTRICTED',
      classification_reason: 'customer PII',
      classified_by: `api_key:${p.keyId}`,
      approval_state: 'APPROVAL_STATE_APPROVED',
      risk_tier: 'RISK_TIER_LOW',
      owner_team: 'platform',
    });
    expect((await p.call('PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_PUBLIC', reason: 'r', classified_by: 'me' })).statusCode).toBe(400);
  });

  it('classification: _UNSPECIFIED refused naming the accepted values; reason required', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    const res = await p.call('PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_UNSPECIFIED', reason: 'r' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('DATA_CLASSIFICATION_RESTRICTED');
    expect((await p.call('PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_PUBLIC' })).statusCode).toBe(400);
  });

  it('PUT .../ownership "sets owner team and/or owner principal": omitted keeps, null clears, naming neither is 400', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    expect((await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: 'platform' })).json()).toMatchObject({ owner_team: 'platform', owner_principal: null });
    expect((await p.call('PUT', `/assets/${a.id}/ownership`, { owner_principal: 'user:alice' })).json()).toMatchObject({ owner_team: 'platform', owner_principal: 'user:alice' });
    const cleared = (await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: null })).json();
    expect(cleared).toMatchObject({ owner_team: null, owner_principal: 'user:alice', ownership_set_by: `api_key:${p.keyId}` });
    expect((await p.call('PUT', `/assets/${a.id}/ownership`, {})).statusCode).toBe(400);
    expect((await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: '' })).statusCode).toBe(400);
  });

  it('GET /assets/{assetId}/versions: every write appends a version with the asset as it left it', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    await p.call('POST', `/assets/${a.id}/reviews`, REVIEW);
    await p.call('PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_INTERNAL', reason: 'r' });
    await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: 't' });
    const res = (await p.call('GET', `/assets/${a.id}/versions`)).json();
    expect(res.versions.map((v: { version: number; change: string }) => `${v.version}:${v.change}`)).toEqual(['1:declared', '2:review', '3:classification', '4:ownership']);
    expect(res.versions[0].asset.approval_state).toBe('APPROVAL_STATE_UNREVIEWED');
    expect(res.versions[3].asset).toEqual((await p.call('GET', `/assets/${a.id}`)).json());
    expect(res.versions[1].actor).toBe(`api_key:${p.keyId}`);
    const first = (await p.call('GET', `/assets/${a.id}/versions?limit=3`)).json();
    expect(first.versions).toHaveLength(3);
    const rest = (await p.call('GET', `/assets/${a.id}/versions?limit=3&cursor=${first.next_cursor}`)).json();
    expect(rest).toMatchObject({ next_cursor: null, versions: [{ version: 4 }] });
  });

  it('concurrent writes to one asset all land, each as its own version', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: `team-${i}` })),
    );
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    const versions = (await p.call('GET', `/assets/${a.id}/versions`)).json().versions;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('assets: scope and refusals', () => {
  it('"Asset endpoints take scope by project, not environment; an environment parameter is rejected" on every asset route', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x', observation_keys: ['k'] });
    const routes: [string, string, unknown?][] = [
      ['GET', '/assets'],
      ['GET', `/assets/${a.id}`],
      ['GET', `/assets/${a.id}/versions`],
      ['GET', `/assets/${a.id}/attribution`],
      ['GET', '/assets/attribution?observation_key=k'],
      ['POST', '/assets', { name: 'y' }],
      ['POST', `/assets/${a.id}/reviews`, REVIEW],
      ['PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_PUBLIC', reason: 'r' }],
      ['PUT', `/assets/${a.id}/ownership`, { owner_team: 't' }],
      ['GET', '/review-signals'],
      ['GET', '/notification-outbox'],
    ];
    for (const [method, url, body] of routes) {
      const sep = url.includes('?') ? '&' : '?';
      const q = await p.call(method as 'GET', `${url}${sep}environment=prod`, body);
      expect(q.statusCode, `${method} ${url} query`).toBe(400);
      expect(q.json().message).toContain('environment');
      if (body) {
        const b = await p.call(method as 'POST', url, { ...(body as object), environment: 'prod' });
        expect(b.statusCode, `${method} ${url} body`).toBe(400);
        const s = await p.call(method as 'POST', url, { ...(body as object), scope: { project_id: p.projectId, environment: 'prod' } });
        expect(s.statusCode, `${method} ${url} scope`).toBe(400);
      }
    }
    expect((await p.call('GET', `/assets/${a.id}`)).json().version).toBe(1);
    expect((await p.call('GET', '/assets')).json().assets).toHaveLength(1);
  });

  it('"Writes need agents:write; reads and filters need agents:read"', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    const reader = await projectWithKey(t, ['agents:read']);
    const other = await projectWithKey(t, ['metrics:read']);
    const as = (key: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.call({ method, url: `/api/v1${url}`, key, ...(payload ? { payload } : {}) });
    // The reader key is bound to another project: scope is checked before the object is looked up.
    expect((await as(reader.key, 'POST', '/assets', { name: 'y' })).statusCode).toBe(403);
    expect((await as(reader.key, 'POST', `/assets/${a.id}/reviews`, REVIEW)).statusCode).toBe(403);
    expect((await as(reader.key, 'PUT', `/assets/${a.id}/ownership`, { owner_team: 't' })).statusCode).toBe(403);
    expect((await as(reader.key, 'PUT', `/assets/${a.id}/data-classification`, { data_classification: 'DATA_CLASSIFICATION_PUBLIC', reason: 'r' })).statusCode).toBe(403);
    expect((await as(reader.key, 'GET', '/assets')).statusCode).toBe(200);
    for (const url of ['/assets', `/assets/${a.id}`, `/assets/${a.id}/versions`, `/assets/${a.id}/attribution`, '/assets/attribution?observation_key=k', '/review-signals', '/notification-outbox'])
      expect((await as(other.key, 'GET', url)).statusCode, url).toBe(403);
  });

  it('bad input as an attacker writes it: always a 4xx in the error shape, never a 5xx, and nothing changes', async () => {
    const p = await project();
    const a = await p.declare({ name: 'x' });
    let deep: unknown = 'x';
    for (let i = 0; i < 500; i++) deep = { a: deep };
    const bodies: [string, string, string | object][] = [
      ['POST', '/assets', '{"name":'],
      ['POST', '/assets', '[]'],
      ['POST', '/assets', { name: 'x'.repeat(201) }],
      ['POST', '/assets', { name: 'n', observation_keys: Array.from({ length: 101 }, (_, i) => `k${i}`) }],
      ['POST', '/assets', { name: 'n', observation_keys: [''] }],
      ['POST', '/assets', { name: 'n', extra: deep }],
      ['POST', '/assets', { name: 'n', unknown_field: 1 }],
      ['POST', `/assets/${a.id}/reviews`, { ...REVIEW, risk_tier: 7 }],
      ['POST', `/assets/${a.id}/reviews`, { ...REVIEW, approval_state: 'approved' }],
      ['PUT', `/assets/${a.id}/ownership`, { owner_team: { $ne: null } }],
      ['PUT', `/assets/${a.id}/ownership`, { owner_team: 'x'.repeat(100_000) }],
      ['PUT', `/assets/${a.id}/data-classification`, 'null'],
    ];
    for (const [method, url, body] of bodies) {
      const res = await t.call({
        method: method as 'POST',
        url: `/api/v1${url}`,
        key: p.key,
        ...(typeof body === 'string' ? { payload: body, headers: { 'content-type': 'application/json' } } : { payload: body }),
      });
      expect(res.statusCode, `${method} ${url} ${JSON.stringify(body).slice(0, 60)}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expect(res.json()).toHaveProperty('error');
    }
    const queries = ['/assets?cursor=a&cursor=b', '/assets?limit=1&limit=2', '/assets?bogus=1', '/assets?cursor=%%%', '/assets?cursor=not-a-cursor', '/assets?limit=-1', '/assets?limit=abc', `/assets/${a.id}/versions?cursor=zzz`, '/assets/attribution', `/assets/${'x'.repeat(5000)}`];
    for (const q of queries) {
      const res = await p.call('GET', q);
      expect(res.statusCode, q).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, q).toBeLessThan(500);
    }
    expect((await p.call('GET', `/assets/${a.id}`)).json().version).toBe(1);
    expect((await p.call('GET', '/assets')).json().assets).toHaveLength(1);
  });

  it('concurrent identical declarations of one key: one 201, the rest 409, one asset', async () => {
    const p = await project();
    const results = await Promise.all(Array.from({ length: 5 }, () => p.call('POST', '/assets', { name: 'dup', observation_keys: ['same'] })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    expect((await p.call('GET', '/assets')).json().assets).toHaveLength(1);
  });
});
