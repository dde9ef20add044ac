/** Signing in with a browser session (spec 1, "Authentication" 2, 4, 7; issue 3), on both control stores. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, browser, PASSWORD, secondOrganization, setCookies, signIn, type Person } from '../../testing/people.js';
import { ROLE_SCOPES } from '../people/roles.js';

const UNAUTHORIZED = { error: 'unauthorized', message: 'authentication required' };
const BAD_LOGIN = { error: 'unauthorized', message: 'invalid email or password' };

describe.each(['sqlite', 'postgres'] as const)('browser sign-in (%s)', (dialect) => {
  let t: TestApp;
  let member: Person;
  const clock = fixedClock('2026-06-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
    member = await addPerson(t, 'member');
  });
  afterAll(async () => t.close());

  const login = (body: object) => browser(t).call({ method: 'POST', url: '/api/v1/auth/login', payload: body });

  it('"Signed-in people authenticate by a browser session (cookies with a refresh credential)": login sets both cookies', async () => {
    const res = await login({ email: member.email, password: PASSWORD });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ user: { id: member.userId, email: member.email, name: 'Test Person' }, organization: { id: t.orgId, role: 'member' } });
    const set = setCookies(res);
    expect(set.svc_session).toMatch(/^svc_session=svs_[A-Za-z0-9_-]{43}; Max-Age=900; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(set.svc_refresh).toMatch(/^svc_refresh=svr_[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/api\/v1\/auth; HttpOnly; SameSite=Strict$/);
  });

  it('the email is matched without regard to case', async () => {
    expect((await login({ email: member.email.toUpperCase(), password: PASSWORD })).statusCode).toBe(200);
  });

  it('a wrong password and an unknown email get the same 401', async () => {
    const wrong = await login({ email: member.email, password: 'not the password at all' });
    const unknown = await login({ email: 'nobody@example.com', password: PASSWORD });
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(BAD_LOGIN);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('the session cookie authenticates: GET /users/me names the person, role and the role\'s scopes', async () => {
    const b = await signIn(t, member);
    const me = await b.call({ method: 'GET', url: '/api/v1/users/me' });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({
      id: member.userId,
      email: member.email,
      name: 'Test Person',
      organization: { id: t.orgId, role: 'member' },
      scopes: [...ROLE_SCOPES.member].sort(),
    });
  });

  it('an invalid, unknown or expired session cookie gets the same 401 as a bad key', async () => {
    for (const value of ['junk', `svs_${'A'.repeat(43)}`]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', cookies: { svc_session: value } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
    }
    const b = await signIn(t, member);
    clock.advance(15 * 60_000);
    try {
      const res = await b.call({ method: 'GET', url: '/api/v1/users/me' });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
    } finally {
      clock.advance(-15 * 60_000);
    }
    // The refresh cookie is no access credential.
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', cookies: { svc_session: b.cookies.svc_refresh } });
    expect(res.statusCode).toBe(401);
  });

  it('a session cookie together with an API key header is two credentials: 400', async () => {
    const b = await signIn(t, member);
    const res = await b.call({ method: 'GET', url: '/api/v1/users/me', headers: { 'x-svc-api-key': t.ownerKey } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: 'more than one credential was sent; use one per request' });
  });

  it('CSRF: a cookie-authenticated POST, PUT, PATCH or DELETE without X-Svc-CSRF: 1 is 403 naming the header; GET needs none', async () => {
    const owner = await addPerson(t, 'owner');
    const b = await signIn(t, owner);
    const target = await addPerson(t, 'member');
    const tries = [
      { method: 'POST' as const, url: '/api/v1/invitations', payload: { email: 'csrf@example.com', role: 'member' } },
      { method: 'PATCH' as const, url: `/api/v1/members/${target.userId}`, payload: { role: 'admin' } },
      { method: 'DELETE' as const, url: `/api/v1/members/${target.userId}` },
      { method: 'POST' as const, url: '/api/v1/projects', payload: { name: 'csrf' } },
    ];
    for (const req of tries) {
      for (const headers of [{}, { 'x-svc-csrf': '0' }]) {
        const res = await b.call({ ...req, csrf: false, headers });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ error: 'permission_denied' });
        expect(res.json().message).toContain('X-Svc-CSRF: 1');
      }
    }
    // Nothing was changed by the refused requests.
    const members = (await t.call({ method: 'GET', url: '/api/v1/members?limit=200' })).json().members;
    expect(members.find((m: { user_id: string }) => m.user_id === target.userId).role).toBe('member');
    expect((await b.call({ method: 'GET', url: '/api/v1/members', csrf: false })).statusCode).toBe(200);
    expect((await b.call({ ...tries[0], csrf: true })).statusCode).toBe(201);
    // API keys are not cookies; they need no header.
    expect((await t.call({ ...tries[3] })).statusCode).toBe(201);
  });

  it('the sign-in routes are exempt from the CSRF header (they rely on SameSite=Strict)', async () => {
    const b = browser(t);
    expect((await b.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: member.email, password: PASSWORD }, csrf: false })).statusCode).toBe(200);
    expect((await b.call({ method: 'POST', url: '/api/v1/auth/refresh', csrf: false })).statusCode).toBe(200);
    expect((await b.call({ method: 'POST', url: '/api/v1/auth/logout', csrf: false })).statusCode).toBe(204);
  });

  it('scopes are checked for sessions too: a member lacks audit:read and members:write', async () => {
    const b = await signIn(t, member);
    expect((await b.call({ method: 'GET', url: '/api/v1/account/audit-events' })).statusCode).toBe(403);
    expect((await b.call({ method: 'GET', url: '/api/v1/invitations' })).statusCode).toBe(403);
    expect((await b.call({ method: 'GET', url: '/api/v1/projects' })).statusCode).toBe(200);
  });

  describe('rule 4: "A browser refresh credential stays bound to the organization selected at login"', () => {
    let other: { orgId: string; ownerKey: string };
    let both: Person;
    beforeAll(async () => {
      other = await secondOrganization(t);
      both = await addPerson(t, 'member');
      await addPerson(t, 'admin', { key: other.ownerKey, email: both.email });
    });

    it('a person in several organizations who names none gets 400 naming org_id, after the password was checked', async () => {
      const res = await login({ email: both.email, password: PASSWORD });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
      expect(res.json().message).toContain('org_id');
      expect(res.json().details.organization_ids.sort()).toEqual([t.orgId, other.orgId].sort());
      expect((await login({ email: both.email, password: 'wrong password here' })).json()).toEqual(BAD_LOGIN);
    });

    it('org_id selects the organization and its role; one the person is not in is 403', async () => {
      const a = await login({ email: both.email, password: PASSWORD, org_id: t.orgId });
      expect(a.json().organization).toEqual({ id: t.orgId, role: 'member' });
      const b = await login({ email: both.email, password: PASSWORD, org_id: other.orgId });
      expect(b.json().organization).toEqual({ id: other.orgId, role: 'admin' });
      const c = await login({ email: member.email, password: PASSWORD, org_id: other.orgId });
      expect(c.statusCode).toBe(403);
      expect(c.json().error).toBe('permission_denied');
    });

    it('"selecting another organization creates a new session": each login is its own family, and refresh keeps its organization', async () => {
      const inA = await signIn(t, both, t.orgId);
      const inB = await signIn(t, both, other.orgId);
      const refreshedA = await inA.call({ method: 'POST', url: '/api/v1/auth/refresh' });
      expect(refreshedA.json().organization).toEqual({ id: t.orgId, role: 'member' });
      expect((await inA.call({ method: 'GET', url: '/api/v1/users/me' })).json().organization.id).toBe(t.orgId);
      expect((await inB.call({ method: 'GET', url: '/api/v1/users/me' })).json()).toMatchObject({ organization: { id: other.orgId, role: 'admin' } });
      // Signing out of one leaves the other.
      expect((await inB.call({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode).toBe(204);
      expect((await inA.call({ method: 'GET', url: '/api/v1/users/me' })).statusCode).toBe(200);
    });

    it('organization identity comes from the session: a query or body naming another organization changes nothing', async () => {
      const inA = await signIn(t, both, t.orgId);
      const res = await inA.call({ method: 'GET', url: `/api/v1/members?org_id=${other.orgId}` });
      expect(res.statusCode).toBe(400);
    });
  });

  it('a sign-in is recorded in the audit trail with the session as actor', async () => {
    await signIn(t, member);
    const events = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=session&action=sign_in&limit=1' })).json().audit_events;
    expect(events[0]).toMatchObject({ result: 'success', event_type: null, actor: { kind: 'session', user_id: member.userId } });
    expect(events[0].actor.id).toBe(events[0].affected_object);
    expect(events[0].actor.sign_in_id).toBe(events[0].affected_object);
  });
});

describe('SVC_COOKIE_SECURE', () => {
  it('true marks both cookies Secure; the default (false) does not', async () => {
    for (const [env, secure] of [[{ SVC_COOKIE_SECURE: 'true' }, true], [{}, false]] as const) {
      const t = await testApp({ env });
      try {
        const p = await addPerson(t, 'member');
        const res = await browser(t).call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: p.email, password: PASSWORD } });
        const set = setCookies(res);
        expect(set.svc_session.includes('; Secure')).toBe(secure);
        expect(set.svc_refresh.includes('; Secure')).toBe(secure);
      } finally {
        await t.close();
      }
    }
  });
});
