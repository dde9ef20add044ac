/**
 * The authorization server keeps nothing that matters in memory: keys are made once and stored,
 * and a token, a grant or a pending device code issued by one node works on another (or after a
 * restart). Run on both control-store engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app.js';
import { buildContext } from '../../context.js';
import { DuckDbTelemetry } from '../../storage/telemetry/duckdb/engine.js';
import { testApp, type TestApp } from '../../testing/app.js';
import { connectAgent, tokenRequest, withToken } from '../../testing/oauth.js';
import { addPerson, signIn } from '../../testing/people.js';
import { loadOrCreateKeys, OAUTH_KEYS_META } from './keys.js';
import { CLI_CLIENT_ID } from './provider.js';

describe.each(['sqlite', 'postgres'] as const)('OAuth state on %s', (dialect) => {
  let t: TestApp;
  let second: FastifyInstance;
  let telemetry: DuckDbTelemetry;

  beforeAll(async () => {
    t = await testApp({ dialect });
    // A second node (or the same process after a restart) over the same control store.
    telemetry = await DuckDbTelemetry.open({ memory: true });
    second = await buildApp(buildContext({ config: t.ctx.config, control: t.ctx.control, telemetry }), { logger: false });
    await second.ready();
  });
  afterAll(async () => {
    await second.close();
    await telemetry.close();
    await t.close();
  });

  it('signing keys are generated once and then read back, never regenerated', async () => {
    await t.app.inject({ method: 'GET', url: '/oauth/jwks' });
    const stored = await t.ctx.control.organizations.getMeta(OAUTH_KEYS_META);
    expect(stored).toBeDefined();
    expect(await loadOrCreateKeys(t.ctx.control.organizations)).toEqual(JSON.parse(stored!));
    const a = (await t.app.inject({ method: 'GET', url: '/oauth/jwks' })).json();
    const b = (await second.inject({ method: 'GET', url: '/oauth/jwks' })).json();
    expect(a.keys.map((k: { kid: string }) => k.kid)).toEqual(b.keys.map((k: { kid: string }) => k.kid));
    expect(a.keys[0]).not.toHaveProperty('d'); // only public parts are published
  });

  it('a token and a refresh token issued by one node work on the other', async () => {
    const b = await signIn(t, await addPerson(t, 'member'));
    const { tokens, clientId } = await connectAgent(t, b, { scope: 'metrics:read' });
    const res = await second.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(res.statusCode, res.body).toBe(200);
    const refreshed = await second.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId }).toString(),
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect((await withToken(t, refreshed.json().access_token, { url: '/api/v1/users/me' })).statusCode).toBe(200);
  });

  it('a device code started on one node is approved and redeemed on the other', async () => {
    const d = (
      await second.inject({
        method: 'POST',
        url: '/oauth/device/auth',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: CLI_CLIENT_ID, scope: 'metrics:read' }).toString(),
      })
    ).json();
    const b = await signIn(t, await addPerson(t, 'member'));
    expect((await b.call({ method: 'POST', url: '/api/v1/oauth/device/approve', payload: { user_code: d.user_code } })).statusCode).toBe(200);
    const tok = await tokenRequest(t, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: d.device_code, client_id: CLI_CLIENT_ID });
    expect(tok.statusCode, tok.body).toBe(200);
  });
});
