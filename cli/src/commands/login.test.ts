/** `svc login` / `svc logout` and the signed-in session of the HTTP client, against the fake API. */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../scopes.js';
import { configPath, loadConfig, updateProfile, updateSession, type StoredSession } from '../config.js';
import { SessionAuth } from '../session.js';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, startFakeApi, stderrJson, type RecordedRequest } from '../testing/fake-api.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const ME = { id: 'u1', email: 'ada@example.com', name: 'Ada', organization: { id: 'org1', role: 'member' }, scopes: ['metrics:read', 'projects:read'] };
const P1 = { id: 'p1', name: 'web', sampling_rate: 1, created_at: '2024-01-01T00:00:00Z' };

let t: CliTestEnv;
/** The environment without any API key: only the session can authenticate. */
let env: Record<string, string>;
let sleeps: number[];
let opened: string[];
beforeEach(async () => {
  t = await startCliTestEnv();
  const { SVC_API_KEY: _key, ...rest } = t.env;
  env = rest;
  sleeps = [];
  opened = [];
});
afterEach(() => stopCliTestEnv(t));

const form = (req: RecordedRequest) => Object.fromEntries(new URLSearchParams(req.rawBody));
const oauthCalls = () => t.api.requests.filter((r) => r.path.startsWith('/oauth/'));
const cfgPath = () => configPath(env);
const stored = (profile = 'default') => loadConfig(cfgPath()).profiles[profile]?.session;
const bearer = (req: RecordedRequest) => req.headers.authorization;

const svc = (args: string[], opts: { env?: Record<string, string>; stderrTTY?: boolean; stdoutTTY?: boolean } = {}) =>
  runInProcess(args, {
    env: opts.env ?? env,
    now: NOW,
    stderrTTY: opts.stderrTTY,
    stdoutTTY: opts.stdoutTTY,
    sleep: async (ms) => void sleeps.push(ms),
    openUrl: async (url) => (opened.push(url), true),
  });

function session(over: Partial<StoredSession> = {}): StoredSession {
  return {
    access_token: 'at-old-0123456789',
    refresh_token: 'rt-old-0123456789',
    expires_at: new Date(NOW.getTime() + 5 * 60_000).toISOString(),
    scope: 'metrics:read projects:read offline_access',
    api_url: t.api.url,
    ...over,
  };
}

/** The device authorization endpoint and a token endpoint answering the device grant from `answers` in turn. */
function deviceFlow(answers: { status: number; body: unknown }[]) {
  t.api.on('POST', '/oauth/device/auth', {
    body: {
      device_code: 'dc-1',
      user_code: 'BCDF-GHJK',
      verification_uri: `${t.api.url}/oauth/device`,
      verification_uri_complete: `${t.api.url}/oauth/device?user_code=BCDF-GHJK`,
      expires_in: 600,
      interval: 5,
    },
  });
  let i = 0;
  t.api.on('POST', '/oauth/token', (req) => {
    expect(form(req)).toEqual({ grant_type: DEVICE_GRANT, device_code: 'dc-1', client_id: 'svc-cli' });
    return answers[Math.min(i++, answers.length - 1)];
  });
}

const TOKENS = { access_token: 'at-new-abcdefghijkl', refresh_token: 'rt-new-abcdefghijkl', token_type: 'Bearer', expires_in: 600, scope: 'metrics:read projects:read offline_access' };
const pending = { status: 400, body: { error: 'authorization_pending', error_description: 'authorization request is still pending' } };

