/** API keys and credentials over HTTP (spec 1, "Authentication" 1, 3, 6, 13; "Account and audit"), on both control stores. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, secondOrganization } from '../../testing/people.js';
import { ALL_SCOPES } from './scopes.js';

const UNAUTHORIZED = { error: 'unauthorized', message: 'authentication required' };

describe.each(['sqlite', 'postgres'] as const)('API keys over HTTP (%s)', (dialect) => {
  let t: TestApp;
  const clock = fixedClock('2026-06-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
  });
  afterAll(async () => t.close());

  const create = (body: object, key?: string) => t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: body, key });

  it('the secret is shown once at creation and stored only as a hash', async () => {
    const res = await create({ name: 'k', scopes: ['metrics:read'], org_wide: true });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.key).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    const listed = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys' })).json().api_keys.find((k: { id: string }) => k.id === body.id);
    expect(listed).toBeDefined();
    expect(listed.key).toBeUndefined();
    const stored = await t.ctx.control.apiKeys.findById(t.orgId, body.id);
    expect(stored!.keyHash).not.toContain(body.key);
    expect(JSON.stringify(stored)).not.toContain(body.key.slice(12));
  });

  it('the answer has the listing fields plus key', async () => {
    const body = (await create({ name: 'fields', scopes: ['metrics:read'], org_wide: true })).json();
    expect(Object.keys(body).sort()).toEqual(
      [
        'id', 'name', 'status', 'project_id', 'org_wide', 'key_prefix', 'scopes', 'expires_at', 'last_used_at',
        'created_at', 'revoked_at', 'user_id', 'created_by_api_key_id', 'created_by_state', 'key',
      ].sort(),
    );
    expect(body).toMatchObject({ status: 'active', project_id: null, org_wide: true, last_used_at: null, created_by_state: 'api_key', user_id: null });
  });

  it('expiry defaults to 30 days', async () => {
    const body = (await create({ name: 'exp', scopes: ['metrics:read'], org_wide: true })).json();
    expect(body.expires_at).toBe('2026-07-01T00:00:00.000Z');
  });

  it('expiry is at most 365 days (rule 13)', async () => {
    expect((await create({ name: 'e', scopes: ['metrics:read'], org_wide: true, expires_in_days: 365 })).statusCode).toBe(201);
    for (const d of [0, 366, 1.5]) {
      const res = await create({ name: 'e', scopes: ['metrics:read'], org_wide: true, expires_in_days: d });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('exactly one of project_id and org_wide: true', async () => {
    expect((await create({ name: 'x', scopes: ['metrics:read'] })).statusCode).toBe(400);
    expect((await create({ name: 'x', scopes: ['metrics:read'], org_wide: true, project_id: t.projectId })).statusCode).toBe(400);
    expect((await create({ name: 'x', scopes: ['metrics:read'], org_wide: false })).statusCode).toBe(400);
    expect((await create({ name: 'x', scopes: ['metrics:read'], project_id: t.projectId })).statusCode).toBe(201);
  });

  it('unknown scopes and unknown body fields are refused', async () => {
    expect((await create({ name: 'x', scopes: ['metrics:raed'], org_wide: true })).json()).toMatchObject({ error: 'invalid_request' });
    expect((await create({ name: 'x', scopes: [], org_wide: true })).statusCode).toBe(400);
    expect((await create({ name: 'x', scopes: ['metrics:read'], org_wide: true, owner: 'me' })).statusCode).toBe(400);
  });

  it('who acts comes from the credential: a body naming the creator is refused and nothing is created', async () => {
    const before = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=200' })).json().api_keys.length;
    const res = await create({ name: 'x', scopes: ['metrics:read'], org_wide: true, user_id: 'someone', created_by_api_key_id: 'k' });
    expect(res.statusCode).toBe(400);
    const after = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=200' })).json().api_keys.length;
    expect(after).toBe(before);
  });

  it('minting needs api_key:write', async () => {
    const { key } = await projectWithKey(t, ['metrics:read']);
    const res = await create({ name: 'x', scopes: ['metrics:read'], org_wide: true }, key);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('permission_denied');
  });

  it('a key can never grant a scope its creator lacks', async () => {
    const { key, projectId } = await projectWithKey(t, ['api_key:write', 'metrics:read']);
    const res = await create({ name: 'x', scopes: ['metrics:read', 'metrics:delete'], project_id: projectId }, key);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toContain('metrics:delete');
    expect((await create({ name: 'ok', scopes: ['metrics:read'], project_id: projectId }, key)).statusCode).toBe(201);
  });

  it("a key can never escape its creator's project", async () => {
    const a = await projectWithKey(t, ['api_key:write', 'metrics:read']);
    const b = await projectWithKey(t, ['metrics:read']);
    expect((await create({ name: 'x', scopes: ['metrics:read'], org_wide: true }, a.key)).statusCode).toBe(403);
    expect((await create({ name: 'x', scopes: ['metrics:read'], project_id: b.projectId }, a.key)).statusCode).toBe(403);
  });

  it('a key minted by a key records its creator', async () => {
    const a = await projectWithKey(t, ['api_key:write', 'metrics:read']);
    const child = (await create({ name: 'child', scopes: ['metrics:read'], project_id: a.projectId }, a.key)).json();
    expect(child).toMatchObject({ created_by_api_key_id: a.keyId, created_by_state: 'api_key' });
  });

  it('the initial owner key holds every scope and was created by the system', async () => {
    const keys = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=200' })).json().api_keys;
    const owner = keys.find((k: { created_by_state: string }) => k.created_by_state === 'system');
    expect(owner.scopes.sort()).toEqual([...ALL_SCOPES].sort());
    expect(owner.org_wide).toBe(true);
  });

  it('rule 1: the three API-key headers all authenticate', async () => {
    const { key } = await projectWithKey(t, ['projects:read']);
    for (const headers of [{ 'x-svc-api-key': key }, { 'x-api-key': key }, { authorization: `ApiKey ${key}` }, { authorization: `Bearer ${key}` }]) {
      const res = await t.call({ method: 'GET', url: '/api/v1/projects', key: null, headers });
      expect(res.statusCode).toBe(200);
    }
  });

  it('two credentials on one request are refused, identical or not ("400 for two credentials on one request")', async () => {
    const a = await projectWithKey(t, ['projects:read']);
    const b = await projectWithKey(t, ['projects:read']);
    const res = await t.call({ method: 'GET', url: '/api/v1/projects', key: a.key, headers: { 'x-api-key': b.key } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('one per request');
    const same = await t.call({ method: 'GET', url: '/api/v1/projects', key: a.key, headers: { 'x-api-key': a.key } });
    expect(same.statusCode).toBe(400);
  });

  it('rule 6: revoked, unknown, malformed and expired keys all get the identical 401', async () => {
    const { key, keyId } = await projectWithKey(t, ['projects:read']);
    const expiring = (await create({ name: 'short', scopes: ['projects:read'], org_wide: true, expires_in_days: 1 })).json();
    expect((await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` })).statusCode).toBe(200);
    clock.advance(2 * 86_400_000);
    try {
      const answers = await Promise.all(
        [key, 'svc_unknownunknownunknownunknownunknownunknownun', 'short', 'x'.repeat(300), expiring.key, ''].map((k) =>
          t.call({ method: 'GET', url: '/api/v1/projects', key: k === '' ? null : k }),
        ),
      );
      for (const a of answers) {
        expect(a.statusCode).toBe(401);
        expect(a.json()).toEqual(UNAUTHORIZED);
      }
      const malformedHeader = await t.call({ method: 'GET', url: '/api/v1/projects', key: null, headers: { authorization: 'Basic Zm9vOmJhcg==' } });
      expect(malformedHeader.statusCode).toBe(401);
      expect(malformedHeader.json()).toEqual(UNAUTHORIZED);
    } finally {
      clock.advance(-2 * 86_400_000);
    }
  });

  it('every request re-checks the key: revocation takes effect on the next request', async () => {
    const { key, keyId } = await projectWithKey(t, ['projects:read']);
    expect((await t.call({ method: 'GET', url: '/api/v1/projects', key })).statusCode).toBe(200);
    await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    expect((await t.call({ method: 'GET', url: '/api/v1/projects', key })).statusCode).toBe(401);
  });

  it('revocation is permanent and shows in the listing', async () => {
    const { keyId } = await projectWithKey(t, ['projects:read']);
    const r1 = await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    expect(r1.json()).toMatchObject({ status: 'revoked', revoked_at: '2026-06-01T00:00:00.000Z' });
    const r2 = await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    expect(r2.json().status).toBe('revoked');
    const patch = await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload: { name: 'back' } });
    expect(patch.statusCode).toBe(409);
  });

  it('the last key that can mint keys is not revoked while no owner or admin can sign in (409, it keeps working); after its replacement is minted it is', async () => {
    const org = await secondOrganization(t);
    const ownerId = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys', key: org.ownerKey })).json().api_keys.at(-1).id;
    // A project key or an org-wide key without api_key:write is no way in.
    await create({ name: 'reader', scopes: ['metrics:read'], org_wide: true }, org.ownerKey);
    const refused = await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${ownerId}/revoke`, key: org.ownerKey });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'conflict' });
    expect(refused.json().message).toContain('lock everyone out');
    expect((await t.call({ method: 'GET', url: '/api/v1/account/api-keys', key: org.ownerKey })).statusCode).toBe(200);
    // Rotation as docs/reference.md says: mint the replacement, then revoke the old key.
    const next = await create({ name: 'owner 2', scopes: ['api_key:write', 'projects:read'], org_wide: true }, org.ownerKey);
    expect((await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${ownerId}/revoke`, key: next.json().key })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/api/v1/account/api-keys', key: org.ownerKey })).statusCode).toBe(401);
  });

  it('an owner who can sign in is a way in: then the last minting key may go', async () => {
    const org = await secondOrganization(t);
    await addPerson(t, 'owner', { key: org.ownerKey });
    const ownerId = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys', key: org.ownerKey })).json().api_keys.at(-1).id;
    expect((await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${ownerId}/revoke`, key: org.ownerKey })).statusCode).toBe(200);
  });

  it('revocation needs api_key:write', async () => {
    const { key, keyId } = await projectWithKey(t, ['projects:read']);
    const res = await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke`, key });
    expect(res.statusCode).toBe(403);
    expect((await t.ctx.control.apiKeys.findById(t.orgId, keyId))!.status).toBe('active');
  });

  it('last used moves on use', async () => {
    const { key, keyId } = await projectWithKey(t, ['projects:read']);
    expect((await t.ctx.control.apiKeys.findById(t.orgId, keyId))!.lastUsedAt).toBeNull();
    await t.call({ method: 'GET', url: '/api/v1/projects', key });
    expect((await t.ctx.control.apiKeys.findById(t.orgId, keyId))!.lastUsedAt).toBe('2026-06-01T00:00:00.000Z');
  });

  it('PATCH renames or narrows scopes and never widens them', async () => {
    const { keyId } = await projectWithKey(t, ['projects:read', 'metrics:read']);
    const narrowed = await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload: { scopes: ['metrics:read'] } });
    expect(narrowed.json()).toMatchObject({ scopes: ['metrics:read'] });
    const widened = await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload: { scopes: ['metrics:read', 'audit:read'] } });
    expect(widened.statusCode).toBe(400);
    const renamed = await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload: { name: 'renamed' } });
    expect(renamed.json()).toMatchObject({ name: 'renamed', scopes: ['metrics:read'] });
  });

  it('general rule 2: a PATCH that changes nothing is refused (empty, same values, unknown fields)', async () => {
    const { keyId } = await projectWithKey(t, ['projects:read'], 'same');
    for (const payload of [{}, { name: 'same-key' }, { scopes: ['projects:read'] }, { colour: 'red' }]) {
      const res = await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('a key of another project is 404, the same answer as a missing one', async () => {
    const a = await projectWithKey(t, ['api_key:write', 'projects:read']);
    const b = await projectWithKey(t, ['projects:read']);
    const foreign = await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${b.keyId}/revoke`, key: a.key });
    const missing = await t.call({ method: 'POST', url: '/api/v1/account/api-keys/nope/revoke', key: a.key });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    const list = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys', key: a.key })).json();
    expect(list.api_keys.every((k: { project_id: string }) => k.project_id === a.projectId)).toBe(true);
  });

  it('the list pages with the shared cursor rules (rule 6 of Pagination)', async () => {
    const dup = await t.call({ method: 'GET', url: '/api/v1/account/api-keys?cursor=&cursor=' });
    expect(dup.json()).toEqual({ error: 'invalid_request', message: 'cursor must be provided at most once' });
    const malformed = await t.call({ method: 'GET', url: '/api/v1/account/api-keys?cursor=a%zz' });
    expect(malformed.statusCode).toBe(400);
    const seen = new Set<string>();
    let cursor = '';
    for (let i = 0; i < 100; i++) {
      const res = (await t.call({ method: 'GET', url: `/api/v1/account/api-keys?limit=3&cursor=${encodeURIComponent(cursor)}` })).json();
      for (const k of res.api_keys) {
        expect(seen.has(k.id)).toBe(false);
        seen.add(k.id);
      }
      if (!res.next_cursor) break;
      cursor = res.next_cursor;
    }
    const all = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=200' })).json().api_keys;
    expect(seen.size).toBe(all.length);
    expect((await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=201' })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=0' })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/account/api-keys?cursor=garbage' })).statusCode).toBe(400);
  });
});
