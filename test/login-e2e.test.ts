/**
 * End to end over real HTTP: `svc login` through the device flow of the real server, approved by
 * a person signed in with a browser session; the stored session used (and refreshed) by later
 * commands; `svc logout` revoking it on the server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configPath } from '../cli/src/config.js';
import { spawnSvc, tempConfigHome } from '../cli/src/testing/fake-api.js';
import { startServer, stopServer, type ServerProcess } from '../server/src/testing/server-process.js';

const KEY = 'svc_login_e2e_owner_key_0123456789abcdef';
const PROJECT = '3b9e4f0c-1d2a-4e5b-8c7d-9a0b1c2d3e4f';
const EMAIL = 'ada-login-e2e@example.com';
const PASSWORD = 'correct horse battery staple';

describe('svc login / svc logout against the real server', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-login-e2e-'));
  const home = tempConfigHome();
  let server: ServerProcess;
  let env: Record<string, string>;
  /** The person's browser: the svc_session cookie of POST /api/v1/auth/login. */
  let cookie: string;

  const api = (p: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${server.base}/api/v1${p}`, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  const browser = (p: string, init: RequestInit = {}) => api(p, { ...init, headers: { cookie, 'x-svc-csrf': '1' } });
  const storedSession = () => JSON.parse(fs.readFileSync(configPath(env), 'utf8')).profiles.default?.session;

  beforeAll(async () => {
    server = await startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: KEY, SVC_INIT_PROJECT_ID: PROJECT });
    // No SVC_API_KEY: only the signed-in session can authenticate the CLI.
    env = { ...home.env, SVC_API_URL: server.base };

    const inv = await api('/invitations', { method: 'POST', headers: { 'x-svc-api-key': KEY }, body: JSON.stringify({ email: EMAIL, role: 'member' }) });
    expect(inv.status, await inv.clone().text()).toBe(201);
    const accepted = await api('/invitations/accept', { method: 'POST', body: JSON.stringify({ token: (await inv.json()).token, name: 'Ada', password: PASSWORD }) });
    expect(accepted.status, await accepted.clone().text()).toBe(201);

    const login = await api('/auth/login', { method: 'POST', body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
    expect(login.status, await login.clone().text()).toBe(200);
    const session = login.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
    expect(session).toBeDefined();
    cookie = session!.split(';')[0];
  });

  afterAll(async () => {
    await stopServer(server, dataDir);
    home.cleanup();
  });

  it('login (device flow approved in the browser), use and refresh the session, logout revokes it', async () => {
    // 1. `svc login --no-browser`; the code is read off its stderr and approved as the signed-in person.
    let approval: Promise<Response> | undefined;
    const loggedIn = await spawnSvc(['login', '--no-browser'], env, {
      timeoutMs: 25_000,
      onSpawn: (child) => {
        let err = '';
        child.stderr!.on('data', (s: string) => {
          err += s;
          const line = err.split('\n').find((l) => l.includes('"user_code"'));
          if (line && !approval) {
            const shown = JSON.parse(line) as { user_code: string; verification_uri: string; verification_uri_complete: string };
            expect(shown.verification_uri).toBe(`${server.base}/oauth/device`);
            expect(shown.verification_uri_complete).toContain(`user_code=${shown.user_code}`);
            approval = browser('/oauth/device/approve', { method: 'POST', body: JSON.stringify({ user_code: shown.user_code }) });
          }
        });
      },
    });
    expect(approval).toBeDefined();
    const approved = await approval!;
    expect(approved.status, await approved.clone().text()).toBe(200);
    const connectionId = (await approved.json()).connection_id as string;
    expect(loggedIn.code, loggedIn.stderr).toBe(0);
    const who = JSON.parse(loggedIn.stdout);
    expect(who).toMatchObject({ profile: 'default', api_url: server.base, user: { email: EMAIL, name: 'Ada' }, organization: { role: 'member' } });
    expect(who.scopes).toContain('projects:read');
    expect(who.scopes).not.toContain('audit:read'); // narrowed to what a member holds

    // 2. The stored session: 0600, for this server, never printed.
    const first = storedSession();
    expect(fs.statSync(configPath(env)).mode & 0o777).toBe(0o600);
    expect(first).toMatchObject({ api_url: server.base, access_token: expect.any(String), refresh_token: expect.any(String) });
    expect(first.scope.split(' ')).toEqual(expect.arrayContaining(['projects:read', 'offline_access']));
    expect(Date.parse(first.expires_at) - Date.now()).toBeGreaterThan(500_000);
    expect(loggedIn.stdout + loggedIn.stderr).not.toContain(first.access_token);
    expect(loggedIn.stdout + loggedIn.stderr).not.toContain(first.refresh_token);

    // 3. A command without any API key uses the session.
    const listed = await spawnSvc(['projects', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).projects.map((p: { id: string }) => p.id)).toEqual([PROJECT]);

    // 4. An access token about to expire is refreshed first; the rotated pair is stored.
    const file = JSON.parse(fs.readFileSync(configPath(env), 'utf8'));
    file.profiles.default.session.expires_at = new Date(Date.now() + 5_000).toISOString();
    fs.writeFileSync(configPath(env), JSON.stringify(file));
    const refreshed = await spawnSvc(['projects', 'list'], env);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const second = storedSession();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    const me = (token: string) => api('/users/me', { headers: { authorization: `Bearer ${token}` } });
    expect((await me(second.access_token)).status).toBe(200);

    // 5. Logout revokes on the server: the token is refused, the agent connection ends, the session is gone.
    const out = await spawnSvc(['logout'], env);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ profile: 'default', signed_out: true, revoked: true, api_url: server.base });
    expect(storedSession()).toBeUndefined();
    expect((await me(second.access_token)).status).toBe(401);
    const refresh = await fetch(`${server.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: second.refresh_token, client_id: 'svc-cli' }),
    });
    expect((await refresh.json()).error).toBe('invalid_grant');
    // The server ends the agent connection from an event of the OAuth library: give it a moment.
    const connectionStatus = async () =>
      ((await (await browser('/account/agent-connections')).json()).agent_connections as { id: string; status: string }[]).find((c) => c.id === connectionId)?.status;
    for (let i = 0; i < 20 && (await connectionStatus()) !== 'revoked'; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await connectionStatus()).toBe('revoked');

    const after = await spawnSvc(['projects', 'list'], env);
    expect(after.code).toBe(3);
    expect(JSON.parse(after.stderr.trim()).error).toBe('unauthenticated');
  });

  it('the OAuth library, used all through, printed no warning of its own (its "Unsupported runtime" line on Node 20 is dropped)', () => {
    expect(server.stderr()).not.toContain('oidc-provider WARNING');
    expect(server.stdout()).not.toContain('oidc-provider WARNING');
  });
});
