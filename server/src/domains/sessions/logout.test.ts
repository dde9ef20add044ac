/** Signing out (spec 1, "Authentication" 5 and 7), on both control stores. */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, browser, setCookies, signIn, type Browser, type Person } from '../../testing/people.js';
import { tokenHash } from '../../lib/tokens.js';
import { KyselySessionStore } from '../../storage/control/sessions-store.js';

describe.each(['sqlite', 'postgres'] as const)('POST /auth/logout (%s)', (dialect) => {
  let t: TestApp;
  let person: Person;
  const clock = fixedClock('2026-06-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
    person = await addPerson(t, 'member');
  });
  afterAll(async () => t.close());
  afterEach(() => vi.restoreAllMocks());

  const logout = (b: Browser) => b.call({ method: 'POST', url: '/api/v1/auth/logout' });
  const me = (b: Browser) => b.call({ method: 'GET', url: '/api/v1/users/me' });
  const refresh = (b: Browser) => b.call({ method: 'POST', url: '/api/v1/auth/refresh' });

  it('"when a refresh cookie is present, success means its whole refresh family was revoked before cookies were cleared"', async () => {
    const b = await signIn(t, person);
    await refresh(b); // the family now has rotated members too
    const kept = b.clone();
    const res = await logout(b);
    expect(res.statusCode).toBe(204);
    const set = setCookies(res);
    expect(set.svc_session).toMatch(/^svc_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/);
    expect(set.svc_refresh).toMatch(/^svc_refresh=; Max-Age=0; Path=\/api\/v1\/auth; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/);
    expect(b.cookies).toEqual({});
    // By the time the cookies were cleared, every credential of the family was dead.
    const found = await t.ctx.control.sessions.findCredential(tokenHash(kept.cookies.svc_refresh));
    expect(found!.signIn.revokedAt).not.toBeNull();
    expect(found!.credential.status).toBe('revoked');
    expect((await me(kept)).statusCode).toBe(401);
    expect((await refresh(kept)).statusCode).toBe(401);
  });

  it('with only a session cookie, that sign-in is revoked', async () => {
    const b = await signIn(t, person);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: { svc_session: b.cookies.svc_session } });
    expect(res.statusCode).toBe(204);
    expect((await me(b)).statusCode).toBe(401);
    expect((await refresh(b)).statusCode).toBe(401);
  });

  it('with no cookies (or cookies that were already signed out) it is 204 and changes nothing', async () => {
    expect((await logout(browser(t))).statusCode).toBe(204);
    const b = await signIn(t, person);
    const kept = b.clone();
    expect((await logout(b)).statusCode).toBe(204);
    expect((await logout(kept)).statusCode).toBe(204);
  });

  it('"If revocation is temporarily unavailable, the answer is 503 with Retry-After: 1 and cookies are left unchanged"', async () => {
    const b = await signIn(t, person);
    const before = { ...b.cookies };
    vi.spyOn(KyselySessionStore.prototype, 'revokeFamily').mockRejectedValue(new Error('connection reset'));
    const res = await logout(b);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json().error).toBe('unavailable');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(b.cookies).toEqual(before);
    // Nothing was half done: the session still works, and the retry succeeds.
    expect((await me(b)).statusCode).toBe(200);
    vi.restoreAllMocks();
    expect((await logout(b)).statusCode).toBe(204);
    expect((await me(b.clone())).statusCode).toBe(401);
  });

  it('a store that cannot even be read is 503 with no Set-Cookie too', async () => {
    const b = await signIn(t, person);
    vi.spyOn(KyselySessionStore.prototype, 'findCredential').mockRejectedValue(new Error('timeout'));
    const res = await logout(b);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('rule 7: "signing out one device stops only that device\'s work"', async () => {
    const laptop = await signIn(t, person);
    const phone = await signIn(t, person);
    expect((await logout(laptop)).statusCode).toBe(204);
    expect((await me(phone)).statusCode).toBe(200);
    expect((await refresh(phone)).statusCode).toBe(200);
  });

  it('a sign-out is recorded in the audit trail, named after the session', async () => {
    const b = await signIn(t, person);
    await logout(b);
    const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=session&action=sign_out&limit=1' })).json().audit_events[0];
    expect(ev).toMatchObject({ result: 'success', event_type: null, actor: { kind: 'session', user_id: person.userId } });
    expect(ev.actor.sign_in_id).toBe(ev.affected_object);
  });
});