describe('svc login', () => {
  it('polls through authorization_pending and slow_down (interval +5 s), then stores the session (0600) and shows who signed in', async () => {
    deviceFlow([pending, { status: 400, body: { error: 'slow_down' } }, pending, { status: 200, body: TOKENS }]);
    t.api.on('GET', '/users/me', (req) => (bearer(req) === `Bearer ${TOKENS.access_token}` ? { body: ME } : { status: 401, body: { error: 'unauthorized' } }));
    const r = await svc(['login', '--no-browser']);
    expect(r.code, r.stderr).toBe(0);
    expect(sleeps).toEqual([5000, 5000, 10_000, 10_000]);
    expect(opened).toEqual([]);

    const start = t.api.requests[0];
    expect(start.path).toBe('/oauth/device/auth');
    expect(start.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form(start)).toEqual({ client_id: 'svc-cli', scope: [...ALL_SCOPES, 'offline_access'].join(' ') });
    // Off a terminal, the URL and the code are one JSON object on stderr.
    expect(stderrJson(r)).toEqual({
      verification_uri: `${t.api.url}/oauth/device`,
      verification_uri_complete: `${t.api.url}/oauth/device?user_code=BCDF-GHJK`,
      user_code: 'BCDF-GHJK',
      expires_in: 600,
    });

    expect(JSON.parse(r.stdout)).toEqual({
      profile: 'default',
      api_url: t.api.url,
      user: { id: 'u1', email: 'ada@example.com', name: 'Ada' },
      organization: { id: 'org1', role: 'member' },
      scopes: ME.scopes,
      expires_at: '2026-03-01T12:10:00.000Z',
    });
    expect(stored()).toEqual({
      access_token: TOKENS.access_token,
      refresh_token: TOKENS.refresh_token,
      expires_at: '2026-03-01T12:10:00.000Z',
      scope: TOKENS.scope,
      api_url: t.api.url,
    });
    expect(statSync(cfgPath()).mode & 0o777).toBe(0o600);
    for (const secret of [TOKENS.access_token, TOKENS.refresh_token, 'dc-1']) expect(r.stdout + r.stderr).not.toContain(secret);

    // `svc config get` shows the session with masked tokens; it is not a settable key.
    const cfg = await svc(['config', 'get']);
    expect(JSON.parse(cfg.stdout).settings.session).toEqual({
      api_url: t.api.url,
      expires_at: '2026-03-01T12:10:00.000Z',
      scope: TOKENS.scope,
      access_token: 'at-new-a…',
      refresh_token: 'rt-new-a…',
    });
    const table = await svc(['config', 'get', '--no-color'], { stdoutTTY: true });
    expect(table.stdout).toContain(`session     signed in to ${t.api.url} (access token at-new-a…`);
    for (const out of [cfg.stdout, table.stdout]) for (const secret of [TOKENS.access_token, TOKENS.refresh_token]) expect(out).not.toContain(secret);
    expect((await svc(['config', 'set', 'session', '{}'])).code).toBe(2);
  });

  it('--profile NEW signs in to a profile that does not exist yet, creating it (only config set and login create one)', async () => {
    deviceFlow([{ status: 200, body: TOKENS }]);
    t.api.on('GET', '/users/me', () => ({ body: ME }));
    const r = await svc(['login', '--no-browser', '--profile', 'work']);
    expect(r.code, r.stderr).toBe(0);
    expect(stored('work')).toMatchObject({ access_token: TOKENS.access_token, refresh_token: TOKENS.refresh_token });
    expect(stored('default')).toBeUndefined();
  });

  it('on a terminal it says what to do and opens the page unless --no-browser; --scope narrows the request', async () => {
    deviceFlow([{ status: 200, body: TOKENS }]);
    t.api.on('GET', '/users/me', { body: ME });
    const r = await svc(['login', '--scope', 'metrics:read', 'projects:read', '--no-color'], { stderrTTY: true, stdoutTTY: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t.api.url}/oauth/device?user_code=BCDF-GHJK`);
    expect(r.stderr).toContain('approve the code BCDF-GHJK');
    expect(r.stderr).toContain('Opened the page in your browser');
    expect(opened).toEqual([`${t.api.url}/oauth/device?user_code=BCDF-GHJK`]);
    expect(form(t.api.requests[0]).scope).toBe('metrics:read projects:read offline_access');
    expect(r.stdout).toContain('Ada <ada@example.com>');
    expect(r.stdout + r.stderr).not.toContain(TOKENS.access_token);

    // An opener that fails is no error: the printed URL is the fallback.
    const failing = await runInProcess(['login'], { env, now: NOW, stderrTTY: true, sleep: async () => undefined, openUrl: async () => false });
    expect(failing.code).toBe(0);
    expect(failing.stderr).toContain('Could not open a browser');

    const bad = await svc(['login', '--scope', 'root:all']);
    expect(bad.code).toBe(2);
    expect(stderrJson(bad).message).toContain('unknown scope root:all');
  });

  it('expired_token ends the sign-in with exit 3 and stores nothing', async () => {
    deviceFlow([pending, { status: 400, body: { error: 'expired_token', error_description: 'device code is expired' } }]);
    const r = await svc(['login', '--no-browser']);
    expect(r.code).toBe(3);
    const err = JSON.parse(r.stderr.trim().split('\n').at(-1)!);
    expect(err).toMatchObject({ error: 'expired_token', exit_code: 3, message: expect.stringContaining('svc login') });
    expect(stored()).toBeUndefined();
  });

  it('access_denied ends the sign-in with a clear error', async () => {
    deviceFlow([{ status: 400, body: { error: 'access_denied', error_description: 'the person denied the request' } }]);
    const r = await svc(['login', '--no-browser'], { stderrTTY: true });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('the sign-in was denied in the browser');
    expect(stored()).toBeUndefined();
  });

  it('gives up on the device code once it has expired without asking again', async () => {
    t.api.on('POST', '/oauth/device/auth', { body: { device_code: 'dc-1', user_code: 'X', verification_uri: `${t.api.url}/oauth/device`, expires_in: 12 } });
    t.api.on('POST', '/oauth/token', pending);
    const r = await svc(['login', '--no-browser']);
    expect(r.code).toBe(3);
    expect(sleeps).toEqual([5000, 5000, 5000]); // default interval 5 s; the third poll already passes 12 s
    expect(JSON.parse(r.stderr.trim().split('\n').at(-1)!).error).toBe('expired_token');
  });

  it('a new login revokes the session it replaces', async () => {
    updateSession(cfgPath(), 'default', session());
    deviceFlow([{ status: 200, body: TOKENS }]);
    const revoked: Record<string, string>[] = [];
    t.api.on('POST', '/oauth/token/revocation', (req) => (revoked.push(form(req)), { status: 200 }));
    t.api.on('GET', '/users/me', { body: ME });
    expect((await svc(['login', '--no-browser'])).code).toBe(0);
    expect(revoked.map((f) => f.token)).toEqual(['rt-old-0123456789', 'at-old-0123456789']);
    expect(stored()?.access_token).toBe(TOKENS.access_token);
  });
});

describe('the signed-in session in requests', () => {
  const refreshTo = (access: string, refresh: string) => (req: RecordedRequest) => {
    const f = form(req);
    expect(f).toMatchObject({ grant_type: 'refresh_token', client_id: 'svc-cli' });
    return { body: { access_token: access, refresh_token: refresh, token_type: 'Bearer', expires_in: 600, scope: 'projects:read offline_access', used: f.refresh_token } };
  };

  it('sends the access token as a bearer token and no API key', async () => {
    updateSession(cfgPath(), 'default', session());
    t.api.on('GET', '/projects', { body: { projects: [P1], next_cursor: null } });
    const r = await svc(['projects', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(bearer(t.api.requests[0])).toBe('Bearer at-old-0123456789');
    expect(t.api.requests[0].headers['x-svc-api-key']).toBeUndefined();
    expect(oauthCalls()).toHaveLength(0);
  });

  it('refreshes first when the access token expires within 30 s, saving the rotated pair before using it', async () => {
    updateProfile(cfgPath(), 'default', 'project', 'p1');
    updateSession(cfgPath(), 'default', session({ expires_at: new Date(NOW.getTime() + 20_000).toISOString() }));
    t.api.on('POST', '/oauth/token', refreshTo('at-2-0123456789', 'rt-2-0123456789'));
    t.api.on('GET', '/projects', (req) => {
      // By the time the new token is used it is already on disk.
      expect(stored()?.access_token).toBe('at-2-0123456789');
      return { body: { projects: [P1], next_cursor: null, auth: bearer(req) } };
    });
    const r = await svc(['projects', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(form(t.api.requests[0]).refresh_token).toBe('rt-old-0123456789');
    expect(bearer(t.api.requests[1])).toBe('Bearer at-2-0123456789');
    expect(stored()).toEqual({
      access_token: 'at-2-0123456789',
      refresh_token: 'rt-2-0123456789',
      expires_at: '2026-03-01T12:10:00.000Z',
      scope: 'projects:read offline_access',
      api_url: t.api.url,
    });
    expect(loadConfig(cfgPath()).profiles.default.project).toBe('p1');
    expect(statSync(cfgPath()).mode & 0o777).toBe(0o600);
    expect(r.stdout + r.stderr).not.toContain('0123456789');
  });

  it('after a 401 it refreshes once and retries once', async () => {
    updateSession(cfgPath(), 'default', session());
    t.api.on('POST', '/oauth/token', refreshTo('at-2-0123456789', 'rt-2-0123456789'));
    t.api.on('GET', '/projects', (req) =>
      bearer(req) === 'Bearer at-2-0123456789' ? { body: { projects: [P1], next_cursor: null } } : { status: 401, body: { error: 'unauthorized', message: 'authentication required' } },
    );
    const r = await svc(['projects', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(t.api.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/v1/projects', 'POST /oauth/token', 'GET /api/v1/projects']);
    expect(stored()?.refresh_token).toBe('rt-2-0123456789');

    // A second 401 after the refresh is final: exit 3, no loop.
    t.api.on('GET', '/projects', { status: 401, body: { error: 'unauthorized', message: 'authentication required' } });
    const again = await svc(['projects', 'list']);
    expect(again.code).toBe(3);
    expect(stderrJson(again)).toMatchObject({ error: 'unauthenticated', status: 401, message: expect.stringContaining('svc login') });
    expect(t.api.requests.slice(3).map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/v1/projects', 'POST /oauth/token', 'GET /api/v1/projects']);
  });

  it('a refused refresh (invalid_grant) exits 3 asking to sign in again, and keeps the stored session', async () => {
    const before = session({ expires_at: new Date(NOW.getTime() - 1000).toISOString() });
    updateSession(cfgPath(), 'default', before);
    t.api.on('POST', '/oauth/token', { status: 400, body: { error: 'invalid_grant', error_description: 'grant request is invalid' } });
    const r = await svc(['projects', 'list']);
    expect(r.code).toBe(3);
    expect(stderrJson(r)).toMatchObject({ error: 'session_expired', exit_code: 3, message: expect.stringContaining('svc login') });
    expect(t.api.requests.filter((q) => q.path.startsWith('/api/'))).toHaveLength(0);
    expect(stored()).toEqual(before);
  });

  it('uses the pair another svc process rotated meanwhile instead of presenting a used refresh token', async () => {
    const old = session({ expires_at: new Date(NOW.getTime() - 1000).toISOString() });
    const fresh = session({ access_token: 'at-other-0123456789', refresh_token: 'rt-other-0123456789', expires_at: new Date(NOW.getTime() + 600_000).toISOString() });
    updateSession(cfgPath(), 'default', fresh);
    const auth = new SessionAuth({
      configPath: cfgPath(),
      profile: 'default',
      session: old,
      deps: { fetch, now: () => NOW, sleep: async () => undefined },
    });
    expect(await auth.token()).toBe('at-other-0123456789');
    expect(t.api.requests).toHaveLength(0);
  });
});

describe('the stored session in the config file', () => {
  it('must be an object of strings (a broken one is a config error, exit 1)', async () => {
    mkdirSync(dirname(cfgPath()), { recursive: true });
    for (const bad of ['"x"', '[]', '{"access_token": 5}', JSON.stringify({ ...session(), scope: null })]) {
      writeFileSync(cfgPath(), `{"profiles": {"default": {"session": ${bad}}}}`);
      const r = await svc(['projects', 'list']);
      expect(r.code, bad).toBe(1);
      expect(stderrJson(r)).toMatchObject({ error: 'config_error', message: expect.stringContaining('profiles.default.session') });
    }
    writeFileSync(cfgPath(), JSON.stringify({ profiles: { default: { session: session() } } }));
    expect(stored()).toEqual(session());
  });
});

describe('credential precedence', () => {
  beforeEach(() => {
    updateProfile(cfgPath(), 'default', 'api_key', 'profile-key');
    t.api.on('GET', '/projects', { body: { projects: [P1], next_cursor: null } });
  });
  const creds = (req: RecordedRequest) => ({ key: req.headers['x-svc-api-key'], bearer: bearer(req) });

  it('--api-key, then SVC_API_KEY, then the session, then the profile api_key', async () => {
    updateSession(cfgPath(), 'default', session());
    expect((await svc(['projects', 'list', '--api-key', 'flag-key'], { env: { ...env, SVC_API_KEY: 'env-key' } })).code).toBe(0);
    expect((await svc(['projects', 'list'], { env: { ...env, SVC_API_KEY: 'env-key' } })).code).toBe(0);
    expect((await svc(['projects', 'list'])).code).toBe(0);
    updateSession(cfgPath(), 'default', undefined);
    expect((await svc(['projects', 'list'])).code).toBe(0);
    expect(t.api.requests.map(creds)).toEqual([
      { key: 'flag-key', bearer: undefined },
      { key: 'env-key', bearer: undefined },
      { key: undefined, bearer: 'Bearer at-old-0123456789' },
      { key: 'profile-key', bearer: undefined },
    ]);
  });

  it('a session made for another API URL is never sent', async () => {
    updateSession(cfgPath(), 'default', session({ api_url: 'http://127.0.0.1:9' }));
    expect((await svc(['projects', 'list'])).code).toBe(0);
    expect(creds(t.api.requests[0])).toEqual({ key: 'profile-key', bearer: undefined });
    updateProfile(cfgPath(), 'default', 'api_key', undefined);
    const r = await svc(['projects', 'list']);
    expect(r.code).toBe(3);
    expect(stderrJson(r)).toMatchObject({ error: 'unauthenticated', message: expect.stringContaining('signed in to http://127.0.0.1:9') });
    expect(t.api.requests).toHaveLength(1);
  });
});

describe('svc logout', () => {
  it('revokes the refresh token, then the access token, then removes the session (other settings stay)', async () => {
    updateProfile(cfgPath(), 'default', 'project', 'p1');
    updateSession(cfgPath(), 'default', session());
    t.api.on('POST', '/oauth/token/revocation', (req) => {
      expect(stored()).toBeDefined(); // still stored while revoking
      return { status: 200, raw: '' };
    });
    const r = await svc(['logout']);
    expect(r.code, r.stderr).toBe(0);
    expect(oauthCalls().map(form)).toEqual([
      { token: 'rt-old-0123456789', token_type_hint: 'refresh_token', client_id: 'svc-cli' },
      { token: 'at-old-0123456789', token_type_hint: 'access_token', client_id: 'svc-cli' },
    ]);
    expect(JSON.parse(r.stdout)).toEqual({ profile: 'default', signed_out: true, revoked: true, api_url: t.api.url });
    expect(loadConfig(cfgPath()).profiles.default).toEqual({ project: 'p1' });
    expect(r.stdout + r.stderr).not.toContain('0123456789');
  });

  it('keeps the session and exits non-zero when the server cannot revoke it (5xx or unreachable)', async () => {
    const s = session();
    updateSession(cfgPath(), 'default', s);
    t.api.on('POST', '/oauth/token/revocation', { status: 503, body: { error: 'server_error' }, headers: { 'retry-after': '1' } });
    const down = await svc(['logout']);
    expect(down.code).toBe(1);
    expect(stderrJson(down)).toMatchObject({ error: 'revocation_failed', status: 503, retry_after: 1, message: expect.stringContaining('--forget') });
    expect(stored()).toEqual(s);

    const dead = await startFakeApi();
    const url = dead.url;
    await dead.close();
    updateSession(cfgPath(), 'default', session({ api_url: url }));
    const unreachable = await svc(['logout']);
    expect(unreachable.code).toBe(1);
    expect(stderrJson(unreachable)).toMatchObject({ error: 'revocation_failed', message: expect.stringContaining(`cannot reach ${url}`) });
    expect(stored()?.api_url).toBe(url);
  });

  it('--forget removes the session without contacting the server', async () => {
    updateSession(cfgPath(), 'default', session());
    const r = await svc(['logout', '--forget']);
    expect(r.code).toBe(0);
    expect(t.api.requests).toHaveLength(0);
    expect(JSON.parse(r.stdout)).toEqual({ profile: 'default', signed_out: true, revoked: false, api_url: t.api.url });
    expect(stored()).toBeUndefined();
  });

  it('without a session: exit 0, "not signed in", nothing sent', async () => {
    const r = await svc(['logout']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ signed_out: false, note: 'not signed in' });
    const tty = await svc(['logout', '--profile', 'default'], { stdoutTTY: true });
    expect(tty.stdout).toBe('Not signed in (profile "default"): nothing to do.\n');
    // An unknown profile is an error, not an empty one (exit 2).
    expect((await svc(['logout', '--profile', 'other'])).code).toBe(2);
    expect(t.api.requests).toHaveLength(0);
    expect(() => readFileSync(cfgPath())).toThrow(); // nothing was written either
  });
});
