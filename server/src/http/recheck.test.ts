/** Authentication rules 7-8: the re-check hook that long-running streams and downloads call. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../testing/app.js';
import { addPerson, signIn } from '../testing/people.js';
import { CredentialRechecker, watchCredential } from './recheck.js';

const clock = fixedClock('2026-06-01T00:00:00.000Z');
let t: TestApp;
let rechecker: CredentialRechecker;

beforeAll(async () => {
  t = await testApp({ clock });
  rechecker = new CredentialRechecker(t.ctx.apiKeys, t.ctx.sessions, t.ctx.members, t.ctx.control, clock);
});
afterAll(async () => t.close());

async function keyPrincipal(scopes: string[]) {
  const k = await projectWithKey(t, scopes);
  return { ...k, principal: (await t.ctx.apiKeys.authenticate(k.key))! };
}

async function sessionOf(role: 'admin' | 'member') {
  const person = await addPerson(t, role);
  const b = await signIn(t, person);
  const secret = b.cookies.svc_session;
  return { person, b, secret, principal: (await t.ctx.sessions.authenticate(secret))! };
}

describe('re-check of a running stream', () => {
  it('an unchanged key stays ok', async () => {
    const { key, principal } = await keyPrincipal(['metrics:read']);
    expect(await rechecker.recheck(principal, key, ['metrics:read'])).toBe('ok');
  });

  it('revocation of the key ends it as unauthorized', async () => {
    const { key, keyId, principal } = await keyPrincipal(['metrics:read']);
    await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    expect(await rechecker.recheck(principal, key, ['metrics:read'])).toBe('unauthorized');
  });

  it('narrowing scopes that the stream was admitted with has the same effect: forbidden', async () => {
    const { key, keyId, principal } = await keyPrincipal(['metrics:read', 'projects:read']);
    await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload: { scopes: ['projects:read'] } });
    expect(await rechecker.recheck(principal, key, ['metrics:read'])).toBe('forbidden');
    expect(await rechecker.recheck(principal, key, ['projects:read'])).toBe('ok');
  });

  it('a role downgrade that removes something the stream was admitted with: forbidden', async () => {
    const s = await sessionOf('admin');
    expect(await rechecker.recheck(s.principal, s.secret, ['audit:read'])).toBe('ok');
    await t.call({ method: 'PATCH', url: `/api/v1/members/${s.person.userId}`, payload: { role: 'member' } });
    expect(await rechecker.recheck(s.principal, s.secret, ['audit:read'])).toBe('forbidden');
  });

  it('for a person the check covers that exact sign-in: signing out one device stops only that device', async () => {
    const s = await sessionOf('member');
    const other = await signIn(t, s.person);
    await other.call({ method: 'POST', url: '/api/v1/auth/logout' });
    expect(await rechecker.recheck(s.principal, s.secret, ['metrics:read'])).toBe('ok');
    await s.b.call({ method: 'POST', url: '/api/v1/auth/logout' });
    expect(await rechecker.recheck(s.principal, s.secret, ['metrics:read'])).toBe('unauthorized');
  });

  it('removal from the organization (current membership) ends it as unauthorized', async () => {
    const s = await sessionOf('member');
    await t.call({ method: 'DELETE', url: `/api/v1/members/${s.person.userId}` });
    expect(await rechecker.recheck(s.principal, s.secret, ['metrics:read'])).toBe('unauthorized');
  });

  it('routine session expiry or a refresh rotation ends it without the final marker (expired)', async () => {
    const s = await sessionOf('member');
    await s.b.call({ method: 'POST', url: '/api/v1/auth/refresh' });
    expect(await rechecker.recheck(s.principal, s.secret, ['metrics:read'])).toBe('expired');
    const s2 = await sessionOf('member');
    clock.advance(16 * 60_000);
    try {
      expect(await rechecker.recheck(s2.principal, s2.secret, ['metrics:read'])).toBe('expired');
    } finally {
      clock.advance(-16 * 60_000);
    }
  });

  it('watchCredential stops the work once, with the verdict, after a revocation', async () => {
    const { key, keyId, principal } = await keyPrincipal(['metrics:read']);
    const ended: string[] = [];
    const stop = watchCredential(rechecker, principal, key, ['metrics:read'], (v) => ended.push(v), 20);
    await new Promise((r) => setTimeout(r, 60));
    expect(ended).toEqual([]);
    await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    await new Promise((r) => setTimeout(r, 100));
    stop();
    expect(ended).toEqual(['unauthorized']);
  });
});
