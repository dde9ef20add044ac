/** OAuth flows in tests, driven over HTTP like a client and a browser would. */
import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import type { Browser } from './people.js';

export const REDIRECT_URI = 'http://127.0.0.1:9999/callback';

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Dynamic registration (RFC 7591) of a public client, as an agent does it. */
export async function registerClient(t: TestApp, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/oauth/reg',
    payload: {
      application_type: 'native',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'Test Agent',
      client_uri: 'https://agent.example.com/about',
      ...extra,
    },
  });
  if (res.statusCode !== 201) throw new Error(`registration failed: ${res.body}`);
  return res.json().client_id;
}

/** A form post to the token endpoint. */
export function tokenRequest(t: TestApp, form: Record<string, string>): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
}

const pathOf = (location: string) => {
  const u = new URL(location, 'http://localhost');
  return `${u.pathname}${u.search}`;
};

/** Starts an authorization in the browser; returns the consent step's uid and the PKCE verifier. */
export async function startAuthorization(b: Browser, clientId: string, opts: { scope: string; projectId?: string }) {
  const { verifier, challenge } = pkce();
  const q = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: opts.scope,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-1',
    ...(opts.projectId ? { project_id: opts.projectId } : {}),
  });
  const res = await b.call({ method: 'GET', url: `/oauth/auth?${q}` });
  expect(res.statusCode, res.body).toBe(303);
  const location = res.headers.location as string;
  const m = /^\/api\/v1\/oauth\/interactions\/([^/?]+)$/.exec(pathOf(location));
  expect(m, location).not.toBeNull();
  return { uid: m![1], verifier };
}

/** Follows `redirect_to` after approval to the client's redirect URI and reads the code. */
export async function finishAuthorization(b: Browser, redirectTo: string): Promise<URL> {
  const res = await b.call({ method: 'GET', url: pathOf(redirectTo) });
  expect(res.statusCode, res.body).toBe(303);
  return new URL(res.headers.location as string);
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope?: string;
  token_type: string;
}

/** The whole authorization-code flow with PKCE: start, approve as the signed-in person, redeem. */
export async function connectAgent(
  t: TestApp,
  b: Browser,
  opts: { clientId?: string; scope: string; projectId?: string; approve?: Record<string, unknown> },
): Promise<{ clientId: string; tokens: Tokens; connectionId: string }> {
  const clientId = opts.clientId ?? (await registerClient(t));
  const { uid, verifier } = await startAuthorization(b, clientId, opts);
  const ok = await b.call({ method: 'POST', url: `/api/v1/oauth/interactions/${uid}/approve`, payload: opts.approve ?? {} });
  expect(ok.statusCode, ok.body).toBe(200);
  const back = await finishAuthorization(b, ok.json().redirect_to);
  const code = back.searchParams.get('code');
  expect(code, back.href).toBeTruthy();
  const tok = await tokenRequest(t, { grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier });
  expect(tok.statusCode, tok.body).toBe(200);
  return { clientId, tokens: tok.json(), connectionId: ok.json().connection_id };
}

/** A request with an OAuth access token as bearer. */
export function withToken(t: TestApp, token: string, opts: { method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; payload?: unknown }) {
  return t.app.inject({ method: opts.method ?? 'GET', url: opts.url, payload: opts.payload as never, headers: { authorization: `Bearer ${token}` } });
}
