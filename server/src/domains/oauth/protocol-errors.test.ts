/**
 * Defect 4 (issue): "Protocol errors must follow RFC 6749 and 8628; nothing under our origin answers
 * 500 for bad input." The authorization server's routes, fed bad input, answer `{error,
 * error_description}` JSON (RFC 6749 §5.2, RFC 8628 §3.5); a path or method it does not serve is
 * our JSON 404/405; never a 500, never plain text or HTML for an error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../testing/app.js';
import { addPerson, signIn } from '../../testing/people.js';
import { CLI_CLIENT_ID } from './provider.js';

let t: TestApp;

beforeAll(async () => {
  t = await testApp({ env: { SVC_UI_DIR: 'none' } });
});
afterAll(async () => t.close());

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const json = { 'content-type': 'application/json' };
const big = 'x'.repeat(200_000);
const nested = `${'['.repeat(5000)}${']'.repeat(5000)}`;

type Req = { method: string; url: string; payload?: string; headers?: Record<string, string> };

/** A protocol error: RFC 6749 §5.2 fields only. */
function expectProtocolError(res: { statusCode: number; headers: Record<string, unknown>; body: string }, what: string, code?: string) {
  expect(res.statusCode, `${what}: ${res.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, what).toBeLessThan(500);
  expect(res.headers['content-type'], what).toMatch(/^application\/json/);
  const b = JSON.parse(res.body);
  expect(typeof b.error, what).toBe('string');
  for (const k of Object.keys(b)) expect(['error', 'error_description', 'state', 'scope'], `${what}: field ${k}`).toContain(k);
  if (code) expect(b.error, what).toBe(code);
}

describe('OAuth routes with bad input', () => {
  it('POST /oauth/device without the form cookie: 400 invalid_request in JSON, not a 500 (regression)', async () => {
    for (const headers of [form, { ...form, cookie: '_interaction=zzz; _session=garbage; _session.sig=bad' }]) {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/device', payload: 'xsrf=abc&user_code=ABCD-EFGH', headers });
      expectProtocolError(res, 'POST /oauth/device', 'invalid_request');
    }
  });

  it('GET /oauth/device/{code} with an unknown code: 400 invalid_request in JSON, not a 500 (regression)', async () => {
    for (const [url, cookie] of [['/oauth/device/abc', undefined], ['/oauth/device/abc', '_interaction_resume=zz; _interaction_resume.sig=zz'], [`/oauth/device/${'a'.repeat(900)}`, undefined]] as const) {
      const res = await t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
      expectProtocolError(res, url, 'invalid_request');
    }
  });

  it('what the library does not serve is a JSON 404/405, never plain text (regression)', async () => {
    for (const r of [
      { method: 'DELETE', url: '/oauth/reg/abc' },
      { method: 'PUT', url: '/oauth/reg/abc', payload: '{}', headers: json },
      { method: 'POST', url: '/oauth/auth', payload: 'client_id=nope', headers: form },
      { method: 'GET', url: '/oauth/nothing' },
      { method: 'GET', url: '/oauth' },
      { method: 'GET', url: '/oauth/token' },
      { method: 'OPTIONS', url: '/oauth/token' },
    ] as Req[]) {
      const res = await t.app.inject(r as never);
      const what = `${r.method} ${r.url}`;
      expect([404, 405], what).toContain(res.statusCode);
      expect(res.headers['content-type'], what).toMatch(/^application\/json/);
      expect(Object.keys(res.json()).sort(), what).toEqual(['error', 'message']);
    }
  });

  it('the library\'s error pages are JSON protocol errors (renderError), never HTML', async () => {
    const cases: [Req, string][] = [
      [{ method: 'GET', url: '/oauth/auth' }, 'invalid_request'],
      [{ method: 'GET', url: '/oauth/auth', headers: { accept: 'text/html' } }, 'invalid_request'],
      [{ method: 'GET', url: '/oauth/auth?client_id=nope&response_type=code' }, 'invalid_client'],
      [{ method: 'GET', url: '/oauth/auth?client_id=a&client_id=b' }, 'invalid_request'],
      [{ method: 'GET', url: '/oauth/auth?client_id=%zz' }, 'invalid_client'],
      [{ method: 'GET', url: '/oauth/auth/abc' }, 'invalid_request'],
      [{ method: 'GET', url: '/oauth/auth/abc', headers: { cookie: '_interaction_resume=zzz' } }, 'invalid_request'],
    ];
    for (const [r, code] of cases) expectProtocolError(await t.app.inject(r as never), `${r.method} ${r.url}`, code);
  });

  it('protocol endpoints: malformed, huge, nested, repeated and unknown input get RFC 6749 / 8628 errors', async () => {
    const cases: [Req, string?][] = [
      [{ method: 'POST', url: '/oauth/device', payload: '{bad', headers: json }],
      [{ method: 'POST', url: '/oauth/device', payload: `user_code=${big}`, headers: form }],
      [{ method: 'POST', url: '/oauth/token', payload: 'grant_type=x', headers: form }],
      [{ method: 'POST', url: '/oauth/token', payload: '{bad', headers: json }, 'invalid_request'],
      [{ method: 'POST', url: '/oauth/token', payload: `grant_type=${big}`, headers: form }, 'invalid_request'],
      [{ method: 'POST', url: '/oauth/token', payload: 'grant_type=refresh_token&grant_type=refresh_token', headers: form }],
      [{ method: 'POST', url: '/oauth/token', payload: `grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=zzz&client_id=${CLI_CLIENT_ID}`, headers: form }, 'invalid_grant'],
      [{ method: 'POST', url: '/oauth/token', payload: `grant_type=refresh_token&refresh_token=zzz&client_id=${CLI_CLIENT_ID}`, headers: form }, 'invalid_grant'],
      [{ method: 'POST', url: '/oauth/token', payload: 'x', headers: { authorization: 'Basic !!!', ...form } }, 'invalid_request'],
      [{ method: 'POST', url: '/oauth/token', payload: '' }],
      [{ method: 'POST', url: '/oauth/reg', payload: '{bad', headers: json }, 'invalid_request'],
      [{ method: 'POST', url: '/oauth/reg', payload: 'a=b', headers: form }, 'invalid_request'],
      [{ method: 'POST', url: '/oauth/reg', payload: JSON.stringify({ redirect_uris: [big] }), headers: json }],
      [{ method: 'POST', url: '/oauth/reg', payload: nested, headers: json }],
      [{ method: 'GET', url: '/oauth/reg/abc' }, 'invalid_token'],
      [{ method: 'GET', url: '/oauth/reg/abc', headers: { authorization: 'Bearer junk' } }, 'invalid_token'],
      [{ method: 'POST', url: '/oauth/token/revocation', payload: 'token=x', headers: form }, 'invalid_request'],
      [{ method: 'POST', url: '/oauth/device/auth', payload: 'client_id=nope', headers: form }, 'invalid_client'],
      [{ method: 'POST', url: '/oauth/device/auth', payload: '{bad', headers: json }, 'invalid_request'],
      [{ method: 'POST', url: '/oauth/request', payload: 'client_id=nope', headers: form }, 'invalid_client'],
    ];
    for (const [r, code] of cases) expectProtocolError(await t.app.inject(r as never), `${r.method} ${r.url} ${String(r.payload).slice(0, 30)}`, code);
  });

  it('concurrent identical bad requests: each gets the same JSON 400', async () => {
    const all = await Promise.all(
      Array.from({ length: 8 }, () => t.app.inject({ method: 'POST', url: '/oauth/device', payload: 'user_code=ABCD-EFGH', headers: form })),
    );
    for (const res of all) expectProtocolError(res, 'concurrent POST /oauth/device', 'invalid_request');
  });

  it('the user-code page still renders for a browser when no web UI is served (control; ui.test.ts: with one, the address opens its page)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/oauth/device' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('op.deviceInputForm');
  });

  it('our consent routes answer our shape for bad input: unknown, huge or garbage-cookie interactions, bad user codes', async () => {
    const person = await signIn(t, await addPerson(t, 'member'));
    const cases: Req[] = [
      { method: 'GET', url: '/api/v1/oauth/interactions/abc' },
      { method: 'GET', url: `/api/v1/oauth/interactions/${'a'.repeat(900)}` },
      { method: 'GET', url: '/api/v1/oauth/interactions/abc', headers: { cookie: '_interaction=zz; _interaction.sig=zz' } },
      { method: 'POST', url: '/api/v1/oauth/interactions/abc/approve', payload: '{}', headers: { ...json, cookie: '_interaction=zz' } },
      { method: 'POST', url: '/api/v1/oauth/interactions/abc/approve', payload: '{bad', headers: json },
      { method: 'POST', url: '/api/v1/oauth/interactions/abc/deny' },
      { method: 'GET', url: '/api/v1/oauth/device?user_code=zzz' },
      { method: 'GET', url: `/api/v1/oauth/device?user_code=${'A'.repeat(5000)}` },
      { method: 'POST', url: '/api/v1/oauth/device/approve', payload: JSON.stringify({ user_code: big }), headers: json },
      { method: 'POST', url: '/api/v1/oauth/device/approve', payload: JSON.stringify({ user_code: 'ABCD-EFGH', scopes: [nested] }), headers: json },
      { method: 'POST', url: '/api/v1/oauth/device/deny', payload: JSON.stringify({ user_code: '' }), headers: json },
    ];
    for (const r of cases) {
      const res = await person.call(r as never);
      const what = `${r.method} ${r.url.slice(0, 60)}`;
      expect(res.statusCode, `${what}: ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, what).toBeLessThan(500);
      expect(Object.keys(res.json()).filter((k) => k !== 'details').sort(), what).toEqual(['error', 'message']);
    }
  });
});
