/** Refreshing a browser session (spec 1, "Authentication" 4; issue 3: rotation inside a family, reuse), on both control stores. */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, signIn, type Browser, type Person } from '../../testing/people.js';
import { tokenHash } from '../../lib/tokens.js';
import { KyselyMembershipStore } from '../../storage/control/memberships-store.js';
import { KyselySessionStore } from '../../storage/control/sessions-store.js';

const UNAUTHORIZED = { error: 'unauthorized', message: 'authentication required' };

describe.each(['sqlite', 'postgres'] as const)('session refresh (%s)', (dialect) => {
  let t: TestApp;
  let person: Person;
  const clock = fixedClock('2026-06-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
    person = await addPerson(t, 'member');
  });
  afterAll(async () => t.close());
  afterEach(() => vi.restoreAllMocks());

  const refresh = (b: Browser) => b.call({ method: 'POST', url: '/api/v1/auth/refresh' });
  const me = (b: Browser) => b.call({ method: 'GET', url: '/api/v1/users/me' });
  const statusOf = async (secret: string) => (await t.ctx.control.sessions.findCredential(tokenHash(secret)))?.credential.status;

  it('rotates: the presented refresh credential becomes rotated and a new access and refresh pair of the same family is set', async () => {
    const b = await signIn(t, person);
    const before = { ...b.cookies };
    const res = await refresh(b);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ user: { id: person.userId, email: person.email, name: 'Test Person' }, organization: { id: t.orgId, role: 'member' } });
    expect(b.cookies.svc_session).not.toBe(before.svc_session);
    expect(b.cookies.svc_refresh).not.toBe(before.svc_refresh);
    expect(await statusOf(before.svc_refresh)).toBe('rotated');
    const [oldFamily, newFamily] = await Promise.all(
      [before.svc_refresh, b.cookies.svc_refresh].map(async (s) => (await t.ctx.control.sessions.findCredential(tokenHash(s)))!.signIn.id),
    );
    expect(newFamily).toBe(oldFamily);
    expect((await me(b)).statusCode).toBe(200);
  });

  it('the access credential a rotation replaced stops working', async () => {
    const b = await signIn(t, person);
    const old = b.clone();
    await refresh(b);
    expect((await me(old)).json()).toEqual(UNAUTHORIZED);
    expect((await me(b)).statusCode).toBe(200);
  });

  it('reuse of a rotated refresh credential revokes the whole family: 401, and the refresh from the rotation then fails too', async () => {
    const b = await signIn(t, person);
    const thief = b.clone();
    expect((await refresh(b)).statusCode).toBe(200);
    const reuse = await refresh(thief);
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json()).toEqual(UNAUTHORIZED);
    expect((await me(b)).statusCode).toBe(401);
    expect((await refresh(b)).statusCode).toBe(401);
    const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=session&action=revoke&limit=1' })).json().audit_events[0];
    expect(ev).toMatchObject({ result: 'success', actor: { kind: 'system' }, metadata: { reason: 'reused', user_id: person.userId } });
  });

  it('a refused refresh clears both cookies', async () => {
    const b = await signIn(t, person);
    const thief = b.clone();
    await refresh(b);
    const res = await refresh(thief);
    expect(res.statusCode).toBe(401);
    expect(thief.cookies).toEqual({});
  });

  it('no refresh cookie, an unknown one, or an access secret in its place is 401', async () => {
    const b = await signIn(t, person);
    for (const cookies of [{} as Record<string, string>, { svc_refresh: 'junk' }, { svc_refresh: `svr_${'A'.repeat(43)}` }, { svc_refresh: b.cookies.svc_session }]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
    }
  });

  it('a refresh credential expires after 30 days; each rotation issues a new one for 30 days', async () => {
    const b = await signIn(t, person);
    clock.advance(29 * 86_400_000);
    try {
      expect((await refresh(b)).statusCode).toBe(200);
      clock.advance(29 * 86_400_000);
      expect((await refresh(b)).statusCode).toBe(200);
      clock.advance(30 * 86_400_000);
      expect((await refresh(b)).statusCode).toBe(401);
    } finally {
      clock.set('2026-06-01T00:00:00.000Z');
    }
  });

  it('an expired session cookie is renewed by a refresh', async () => {
    const b = await signIn(t, person);
    clock.advance(16 * 60_000);
    try {
      expect((await me(b)).statusCode).toBe(401);
      expect((await refresh(b)).statusCode).toBe(200);
      expect((await me(b)).statusCode).toBe(200);
    } finally {
      clock.set('2026-06-01T00:00:00.000Z');
    }
  });

  it('"If membership ... validation is temporarily unavailable during refresh, retrying does not consume the presented credential"', async () => {
    const b = await signIn(t, person);
    const presented = b.cookies.svc_refresh;
    vi.spyOn(KyselyMembershipStore.prototype, 'find').mockRejectedValue(new Error('connection reset'));
    const res = await refresh(b);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json().error).toBe('unavailable');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(b.cookies.svc_refresh).toBe(presented);
    expect(await statusOf(presented)).toBe('active');
    // A second failure changes nothing either.
    expect((await refresh(b)).statusCode).toBe(503);
    vi.restoreAllMocks();
    const retry = await refresh(b);
    expect(retry.statusCode).toBe(200);
    expect(await statusOf(presented)).toBe('rotated');
  });

  it('a store failure while reading the credential is 503 too, and consumes nothing', async () => {
    const b = await signIn(t, person);
    vi.spyOn(KyselySessionStore.prototype, 'findCredential').mockRejectedValueOnce(new Error('timeout'));
    const res = await refresh(b);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect((await refresh(b)).statusCode).toBe(200);
  });

  it('a membership that has ended: refresh is 401 and the family is revoked (a later membership does not revive it)', async () => {
    const p = await addPerson(t, 'member');
    const b = await signIn(t, p);
    // Remove the membership behind the sessions domain's back, so only the refresh check can notice.
    await t.ctx.control.memberships.delete(t.orgId, p.userId);
    const presented = b.cookies.svc_refresh;
    const res = await refresh(b);
    expect(res.statusCode).toBe(401);
    expect(await statusOf(presented)).toBe('revoked');
    await t.ctx.control.memberships.insert({ orgId: t.orgId, userId: p.userId, role: 'member', createdAt: clock.now().toISOString() });
    const again = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { svc_refresh: presented } });
    expect(again.statusCode).toBe(401);
  });

  it('refresh never changes the organization: one named in the request is ignored', async () => {
    const b = await signIn(t, person);
    const res = await b.call({ method: 'POST', url: '/api/v1/auth/refresh', payload: { org_id: 'another' } });
    expect(res.json().organization.id).toBe(t.orgId);
    expect((await me(b)).json().organization.id).toBe(t.orgId);
  });
});
