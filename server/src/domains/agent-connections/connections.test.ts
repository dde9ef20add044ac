/** Agent approvals (spec 1, "Connected-agent approvals and budgets"): OAuth principals, listing, revocation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../testing/app.js';
import { connectAgent, registerClient, tokenRequest, withToken } from '../../testing/oauth.js';
import { addPerson, signIn, type Browser, type Person } from '../../testing/people.js';

describe('agent connections', () => {
  let t: TestApp;
  let memberPerson: Person;
  let member: Browser;
  let admin: Browser;

  beforeAll(async () => {
    t = await testApp();
    memberPerson = await addPerson(t, 'member');
    member = await signIn(t, memberPerson);
    admin = await signIn(t, await addPerson(t, 'admin'));
  });
  afterAll(async () => t.close());

  const list = (b: Browser, query = '') => b.call({ method: 'GET', url: `/api/v1/account/agent-connections${query}` });

  describe('the OAuth principal', () => {
    it('requested scopes are narrowed to what the person\'s role holds', async () => {
      const { tokens } = await connectAgent(t, member, { scope: 'metrics:read audit:read' });
      expect(tokens.scope).toBe('metrics:read');
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/account/audit-events' })).statusCode).toBe(403);
    });

    it('a role change narrows the token at the next request; the audit trail names the connection', async () => {
      const p = await addPerson(t, 'admin');
      const b = await signIn(t, p);
      const { tokens, connectionId } = await connectAgent(t, b, { scope: 'metrics:read audit:read api_key:write' });
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/account/audit-events' })).statusCode).toBe(200);
      const made = await withToken(t, tokens.access_token, { method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'by agent', scopes: ['metrics:read'], org_wide: true } });
      expect(made.statusCode, made.body).toBe(201);
      expect(made.json()).toMatchObject({ user_id: p.userId, created_by_state: 'user' });
      const ev = (await t.call({ method: 'GET', url: `/api/v1/account/audit-events?target_api_key_id=${made.json().id}` })).json().audit_events[0];
      expect(ev.actor).toMatchObject({ kind: 'oauth', id: connectionId, connection_id: connectionId, user_id: p.userId });
      await t.call({ method: 'PATCH', url: `/api/v1/members/${p.userId}`, payload: { role: 'member' } });
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/account/audit-events' })).statusCode).toBe(403);
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).json().scopes).toEqual(['metrics:read']);
    });

    it('a removed person: 401 at once, and their approvals are revoked', async () => {
      const p = await addPerson(t, 'member');
      const { tokens, clientId } = await connectAgent(t, await signIn(t, p), { scope: 'metrics:read' });
      const del = await t.call({ method: 'DELETE', url: `/api/v1/members/${p.userId}` });
      expect(del.statusCode).toBe(204);
      const res = await withToken(t, tokens.access_token, { url: '/api/v1/users/me' });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
      expect((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId })).statusCode).toBe(400);
      const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=member&action=remove&limit=1' })).json().audit_events[0];
      expect(ev.metadata).toMatchObject({ agent_connections_revoked: 1, sessions_revoked: 1 });
    });

    it('last_used_at moves when the token is used', async () => {
      const { tokens, connectionId } = await connectAgent(t, member, { scope: 'metrics:read' });
      const before = (await list(member)).json().agent_connections.find((c: { id: string }) => c.id === connectionId);
      expect(before.last_used_at).toBeNull();
      await withToken(t, tokens.access_token, { url: '/api/v1/users/me' });
      const after = (await list(member)).json().agent_connections.find((c: { id: string }) => c.id === connectionId);
      expect(after.last_used_at).toEqual(expect.any(String));
    });
  });

  describe('GET /account/agent-connections', () => {
    it('lists the person\'s own approvals, newest first, with the spec\'s fields', async () => {
      const clientId = await registerClient(t, { client_name: 'Labelled', client_uri: 'https://labels.example/' });
      const { connectionId } = await connectAgent(t, member, { clientId, scope: 'metrics:read' });
      const res = await list(member);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ limit: 100, offset: 0, next_offset: null });
      expect(body.agent_connections[0]).toMatchObject({
        id: connectionId,
        client_id: clientId,
        client_name: 'Labelled',
        client_host: 'labels.example',
        workspace_id: t.orgId,
        project_id: null,
        user_id: memberPerson.userId,
        scopes: ['metrics:read'],
        status: 'active',
        revoked_at: null,
      });
      expect(body.agent_connections.every((c: { user_id: string }) => c.user_id === memberPerson.userId)).toBe(true);
    });

    it('limit is 1 to 200 (default 100); offset pages', async () => {
      for (const limit of ['0', '201', 'x', '-1']) expect((await list(member, `?limit=${limit}`)).statusCode, limit).toBe(400);
      expect((await list(member, '?offset=-1')).statusCode).toBe(400);
      const all = (await list(member)).json().agent_connections.map((c: { id: string }) => c.id);
      expect(all.length).toBeGreaterThanOrEqual(3);
      const first = (await list(member, '?limit=1')).json();
      expect(first.agent_connections.map((c: { id: string }) => c.id)).toEqual([all[0]]);
      expect(first.next_offset).toBe(1);
      const second = (await list(member, '?limit=1&offset=1')).json();
      expect(second.agent_connections.map((c: { id: string }) => c.id)).toEqual([all[1]]);
      expect((await list(member, `?offset=${all.length}`)).json()).toMatchObject({ agent_connections: [], next_offset: null });
      expect((await list(member, '?limit=200')).statusCode).toBe(200);
    });

    it('org_wide=true needs members:write and then shows everyone\'s approvals', async () => {
      expect((await list(member, '?org_wide=true')).statusCode).toBe(403);
      const res = await list(admin, '?org_wide=true');
      expect(res.statusCode).toBe(200);
      expect(res.json().agent_connections.some((c: { user_id: string }) => c.user_id === memberPerson.userId)).toBe(true);
      expect((await list(admin, '?org_wide=yes')).statusCode).toBe(400);
    });

    it('API keys and agent (OAuth) credentials are refused; no credential is 401', async () => {
      expect((await t.call({ method: 'GET', url: '/api/v1/account/agent-connections' })).statusCode).toBe(403);
      expect((await t.call({ method: 'GET', url: '/api/v1/account/agent-connections', key: null })).statusCode).toBe(401);
      const { tokens } = await connectAgent(t, member, { scope: 'oauth:connections metrics:read' });
      const res = await withToken(t, tokens.access_token, { url: '/api/v1/account/agent-connections' });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('permission_denied');
    });
  });

  describe('DELETE /account/agent-connections/{id}', () => {
    it('revokes: access and refresh tokens stop at once; revoking again changes nothing', async () => {
      const { tokens, clientId, connectionId } = await connectAgent(t, member, { scope: 'metrics:read' });
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(200);
      const res = await member.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: connectionId, status: 'revoked', revoked_at: expect.any(String) });
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(401);
      const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
      expect(refreshed.json().error).toBe('invalid_grant');
      const again = await member.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}` });
      expect(again.json()).toMatchObject({ status: 'revoked', revoked_at: res.json().revoked_at });
      const ev = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=agent_connection&action=revoke&limit=1' })).json().audit_events[0];
      expect(ev).toMatchObject({ affected_object: connectionId, actor: { kind: 'session', user_id: memberPerson.userId } });
    });

    it('reconnecting creates a new approval and never restores the revoked one', async () => {
      const clientId = await registerClient(t);
      const first = await connectAgent(t, member, { clientId, scope: 'metrics:read' });
      await member.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${first.connectionId}` });
      const second = await connectAgent(t, member, { clientId, scope: 'metrics:read' });
      expect(second.connectionId).not.toBe(first.connectionId);
      expect((await withToken(t, second.tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(200);
      expect((await withToken(t, first.tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(401);
      const rows = (await list(member)).json().agent_connections;
      expect(rows.find((c: { id: string }) => c.id === first.connectionId).status).toBe('revoked');
      expect(rows.find((c: { id: string }) => c.id === second.connectionId).status).toBe('active');
    });

    it("another person's approval is 404 unless an administrator names org_wide=true; keys and agents are refused", async () => {
      const { connectionId, tokens } = await connectAgent(t, member, { scope: 'metrics:read oauth:connections' });
      expect((await admin.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}` })).statusCode).toBe(404);
      expect((await member.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}?org_wide=true` })).statusCode).toBe(403);
      expect((await t.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}?org_wide=true` })).statusCode).toBe(403);
      expect((await withToken(t, tokens.access_token, { method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}` })).statusCode).toBe(403);
      expect((await member.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}`, csrf: false })).statusCode).toBe(403);
      const res = await admin.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${connectionId}?org_wide=true` });
      expect(res.statusCode).toBe(200);
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(401);
      expect((await member.call({ method: 'DELETE', url: '/api/v1/account/agent-connections/nope' })).statusCode).toBe(404);
    });

    it('a refresh token the agent revokes itself (RFC 7009) ends its approval', async () => {
      const { tokens, clientId, connectionId } = await connectAgent(t, member, { scope: 'metrics:read' });
      const res = await t.app.inject({
        method: 'POST',
        url: '/oauth/token/revocation',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token: tokens.refresh_token!, client_id: clientId }).toString(),
      });
      expect(res.statusCode).toBe(200);
      await new Promise((r) => setTimeout(r, 50)); // the library reports the revoked grant by an event
      const row = (await list(member)).json().agent_connections.find((c: { id: string }) => c.id === connectionId);
      expect(row.status).toBe('revoked');
      expect((await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(401);
    });
  });

  describe('projects', () => {
    it('an approval limited to a project acts only there; deleting the project revokes it, organization-wide ones stay', async () => {
      const p = (await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'agent-project' } })).json();
      const bound = await connectAgent(t, admin, { scope: 'projects:read metrics:read', projectId: p.id });
      const wide = await connectAgent(t, admin, { scope: 'projects:read' });
      const seen = (await withToken(t, bound.tokens.access_token, { url: '/api/v1/projects' })).json().projects.map((x: { id: string }) => x.id);
      expect(seen).toEqual([p.id]);
      expect((await withToken(t, bound.tokens.access_token, { url: `/api/v1/projects?project_id=${t.projectId}` })).statusCode).toBe(403);
      expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${p.id}` })).statusCode).toBe(204);
      expect((await withToken(t, bound.tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(401);
      expect((await withToken(t, wide.tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(200);
      const rows = (await list(admin)).json().agent_connections;
      expect(rows.find((c: { id: string }) => c.id === bound.connectionId)).toMatchObject({ status: 'revoked', project_id: p.id });
      expect(rows.find((c: { id: string }) => c.id === wide.connectionId).status).toBe('active');
    });

    it('the person can limit an approval to a project at consent; an unknown project is 404', async () => {
      const p = (await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'picked' } })).json();
      const { connectionId } = await connectAgent(t, admin, { scope: 'projects:read', approve: { project_id: p.id } });
      const row = (await list(admin)).json().agent_connections.find((c: { id: string }) => c.id === connectionId);
      expect(row.project_id).toBe(p.id);
      await expect(connectAgent(t, admin, { scope: 'projects:read', approve: { project_id: 'missing' } })).rejects.toThrow(/404/);
    });
  });
});
