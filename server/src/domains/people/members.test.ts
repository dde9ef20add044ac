/** People and membership over HTTP (issue 3: roles, /users/me, members; spec 1 "Authentication" 7), on both control stores. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, secondOrganization, signIn, type Person } from '../../testing/people.js';
import { ROLE_SCOPES } from './roles.js';

describe.each(['sqlite', 'postgres'] as const)('members (%s)', (dialect) => {
  let t: TestApp;
  const clock = fixedClock('2026-06-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
  });
  afterAll(async () => t.close());

  const patch = (userId: string, role: string, key?: string) => t.call({ method: 'PATCH', url: `/api/v1/members/${userId}`, payload: { role }, key });
  const remove = (userId: string, key?: string) => t.call({ method: 'DELETE', url: `/api/v1/members/${userId}`, key });
  const roleOf = async (userId: string, key?: string) =>
    (await t.call({ method: 'GET', url: '/api/v1/members?limit=200', key })).json().members.find((m: { user_id: string }) => m.user_id === userId)?.role;

  describe('GET /users/me', () => {
    it('a credential with no person behind it is 403 permission_denied', async () => {
      const res = await t.call({ method: 'GET', url: '/api/v1/users/me' });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('permission_denied');
    });

    it('"a key minted by a person, or by a key that a person minted, belongs to that person"', async () => {
      const admin = await addPerson(t, 'admin');
      const b = await signIn(t, admin);
      const minted = await b.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'mine', scopes: ['api_key:write', 'metrics:read'], org_wide: true } });
      expect(minted.statusCode).toBe(201);
      expect(minted.json()).toMatchObject({ user_id: admin.userId, created_by_api_key_id: null, created_by_state: 'user' });
      const child = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', key: minted.json().key, payload: { name: 'child', scopes: ['metrics:read'], org_wide: true } });
      expect(child.json()).toMatchObject({ user_id: admin.userId, created_by_api_key_id: minted.json().id, created_by_state: 'api_key' });
      for (const k of [minted.json(), child.json()]) {
        const me = await t.call({ method: 'GET', url: '/api/v1/users/me', key: k.key });
        expect(me.statusCode).toBe(200);
        expect(me.json()).toEqual({
          id: admin.userId,
          email: admin.email,
          name: 'Test Person',
          organization: { id: t.orgId, role: 'admin' },
          scopes: [...k.scopes].sort(),
        });
      }
    });
  });

  describe('GET /members', () => {
    it('lists people with their roles for members:write, and for any signed-in member', async () => {
      const m = await addPerson(t, 'member');
      const entry = (await t.call({ method: 'GET', url: '/api/v1/members?limit=200' })).json().members.find((x: { user_id: string }) => x.user_id === m.userId);
      expect(entry).toEqual({ user_id: m.userId, email: m.email, name: 'Test Person', role: 'member', created_at: '2026-06-01T00:00:00.000Z' });
      const b = await signIn(t, m);
      expect((await b.call({ method: 'GET', url: '/api/v1/members' })).statusCode).toBe(200);
    });

    it('a key without members:write and no session is 403', async () => {
      const k = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'r', scopes: ['metrics:read'], org_wide: true } });
      const res = await t.call({ method: 'GET', url: '/api/v1/members', key: k.json().key });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('permission_denied');
    });

    it('pages with the shared cursor rules: default 100, max 200', async () => {
      await addPerson(t, 'member');
      await addPerson(t, 'member');
      const first = (await t.call({ method: 'GET', url: '/api/v1/members?limit=1' })).json();
      expect(first.members).toHaveLength(1);
      const second = (await t.call({ method: 'GET', url: `/api/v1/members?limit=1&cursor=${first.next_cursor}` })).json();
      expect(second.members[0].user_id).not.toBe(first.members[0].user_id);
      expect((await t.call({ method: 'GET', url: '/api/v1/members?limit=201' })).statusCode).toBe(400);
      expect((await t.call({ method: 'GET', url: '/api/v1/members?cursor=a&cursor=b' })).json().message).toBe('cursor must be provided at most once');
    });
  });

  describe('PATCH and DELETE /members/{user_id}', () => {
    it('a change of role is recorded; a PATCH that changes nothing is 400; an unknown member is 404', async () => {
      const m = await addPerson(t, 'member');
      const res = await patch(m.userId, 'admin');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ user_id: m.userId, role: 'admin' });
      expect((await patch(m.userId, 'admin')).json()).toEqual({ error: 'invalid_request', message: 'the request changes nothing' });
      expect((await patch('no-such-person', 'admin')).statusCode).toBe(404);
      const bad = await patch(m.userId, 'superuser');
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toMatch(/^body\.role must be one of: .*admin.*member/);
      const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=member&action=update_role&limit=1' })).json().audit_events[0];
      expect(ev).toMatchObject({ result: 'success', affected_object: m.userId, metadata: { role: 'admin', previous_role: 'member' }, actor: { kind: 'api_key' } });
    });

    it('members:write is needed; a project-scoped key cannot manage organization members', async () => {
      const m = await addPerson(t, 'member');
      const b = await signIn(t, m);
      expect((await b.call({ method: 'PATCH', url: `/api/v1/members/${m.userId}`, payload: { role: 'admin' } })).statusCode).toBe(403);
      const p = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'p' } });
      const k = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'pk', scopes: ['members:write'], project_id: p.json().id } });
      expect((await patch(m.userId, 'admin', k.json().key)).statusCode).toBe(403);
      expect(await roleOf(m.userId)).toBe('member');
    });

    it('the last owner can never be removed or demoted (409 conflict naming the rule)', async () => {
      const org = await secondOrganization(t);
      const first = await addPerson(t, 'owner', { key: org.ownerKey });
      for (const res of [await patch(first.userId, 'admin', org.ownerKey), await remove(first.userId, org.ownerKey)]) {
        expect(res.statusCode).toBe(409);
        expect(res.json().error).toBe('conflict');
        expect(res.json().message).toContain('last owner');
      }
      const second = await addPerson(t, 'owner', { key: org.ownerKey });
      expect((await patch(first.userId, 'admin', org.ownerKey)).statusCode).toBe(200);
      // The remaining owner cannot demote or remove themselves either.
      const b = await signIn(t, second);
      expect((await b.call({ method: 'PATCH', url: `/api/v1/members/${second.userId}`, payload: { role: 'member' } })).statusCode).toBe(409);
      expect((await b.call({ method: 'DELETE', url: `/api/v1/members/${second.userId}` })).statusCode).toBe(409);
      expect(await roleOf(second.userId, org.ownerKey)).toBe('owner');
    });

    it('two owners demoting each other at the same moment cannot leave the organization without an owner', async () => {
      const org = await secondOrganization(t);
      const a = await addPerson(t, 'owner', { key: org.ownerKey });
      const b = await addPerson(t, 'owner', { key: org.ownerKey });
      const results = await Promise.all([patch(a.userId, 'member', org.ownerKey), patch(b.userId, 'member', org.ownerKey)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
      const owners = (await t.call({ method: 'GET', url: '/api/v1/members', key: org.ownerKey })).json().members.filter((m: { role: string }) => m.role === 'owner');
      expect(owners).toHaveLength(1);
    });

    describe('an admin versus an owner', () => {
      let owner: Person;
      let admin: Person;
      beforeAll(async () => {
        owner = await addPerson(t, 'owner');
        admin = await addPerson(t, 'admin');
      });

      it('an admin may not change or remove an owner, nor make anyone an owner (403)', async () => {
        const b = await signIn(t, admin);
        const m = await addPerson(t, 'member');
        for (const req of [
          { method: 'PATCH' as const, url: `/api/v1/members/${owner.userId}`, payload: { role: 'admin' } },
          { method: 'DELETE' as const, url: `/api/v1/members/${owner.userId}` },
          { method: 'PATCH' as const, url: `/api/v1/members/${m.userId}`, payload: { role: 'owner' } },
          { method: 'PATCH' as const, url: `/api/v1/members/${admin.userId}`, payload: { role: 'owner' } },
        ]) {
          const res = await b.call(req);
          expect(res.statusCode).toBe(403);
          expect(res.json().error).toBe('permission_denied');
        }
        expect(await roleOf(owner.userId)).toBe('owner');
        expect(await roleOf(m.userId)).toBe('member');
      });

      it("an admin's key acts with the admin's role", async () => {
        const b = await signIn(t, admin);
        const k = (await b.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'ak', scopes: ['members:write'], org_wide: true } })).json().key;
        expect((await patch(owner.userId, 'member', k)).statusCode).toBe(403);
      });

      it('an admin may change and remove members and admins; an owner may change an owner', async () => {
        const b = await signIn(t, admin);
        const m = await addPerson(t, 'member');
        expect((await b.call({ method: 'PATCH', url: `/api/v1/members/${m.userId}`, payload: { role: 'admin' } })).statusCode).toBe(200);
        expect((await b.call({ method: 'DELETE', url: `/api/v1/members/${m.userId}` })).statusCode).toBe(204);
        expect(await roleOf(m.userId)).toBeUndefined();
        const o = await signIn(t, owner);
        const other = await addPerson(t, 'owner');
        expect((await o.call({ method: 'PATCH', url: `/api/v1/members/${other.userId}`, payload: { role: 'admin' } })).statusCode).toBe(200);
      });
    });

    it('rule 7: a role downgrade narrows the session\'s scopes on its next request', async () => {
      const a = await addPerson(t, 'admin');
      const b = await signIn(t, a);
      expect((await b.call({ method: 'GET', url: '/api/v1/account/audit-events' })).statusCode).toBe(200);
      expect((await patch(a.userId, 'member')).statusCode).toBe(200);
      const res = await b.call({ method: 'GET', url: '/api/v1/account/audit-events' });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toContain('audit:read');
      expect((await b.call({ method: 'GET', url: '/api/v1/users/me' })).json()).toMatchObject({ organization: { role: 'member' }, scopes: [...ROLE_SCOPES.member].sort() });
    });

    it('removing a member revokes their browser sessions in that organization at once', async () => {
      const m = await addPerson(t, 'member');
      const b = await signIn(t, m);
      const second = await signIn(t, m);
      expect((await b.call({ method: 'GET', url: '/api/v1/users/me' })).statusCode).toBe(200);
      expect((await remove(m.userId)).statusCode).toBe(204);
      for (const s of [b, second]) {
        const res = await s.call({ method: 'GET', url: '/api/v1/users/me' });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
        expect((await s.call({ method: 'POST', url: '/api/v1/auth/refresh' })).statusCode).toBe(401);
      }
      const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=member&action=remove&limit=1' })).json().audit_events[0];
      expect(ev).toMatchObject({ affected_object: m.userId, metadata: { role: 'member', sessions_revoked: 2 } });
      expect((await remove(m.userId)).statusCode).toBe(404);
    });

    it('removing a member revokes the API keys they minted, and the keys those keys minted (a key belongs to its person)', async () => {
      const m = await addPerson(t, 'admin');
      const b = await signIn(t, m);
      const mint = async (call: (o: object) => Promise<{ statusCode: number; json(): any }>) => {
        const res = await call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'theirs', scopes: ['projects:read', 'api_key:write'], org_wide: true } });
        expect(res.statusCode).toBe(201);
        return res.json() as { id: string; key: string };
      };
      const own = await mint((o) => b.call(o as never));
      const child = await mint((o) => t.call({ ...(o as object), key: own.key } as never));
      const ownerKey = await mint((o) => t.call(o as never)); // the owner's key: not theirs, untouched
      expect((await remove(m.userId)).statusCode).toBe(204);
      for (const k of [own, child]) {
        const res = await t.call({ method: 'GET', url: '/api/v1/projects', key: k.key });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
      }
      expect((await t.call({ method: 'GET', url: '/api/v1/projects', key: ownerKey.key })).statusCode).toBe(200);
      const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=member&action=remove&limit=1' })).json().audit_events[0];
      expect(ev).toMatchObject({ affected_object: m.userId, metadata: { api_keys_revoked: 2 } });
      const revoked = (await t.call({ method: 'GET', url: `/api/v1/account/audit-events?target_api_key_id=${child.id}` })).json().audit_events;
      expect(revoked[0]).toMatchObject({ event_type: 'api_key_revoked', metadata: { via: 'member_removed' } });
    });
  });
});
