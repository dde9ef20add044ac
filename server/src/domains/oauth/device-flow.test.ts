/** The device authorization grant (RFC 8628), approved by user code through our API, as `svc login` uses it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../testing/app.js';
import { tokenRequest, withToken } from '../../testing/oauth.js';
import { addPerson, signIn, type Browser } from '../../testing/people.js';
import { CLI_CLIENT_ID } from './provider.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

describe('device flow', () => {
  let t: TestApp;
  let admin: Browser;

  beforeAll(async () => {
    t = await testApp();
    admin = await signIn(t, await addPerson(t, 'admin'));
  });
  afterAll(async () => t.close());

  const start = async (scope = 'metrics:read projects:read', extra: Record<string, string> = {}) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/device/auth',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: CLI_CLIENT_ID, scope, ...extra }).toString(),
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
  };
  const poll = (deviceCode: string) => tokenRequest(t, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: CLI_CLIENT_ID });

  it('device authorization, approval by user code as a signed-in person, then polling returns tokens', async () => {
    const d = await start();
    expect(d.verification_uri).toMatch(/\/oauth\/device$/);
    expect(d.expires_in).toBe(600);
    const pending = await poll(d.device_code);
    expect(pending.statusCode).toBe(400);
    expect(pending.json().error).toBe('authorization_pending');

    const seen = await admin.call({ method: 'GET', url: `/api/v1/oauth/device?user_code=${encodeURIComponent(d.user_code.toLowerCase())}` });
    expect(seen.statusCode, seen.body).toBe(200);
    expect(seen.json()).toMatchObject({ client: { client_id: CLI_CLIENT_ID, client_name: 'svc CLI', client_host: null }, requested_scopes: ['metrics:read', 'projects:read'] });

    const ok = await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: d.user_code } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().scopes).toEqual(['metrics:read', 'projects:read']);

    const tok = await poll(d.device_code);
    expect(tok.statusCode, tok.body).toBe(200);
    expect(tok.json()).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'metrics:read projects:read' });
    expect(tok.json().refresh_token).toEqual(expect.any(String));
    expect((await withToken(t, tok.json().access_token, { url: '/api/v1/projects' })).statusCode).toBe(200);
    // The device code is single use.
    expect((await poll(d.device_code)).json().error).toBe('invalid_grant');
    // And so is the user code: once redeemed the library no longer finds it.
    expect((await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: d.user_code } })).statusCode).toBe(404);
  });

  it('an approved code that was not redeemed yet cannot be approved again', async () => {
    const d = await start('metrics:read');
    expect((await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: d.user_code } })).statusCode).toBe(200);
    expect((await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: d.user_code } })).statusCode).toBe(409);
  });

  it('a refresh token of the device flow rotates too', async () => {
    const d = await start('metrics:read');
    await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: d.user_code } });
    const tok = (await poll(d.device_code)).json();
    const next = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tok.refresh_token, client_id: CLI_CLIENT_ID });
    expect(next.statusCode, next.body).toBe(200);
    expect((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tok.refresh_token, client_id: CLI_CLIENT_ID })).statusCode).toBe(400);
  });

  it('the user code accepts the separators and case a person may type', async () => {
    const d = await start('metrics:read');
    const typed = d.user_code.replace(/-/g, ' ').toLowerCase();
    const ok = await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: typed } });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('deny: polling answers access_denied', async () => {
    const d = await start('metrics:read');
    const res = await admin.call({ method: 'POST', url: '/api/v1/oauth/device/deny', payload: { user_code: d.user_code } });
    expect(res.statusCode, res.body).toBe(204);
    expect((await poll(d.device_code)).json().error).toBe('access_denied');
  });

  it('an unknown code is 404; approving needs a browser session with the CSRF header', async () => {
    expect((await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: 'BCDF-GHJK' } })).statusCode).toBe(404);
    const d = await start('metrics:read');
    const url = '/api/v1/oauth/device/approve';
    expect((await t.call({ method: 'POST', url, payload: { user_code: d.user_code }, key: null })).statusCode).toBe(401);
    expect((await t.call({ method: 'POST', url, payload: { user_code: d.user_code } })).statusCode).toBe(403);
    expect((await admin.call({ method: 'POST', url, payload: { user_code: d.user_code }, csrf: false })).statusCode).toBe(403);
    expect((await poll(d.device_code)).json().error).toBe('authorization_pending');
  });

  it('the person may grant fewer scopes than asked', async () => {
    const d = await start('metrics:read projects:read');
    const ok = await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: d.user_code, scopes: ['metrics:read'] } });
    expect(ok.json().scopes).toEqual(['metrics:read']);
    const tok = (await poll(d.device_code)).json();
    expect(tok.scope).toBe('metrics:read');
    expect((await withToken(t, tok.access_token, { url: '/api/v1/projects' })).statusCode).toBe(403);
    const bad = await admin.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: (await start('metrics:read')).user_code, scopes: ['audit:read'] } });
    expect(bad.statusCode).toBe(400);
  });
});
