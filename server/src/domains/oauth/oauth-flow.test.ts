/** The authorization server over HTTP: metadata, registration, code + PKCE with our consent step, refresh rotation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../testing/app.js';
import { connectAgent, finishAuthorization, pkce, REDIRECT_URI, registerClient, startAuthorization, tokenRequest, withToken } from '../../testing/oauth.js';
import { addPerson, signIn, type Browser } from '../../testing/people.js';

describe('OAuth authorization server', () => {
  let t: TestApp;
  let member: Browser;

  beforeAll(async () => {
    t = await testApp();
    member = await signIn(t, await addPerson(t, 'member'));
  });
  afterAll(async () => t.close());

  it('serves RFC 8414 metadata built from the library discovery, at the bare and the path-inserted name', async () => {
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/oauth']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      const m = res.json();
      expect(m.issuer).toBe('http://127.0.0.1:8080/oauth');
      expect(m.code_challenge_methods_supported).toEqual(['S256']);
      expect(m.response_types_supported).toEqual(['code']);
      expect(m.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']));
      expect(m.scopes_supported).toEqual(expect.arrayContaining(['metrics:read', 'oauth:connections']));
      for (const k of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'device_authorization_endpoint', 'revocation_endpoint'])
        expect(m[k], k).toMatch(/\/oauth\//);
    }
  });

  it('registers clients dynamically (RFC 7591)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/reg',
      payload: { redirect_uris: [REDIRECT_URI], application_type: 'native', token_endpoint_auth_method: 'none', client_name: 'Agent' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ client_name: 'Agent', token_endpoint_auth_method: 'none' });
    expect(res.json().client_id).toEqual(expect.any(String));
    const bad = await t.app.inject({ method: 'POST', url: '/oauth/reg', payload: { redirect_uris: ['not a url'] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_redirect_uri');
  });

  it('code flow with PKCE: consent by the signed-in person, then the token works on a REST route', async () => {
    const { tokens, connectionId } = await connectAgent(t, member, { scope: 'metrics:read projects:read' });
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'metrics:read projects:read' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const res = await withToken(t, tokens.access_token, { url: '/api/v1/projects' });
    expect(res.statusCode, res.body).toBe(200);
    const me = (await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).json();
    expect(me.scopes).toEqual(['metrics:read', 'projects:read']);
    expect(connectionId).toEqual(expect.any(String));
  });

  it('PKCE is required: a request without a code challenge is refused', async () => {
    const clientId = await registerClient(t);
    const q = new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'metrics:read' });
    const res = await member.call({ method: 'GET', url: `/oauth/auth?${q}` });
    expect(res.statusCode).toBe(303);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_request');
  });

  it('a wrong code verifier is refused', async () => {
    const clientId = await registerClient(t);
    const { uid } = await startAuthorization(member, clientId, { scope: 'metrics:read' });
    const ok = await member.call({ method: 'POST', url: `/api/v1/oauth/interactions/${uid}/approve`, payload: {} });
    const code = (await finishAuthorization(member, ok.json().redirect_to)).searchParams.get('code')!;
    const tok = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: pkce().verifier });
    expect(tok.statusCode).toBe(400);
    expect(tok.json().error).toBe('invalid_grant');
  });

  it('the consent description names the client labels, the scopes and the person', async () => {
    const clientId = await registerClient(t, { client_name: 'Claude Code', client_uri: 'https://claude.example/x' });
    const { uid } = await startAuthorization(member, clientId, { scope: 'metrics:read audit:read' });
    const res = await member.call({ method: 'GET', url: `/api/v1/oauth/interactions/${uid}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      uid,
      client: { client_id: clientId, client_name: 'Claude Code', client_host: 'claude.example', verified: false },
      requested_scopes: ['metrics:read', 'audit:read'],
      grantable_scopes: ['metrics:read'], // a member does not hold audit:read
      project_id: null,
      person: { role: 'member', workspace_id: t.orgId },
    });
  });

  it('the consent step needs the browser session that started it, the CSRF header, and no API key', async () => {
    const clientId = await registerClient(t);
    const { uid } = await startAuthorization(member, clientId, { scope: 'metrics:read' });
    const url = `/api/v1/oauth/interactions/${uid}/approve`;
    expect((await t.call({ method: 'POST', url, key: null, payload: {} })).statusCode).toBe(401);
    expect((await t.call({ method: 'POST', url, payload: {} })).statusCode).toBe(403); // owner API key
    expect((await member.call({ method: 'POST', url, payload: {}, csrf: false })).statusCode).toBe(403);
    // Another signed-in person's browser lacks the interaction cookie: the request is not theirs to approve.
    const other = await signIn(t, await addPerson(t, 'member'));
    expect((await other.call({ method: 'POST', url, payload: {} })).statusCode).toBe(404);
  });

  it('deny sends the browser back to the client with access_denied', async () => {
    const clientId = await registerClient(t);
    const { uid } = await startAuthorization(member, clientId, { scope: 'metrics:read' });
    const res = await member.call({ method: 'POST', url: `/api/v1/oauth/interactions/${uid}/deny` });
    expect(res.statusCode, res.body).toBe(200);
    const back = await finishAuthorization(member, res.json().redirect_to);
    expect(back.searchParams.get('error')).toBe('access_denied');
  });

  it('refresh tokens rotate: the old one is refused after use', async () => {
    const { clientId, tokens } = await connectAgent(t, member, { scope: 'metrics:read' });
    const first = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    expect(first.statusCode, first.body).toBe(200);
    const next = first.json();
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect((await withToken(t, next.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(200);
    const again = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toBe('invalid_grant');
  });

  it('only an access token authenticates: a refresh token, junk or an unknown token get the same 401', async () => {
    const { tokens } = await connectAgent(t, member, { scope: 'metrics:read' });
    for (const bearer of [tokens.refresh_token!, 'x'.repeat(43), 'not a token', `${tokens.access_token}x`]) {
      const res = await withToken(t, bearer, { url: '/api/v1/users/me' });
      expect(res.statusCode, bearer).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
    }
  });
});
