/** Agent budgets (spec 1, "Connected-agent approvals and budgets"): read and set rules, 429 with Retry-After. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { connectAgent, withToken } from '../../testing/oauth.js';
import { addPerson, signIn, type Browser } from '../../testing/people.js';
import { secondsToNextUtcDay } from './budgets-service.js';

describe('agent budgets', () => {
  const clock = fixedClock('2026-05-04T23:59:00.000Z');
  let t: TestApp;
  let member: Browser;
  let other: Browser;
  let admin: Browser;

  beforeAll(async () => {
    t = await testApp({ clock });
    member = await signIn(t, await addPerson(t, 'member'));
    other = await signIn(t, await addPerson(t, 'member'));
    admin = await signIn(t, await addPerson(t, 'admin'));
  });
  afterAll(async () => t.close());

  const q = (id: string) => `/api/v1/agent-budgets?credential_kind=oauth_connection&credential_id=${id}`;
  const put = (b: Browser, id: string, body: Record<string, unknown>) =>
    b.call({ method: 'PUT', url: '/api/v1/agent-budgets', payload: { credential_kind: 'oauth_connection', credential_id: id, ...body } });

  it('seconds to the next UTC day', () => {
    expect(secondsToNextUtcDay(new Date('2026-05-04T23:59:00.000Z'))).toBe(60);
    expect(secondsToNextUtcDay(new Date('2026-05-04T00:00:00.000Z'))).toBe(86_400);
    expect(secondsToNextUtcDay(new Date('2026-05-04T23:59:59.500Z'))).toBe(1);
  });

  it('GET: a credential holding neither activity:read nor audit:read gets 403 before any lookup, for a missing id too', async () => {
    // Rule: "own reads need `activity:read`, other connections need `audit:read`"; without either the answer is 403, never 404.
    const k = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'no-read', scopes: ['metrics:read'], org_wide: true } });
    const key = k.json().key as string;
    for (const id of ['missing', '00000000-0000-4000-8000-000000000000']) {
      const res = await t.call({ method: 'GET', url: q(id), key });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error).toBe('permission_denied');
    }
  });

  it('GET: own connection with activity:read; another person\'s needs audit:read', async () => {
    const { connectionId } = await connectAgent(t, member, { scope: 'metrics:read' });
    const own = await member.call({ method: 'GET', url: q(connectionId) });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json()).toEqual({
      credential_kind: 'oauth_connection',
      credential_id: connectionId,
      requests_per_day: null,
      write_actions_per_day: null,
      updated_at: null,
      usage: { day: '2026-05-04', requests: 0, write_actions: 0 },
    });
    expect((await other.call({ method: 'GET', url: q(connectionId) })).statusCode).toBe(403);
    expect((await admin.call({ method: 'GET', url: q(connectionId) })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: q(connectionId) })).statusCode).toBe(200); // owner key: audit:read
    expect((await member.call({ method: 'GET', url: q('missing') })).statusCode).toBe(404);
    expect((await member.call({ method: 'GET', url: `/api/v1/agent-budgets?credential_kind=api_key&credential_id=${connectionId}` })).statusCode).toBe(400);
    expect((await member.call({ method: 'GET', url: '/api/v1/agent-budgets?credential_kind=oauth_connection' })).statusCode).toBe(400);
  });

  it('GET: an agent reads its own budget with activity:read in its token', async () => {
    const withActivity = await connectAgent(t, member, { scope: 'metrics:read activity:read' });
    const res = await withToken(t, withActivity.tokens.access_token, { url: q(withActivity.connectionId) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().usage.requests).toBe(1); // this very request counts
    const without = await connectAgent(t, member, { scope: 'metrics:read' });
    expect((await withToken(t, without.tokens.access_token, { url: q(without.connectionId) })).statusCode).toBe(403);
  });

  it('PUT: owner or admin role with api_key:write and members:write; a member is refused', async () => {
    const { connectionId } = await connectAgent(t, member, { scope: 'metrics:read' });
    expect((await put(member, connectionId, { requests_per_day: 5, write_actions_per_day: null })).statusCode).toBe(403);
    const res = await put(admin, connectionId, { requests_per_day: 5, write_actions_per_day: 1 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ requests_per_day: 5, write_actions_per_day: 1, updated_at: '2026-05-04T23:59:00.000Z' });
    // The owner credential made at first start acts as an owner.
    expect((await t.call({ method: 'PUT', url: '/api/v1/agent-budgets', payload: { credential_kind: 'oauth_connection', credential_id: connectionId, requests_per_day: null, write_actions_per_day: null } })).statusCode).toBe(200);
    const narrow = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'n', scopes: ['api_key:write'], org_wide: true } });
    const body = { credential_kind: 'oauth_connection', credential_id: connectionId, requests_per_day: 1, write_actions_per_day: 1 };
    expect((await t.call({ method: 'PUT', url: '/api/v1/agent-budgets', payload: body, key: narrow.json().key })).statusCode).toBe(403);
    expect((await put(admin, connectionId, { requests_per_day: -1, write_actions_per_day: null })).statusCode).toBe(400);
    expect((await put(admin, connectionId, { requests_per_day: 1 })).statusCode).toBe(400); // both fields are required (null: unlimited)
    expect((await put(admin, connectionId, { requests_per_day: 1, write_actions_per_day: 1, extra: 1 })).statusCode).toBe(400);
    expect((await put(admin, 'missing', { requests_per_day: 1, write_actions_per_day: 1 })).statusCode).toBe(404);
    expect((await admin.call({ method: 'PUT', url: '/api/v1/agent-budgets', payload: body, csrf: false })).statusCode).toBe(403);
    const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=agent_budget&limit=1' })).json().audit_events[0];
    expect(ev).toMatchObject({ action: 'update', affected_object: connectionId, metadata: { requests_per_day: null, previous: { requests_per_day: 5 } } });
  });

  it('over the daily request budget: 429 with Retry-After to the next UTC day and a throttled audit record', async () => {
    const { tokens, connectionId } = await connectAgent(t, member, { scope: 'metrics:read projects:read' });
    await put(admin, connectionId, { requests_per_day: 2, write_actions_per_day: null });
    for (let i = 0; i < 2; i++) expect((await withToken(t, tokens.access_token, { url: '/api/v1/projects' })).statusCode).toBe(200);
    const res = await withToken(t, tokens.access_token, { url: '/api/v1/projects' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json()).toMatchObject({ error: 'budget_exceeded', details: { limit: 'requests_per_day', retry_after_seconds: 60 } });
    const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?result=throttled&limit=1' })).json().audit_events[0];
    expect(ev).toMatchObject({ result: 'throttled', resource: 'projects', action: 'read', actor: { kind: 'oauth', connection_id: connectionId }, metadata: { status: 429 } });
    expect((await admin.call({ method: 'GET', url: q(connectionId) })).json().usage).toEqual({ day: '2026-05-04', requests: 2, write_actions: 0 });
    // A new UTC day starts a new count.
    clock.set('2026-05-05T00:00:01.000Z');
    expect((await withToken(t, tokens.access_token, { url: '/api/v1/projects' })).statusCode).toBe(200);
    clock.set('2026-05-04T23:59:00.000Z');
  });

  it('over the daily write budget: writes get 429, reads go on', async () => {
    const { tokens, connectionId } = await connectAgent(t, admin, { scope: 'projects:read projects:write' });
    await put(admin, connectionId, { requests_per_day: null, write_actions_per_day: 1 });
    const created = await withToken(t, tokens.access_token, { method: 'POST', url: '/api/v1/projects', payload: { name: 'by-agent' } });
    expect(created.statusCode, created.body).toBe(201);
    const refused = await withToken(t, tokens.access_token, { method: 'POST', url: '/api/v1/projects', payload: { name: 'by-agent-2' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().details.limit).toBe('write_actions_per_day');
    expect(refused.headers['retry-after']).toBe('60');
    expect((await withToken(t, tokens.access_token, { url: '/api/v1/projects' })).statusCode).toBe(200);
  });

  it('budgets bound agents only: the person\'s own session is not counted', async () => {
    const { connectionId } = await connectAgent(t, member, { scope: 'metrics:read' });
    await put(admin, connectionId, { requests_per_day: 0, write_actions_per_day: 0 });
    for (let i = 0; i < 3; i++) expect((await member.call({ method: 'GET', url: '/api/v1/users/me' })).statusCode).toBe(200);
  });
});
