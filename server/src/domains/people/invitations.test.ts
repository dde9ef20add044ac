/** Invitations over HTTP (issue 3: create, list, revoke, accept with a one-time token), on both control stores. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, PASSWORD, secondOrganization, signIn, uniqueEmail } from '../../testing/people.js';
import { tokenHash } from '../../lib/tokens.js';

const INVALID = { error: 'invalid_request', message: 'invitation is invalid or expired' };

describe.each(['sqlite', 'postgres'] as const)('invitations (%s)', (dialect) => {
  let t: TestApp;
  const clock = fixedClock('2026-06-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
  });
  afterAll(async () => t.close());

  const invite = (body: object, key?: string) => t.call({ method: 'POST', url: '/api/v1/invitations', payload: body, key });
  const accept = (body: object) => t.call({ method: 'POST', url: '/api/v1/invitations/accept', payload: body, key: null });
  const list = async () => (await t.call({ method: 'GET', url: '/api/v1/invitations?limit=200' })).json().invitations as { id: string; status: string }[];

  it('create: 201 with the token shown this once; expires after 7 days; the token is stored only as a hash', async () => {
    const email = uniqueEmail();
    const res = await invite({ email, role: 'member' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['created_at', 'email', 'expires_at', 'id', 'role', 'status', 'token']);
    expect(body).toMatchObject({ email: email.toLowerCase(), role: 'member', status: 'pending', created_at: '2026-06-01T00:00:00.000Z', expires_at: '2026-06-08T00:00:00.000Z' });
    expect(body.token).toMatch(/^svi_[A-Za-z0-9_-]{43}$/);
    const stored = await t.ctx.control.invitations.findById(t.orgId, body.id);
    expect(stored!.tokenHash).toBe(tokenHash(body.token));
    expect(JSON.stringify(stored)).not.toContain(body.token.slice(4));
    const listed = (await list()).find((i) => i.id === body.id);
    expect(listed).toEqual({ id: body.id, email: email.toLowerCase(), role: 'member', status: 'pending', expires_at: body.expires_at, created_at: body.created_at });
  });

  it('create and list need members:write; unknown fields and roles are refused', async () => {
    const m = await addPerson(t, 'member');
    const b = await signIn(t, m);
    expect((await b.call({ method: 'POST', url: '/api/v1/invitations', payload: { email: uniqueEmail(), role: 'member' } })).statusCode).toBe(403);
    expect((await b.call({ method: 'GET', url: '/api/v1/invitations' })).statusCode).toBe(403);
    expect((await invite({ email: uniqueEmail(), role: 'root' })).statusCode).toBe(400);
    expect((await invite({ email: 'not-an-email', role: 'member' })).statusCode).toBe(400);
    expect((await invite({ email: uniqueEmail(), role: 'member', org_id: 'x' })).statusCode).toBe(400);
  });

  it('only an owner may invite an owner; an admin may invite admins and members', async () => {
    const admin = await addPerson(t, 'admin');
    const b = await signIn(t, admin);
    const res = await b.call({ method: 'POST', url: '/api/v1/invitations', payload: { email: uniqueEmail(), role: 'owner' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'permission_denied', message: 'only an owner can invite an owner' });
    for (const role of ['admin', 'member']) expect((await b.call({ method: 'POST', url: '/api/v1/invitations', payload: { email: uniqueEmail(), role } })).statusCode).toBe(201);
    const owner = await addPerson(t, 'owner');
    const o = await signIn(t, owner);
    expect((await o.call({ method: 'POST', url: '/api/v1/invitations', payload: { email: uniqueEmail(), role: 'owner' } })).statusCode).toBe(201);
  });

  it('inviting someone who is already a member is 409', async () => {
    const m = await addPerson(t, 'member');
    expect((await invite({ email: m.email.toUpperCase(), role: 'admin' })).statusCode).toBe(409);
  });

  it('accept without a credential: a new person gets an account and the role; the password is stored scrypt-hashed', async () => {
    const email = uniqueEmail();
    const token = (await invite({ email, role: 'admin' })).json().token;
    const res = await accept({ token, name: '  Ada Lovelace ', password: PASSWORD });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ user: { id: expect.any(String), email: email.toLowerCase(), name: 'Ada Lovelace' }, organization: { id: t.orgId, role: 'admin' } });
    const stored = await t.ctx.control.users.findByEmail(email.toLowerCase());
    expect(stored!.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(stored!.passwordHash).not.toContain(PASSWORD);
    const b = await signIn(t, { email, password: PASSWORD });
    expect((await b.call({ method: 'GET', url: '/api/v1/users/me' })).json().organization).toEqual({ id: t.orgId, role: 'admin' });
  });

  it('a new account needs a name and a password of at least 12 characters (the token stays usable)', async () => {
    const token = (await invite({ email: uniqueEmail(), role: 'member' })).json().token;
    expect((await accept({ token, password: PASSWORD })).json().message).toContain('name');
    const short = await accept({ token, name: 'N', password: 'elevenchars' });
    expect(short.statusCode).toBe(400);
    expect(short.json().message).toContain('at least 12');
    expect((await accept({ token, name: 'N', password: 'twelve chars' })).statusCode).toBe(201);
  });

  it('"one-time token": a used, revoked, expired or unknown token all get the same 400', async () => {
    const used = (await invite({ email: uniqueEmail(), role: 'member' })).json().token;
    expect((await accept({ token: used, name: 'N', password: PASSWORD })).statusCode).toBe(201);

    const revokedInv = (await invite({ email: uniqueEmail(), role: 'member' })).json();
    const rev = await t.call({ method: 'POST', url: `/api/v1/invitations/${revokedInv.id}/revoke` });
    expect(rev.statusCode).toBe(200);
    expect(rev.json().status).toBe('revoked');

    const expiring = (await invite({ email: uniqueEmail(), role: 'member' })).json();
    clock.advance(7 * 86_400_000);
    try {
      expect((await list()).find((i) => i.id === expiring.id)!.status).toBe('expired');
      for (const token of [used, revokedInv.token, expiring.token, `svi_${'A'.repeat(43)}`, 'garbage']) {
        const res = await accept({ token, name: 'N', password: PASSWORD });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual(INVALID);
      }
    } finally {
      clock.advance(-7 * 86_400_000);
    }
  });

  it('an invitation is still good a moment before its 7 days run out', async () => {
    const token = (await invite({ email: uniqueEmail(), role: 'member' })).json().token;
    clock.advance(7 * 86_400_000 - 1);
    try {
      expect((await accept({ token, name: 'N', password: PASSWORD })).statusCode).toBe(201);
    } finally {
      clock.advance(-(7 * 86_400_000 - 1));
    }
  });

  it('two acceptances of the same token at once: exactly one wins', async () => {
    const token = (await invite({ email: uniqueEmail(), role: 'member' })).json().token;
    const results = await Promise.all([accept({ token, name: 'A', password: PASSWORD }), accept({ token, name: 'B', password: PASSWORD })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 400]);
  });

  it('an existing person accepts with their password (no name); a wrong password is 401 and keeps the invitation', async () => {
    const other = await secondOrganization(t);
    const p = await addPerson(t, 'member', { key: other.ownerKey });
    const inv = (await invite({ email: p.email, role: 'member' })).json();
    expect((await accept({ token: inv.token, password: 'not my password' })).json()).toEqual({ error: 'unauthorized', message: 'invalid email or password' });
    expect((await accept({ token: inv.token, name: 'New Name', password: PASSWORD })).statusCode).toBe(400);
    const ok = await accept({ token: inv.token, password: PASSWORD });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toEqual({ user: { id: p.userId, email: p.email, name: 'Test Person' }, organization: { id: t.orgId, role: 'member' } });
    expect((await list()).find((i) => i.id === inv.id)!.status).toBe('accepted');
  });

  it('revoke: needs members:write, repeating it changes nothing, an accepted invitation cannot be revoked, another organization\'s is 404', async () => {
    const inv = (await invite({ email: uniqueEmail(), role: 'member' })).json();
    const m = await addPerson(t, 'member');
    const b = await signIn(t, m);
    expect((await b.call({ method: 'POST', url: `/api/v1/invitations/${inv.id}/revoke` })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `/api/v1/invitations/${inv.id}/revoke` })).json().status).toBe('revoked');
    expect((await t.call({ method: 'POST', url: `/api/v1/invitations/${inv.id}/revoke` })).statusCode).toBe(200);
    const done = (await invite({ email: uniqueEmail(), role: 'member' })).json();
    await accept({ token: done.token, name: 'N', password: PASSWORD });
    expect((await t.call({ method: 'POST', url: `/api/v1/invitations/${done.id}/revoke` })).statusCode).toBe(409);
    const other = await secondOrganization(t);
    expect((await t.call({ method: 'POST', url: `/api/v1/invitations/${inv.id}/revoke`, key: other.ownerKey })).statusCode).toBe(404);
  });

  it('list pages newest first with the shared rules: default 100, max 200', async () => {
    await invite({ email: uniqueEmail(), role: 'member' });
    clock.advance(1000);
    const b = (await invite({ email: uniqueEmail(), role: 'member' })).json();
    clock.advance(-1000);
    const first = (await t.call({ method: 'GET', url: '/api/v1/invitations?limit=1' })).json();
    expect(first.invitations.map((i: { id: string }) => i.id)).toEqual([b.id]);
    const second = (await t.call({ method: 'GET', url: `/api/v1/invitations?limit=1&cursor=${first.next_cursor}` })).json();
    expect(second.invitations[0].id).not.toBe(b.id);
    expect((await t.call({ method: 'GET', url: '/api/v1/invitations?limit=201' })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/invitations?limit=0' })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/invitations' })).json().invitations.length).toBeLessThanOrEqual(100);
  });

  it('create, revoke and accept are recorded in the audit trail', async () => {
    const inv = (await invite({ email: uniqueEmail(), role: 'member' })).json();
    await t.call({ method: 'POST', url: `/api/v1/invitations/${inv.id}/revoke` });
    const inv2 = (await invite({ email: uniqueEmail(), role: 'member' })).json();
    const accepted = (await accept({ token: inv2.token, name: 'N', password: PASSWORD })).json();
    const events = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=invitation&limit=200' })).json().audit_events;
    const of = (id: string, action: string) => events.find((e: { affected_object: string; action: string }) => e.affected_object === id && e.action === action);
    expect(of(inv.id, 'create')).toMatchObject({ result: 'success', event_type: null, actor: { kind: 'api_key' }, metadata: { role: 'member' } });
    expect(of(inv.id, 'revoke')).toMatchObject({ result: 'success', actor: { kind: 'api_key' } });
    expect(of(inv2.id, 'accept')).toMatchObject({ result: 'success', actor: { kind: 'system', user_id: accepted.user.id }, metadata: { new_account: true } });
  });
});
