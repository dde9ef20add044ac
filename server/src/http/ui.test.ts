/**
 * The web UI served at the root (http/ui.ts): its pages answer index.html for a browser, its built files are
 * cached for good, and none of it shadows the API (an unknown API path keeps the API's JSON 404; writes to a
 * page path are not pages). Driven with a small built-UI fixture (SVC_UI_DIR) so the test does not depend on
 * a build of web/.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../testing/app.js';

let t: TestApp;
let bare: TestApp;
let dir: string;
const INDEX = '<!doctype html><html><head><script type="module" src="/assets/app-abc123.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ui-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
  fs.writeFileSync(path.join(dir, 'assets', 'app-abc123.js'), SCRIPT);
  fs.writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  [t, bare] = await Promise.all([testApp({ env: { SVC_UI_DIR: dir } }), testApp({ env: { SVC_UI_DIR: 'none' } })]);
});
afterAll(async () => {
  await Promise.all([t?.close(), bare?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('web UI files', () => {
  it.each(['/', '/login', '/device', '/invitations/abc', '/oauth/consent/abc', '/p/some-project', '/p/x/runs/0123', '/settings/keys', '/settings'])(
    'GET %s answers the app page (no credential needed: the page signs in), with its security headers',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url: `${url}?next=%2F` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toBe(INDEX);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['x-frame-options']).toBe('DENY');
    },
  );

  it('a built file is cached for a year and answered compressed as the browser accepts', async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/assets/app-abc123.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.body).toBe(SCRIPT);
    const br = await t.app.inject({ method: 'GET', url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(SCRIPT);
    expect(br.rawPayload.length).toBeLessThan(SCRIPT.length / 10);
    const gz = await t.app.inject({ method: 'GET', url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(SCRIPT);
    const head = await t.app.inject({ method: 'HEAD', url: '/favicon.svg' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('image/svg+xml');
  });

  it('a missing built file, a traversal and a non-GET are the API\'s JSON 404, never index.html or a file outside the UI', async () => {
    for (const [method, url] of [
      ['GET', '/assets/nope.js'],
      ['GET', '/assets/../../package.json'],
      ['GET', '/assets/%2e%2e/%2e%2e/package.json'],
      ['GET', '/api/v1/nope'],
      ['GET', '/nope'],
      ['POST', '/'],
      ['DELETE', '/p/x'],
    ] as const) {
      const res = await t.app.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json(), `${method} ${url}`).toMatchObject({ error: 'not_found' });
    }
  });

  it('the API keeps its routes: a page path never shadows one, and API answers stay JSON', async () => {
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me' });
    expect(me.statusCode).toBe(401);
    expect(me.headers['content-type']).toMatch(/^application\/json/);
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.headers['content-type']).toMatch(/^application\/json/);
  });

  it("svc login's verification address (the OAuth library's code page) opens the UI's device page with the code", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/oauth/device?user_code=ABCD-EFGH' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/device?user_code=ABCD-EFGH');
    expect((await t.app.inject({ method: 'GET', url: '/oauth/device' })).headers.location).toBe('/device');
  });

  it('with no UI served, a page path says the UI is not built (503) and the OAuth code page is the library\'s', async () => {
    const res = await bare.app.inject({ method: 'GET', url: '/p/x' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm start');
    expect((await bare.app.inject({ method: 'GET', url: '/oauth/device' })).statusCode).toBe(200);
    expect((await bare.app.inject({ method: 'GET', url: '/api/v1/nope' })).statusCode).toBe(404);
  });
});
