import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPath, updateProfile } from '../config.js';
import { ALL_SCOPES } from '../scopes.js';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import type { RecordedRequest } from '../testing/fake-api.js';
import { runInProcess, spawnSvc, stderrJson } from '../testing/fake-api.js';
import { SCOPE_PROFILES } from './agent.js';

const SECRET = 'svc_S3cretS3cretS3cretS3cretS3cretS3cretS3cr';
const INVESTIGATE = ['metrics:read', 'agents:read', 'governance:read', 'evals:read', 'scores:read', 'docs:read', 'projects:read'];
const EXPIRES = '2026-02-01T00:00:00.000Z';

let t: CliTestEnv;
let keychainDir: string;
beforeEach(async () => {
  t = await startCliTestEnv();
  t.api.on('POST', '/account/api-keys', (req) => created(req));
  t.api.on('POST', '/account/api-keys/k1/revoke', { body: { id: 'k1', status: 'revoked' } });
  keychainDir = join(t.tmp.dir, 'keychain');
  mkdirSync(keychainDir);
});
afterEach(() => stopCliTestEnv(t));

/** The server's 201 answer: the listing fields plus the secret. */
function created(req: RecordedRequest) {
  const b = req.body as { name: string; scopes: string[]; project_id?: string; org_wide?: boolean };
  return {
    status: 201,
    body: {
      id: 'k1',
      name: b.name,
      status: 'active',
      project_id: b.project_id ?? null,
      org_wide: b.org_wide === true,
      key_prefix: SECRET.slice(0, 12),
      scopes: b.scopes,
      expires_at: EXPIRES,
      last_used_at: null,
      created_at: '2026-01-02T00:00:00.000Z',
      revoked_at: null,
      user_id: null,
      created_by_api_key_id: 'k0',
      created_by_state: 'api_key',
      key: SECRET,
    },
  };
}

/** A PATH holding a fake `secret-tool` that records its arguments and standard input (or fails). */
function fakeKeychainEnv(opts: { fail?: boolean; bus?: boolean } = {}): Record<string, string> {
  const bin = join(t.tmp.dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const script = opts.fail
    ? '#!/bin/sh\necho "Cannot create an item in a locked collection" >&2\nexit 1\n'
    : `#!/bin/sh\nprintf '%s\\n' "$@" > "${keychainDir}/args"\n/bin/cat > "${keychainDir}/secret"\n`;
  writeFileSync(join(bin, 'secret-tool'), script);
  chmodSync(join(bin, 'secret-tool'), 0o755);
  return { ...t.env, PATH: bin, ...(opts.bus === false ? {} : { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus' }) };
}

const posts = () => t.api.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/account/api-keys');

describe('svc agent bootstrap', () => {
  it('defaults: "--expires-in (default 30d)", "--scope-profile (default investigate)", the active project, "--secret-dest (keychain default)"', async () => {
    const r = await runInProcess(['agent', 'bootstrap', '--agent', 'triage-bot'], { env: { ...fakeKeychainEnv(), SVC_PROJECT: 'p1' } });
    expect(r.code, r.stderr).toBe(0);
    expect(posts()[0].body).toEqual({ name: 'agent:triage-bot', scopes: INVESTIGATE, project_id: 'p1', expires_in_days: 30 });
    expect(JSON.parse(r.stdout)).toEqual({
      key_id: 'k1',
      name: 'agent:triage-bot',
      scopes: INVESTIGATE,
      project_id: 'p1',
      org_wide: false,
      expires_at: EXPIRES,
      secret_dest: 'keychain',
      host: 'none',
    });
    expect(r.stdout).not.toContain(SECRET);
    // secret-tool store --label=... service svc account <key id>, the secret on standard input.
    expect(readFileSync(join(keychainDir, 'args'), 'utf8').trim().split('\n')).toEqual([
      'store',
      '--label=svc API key agent:triage-bot',
      'service',
      'svc',
      'account',
      'k1',
    ]);
    expect(readFileSync(join(keychainDir, 'secret'), 'utf8')).toBe(SECRET);
  });

  it('"Active project precedence: --project, then SVC_PROJECT, then the profile"', async () => {
    updateProfile(configPath(t.env), 'default', 'project', 'p-profile');
    const run = (args: string[], env: Record<string, string> = t.env) =>
      runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout', ...args], { env });
    await run([]);
    await run([], { ...t.env, SVC_PROJECT: 'p-env' });
    await run(['--project', 'p-flag'], { ...t.env, SVC_PROJECT: 'p-env' });
    expect(posts().map((p) => (p.body as { project_id: string }).project_id)).toEqual(['p-profile', 'p-env', 'p-flag']);
  });

  it('--org-wide sends org_wide: true without a project; with --project, or with no project at all, it is a usage error', async () => {
    const ok = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--org-wide', '--secret-dest', 'stdout'], { env: { ...t.env, SVC_PROJECT: 'p1' } });
    expect(ok.code).toBe(0);
    expect(posts()[0].body).toEqual({ name: 'agent:a', scopes: INVESTIGATE, org_wide: true, expires_in_days: 30 });
    expect(JSON.parse(ok.stdout)).toMatchObject({ project_id: null, org_wide: true });

    const both = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--org-wide', '--project', 'p1', '--secret-dest', 'stdout'], { env: t.env });
    expect(both.code).toBe(2);
    const none = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout'], { env: t.env });
    expect(none.code).toBe(2);
    expect(stderrJson(none)).toMatchObject({ error: 'usage_error', message: expect.stringContaining('--org-wide') });
    expect(stderrJson(none).message).toContain('SVC_PROJECT');
    expect(posts()).toHaveLength(1);
  });

  it('"--scope (repeatable)" adds to the profile\'s scopes; --name replaces agent:<agent>; an unknown scope sends nothing', async () => {
    const env = { ...t.env, SVC_PROJECT: 'p1' };
    const base = ['agent', 'bootstrap', '--secret-dest', 'stdout'];
    await runInProcess([...base, '--agent', 'a', '--scope-profile', 'incident', '--scope', 'audit:read', '--scope', 'metrics:read', '--scope', 'members:write'], { env });
    expect((posts()[0].body as { scopes: string[] }).scopes).toEqual([...SCOPE_PROFILES.incident, 'audit:read', 'members:write']);
    expect(SCOPE_PROFILES.incident).toEqual([...INVESTIGATE, 'alerts:acknowledge', 'errors:write', 'quarantine:request']);

    await runInProcess([...base, '--agent', 'a', '--name', 'ci key', '--scope-profile', 'admin'], { env });
    expect(posts()[1].body).toMatchObject({ name: 'ci key', scopes: [...ALL_SCOPES] });
    await runInProcess([...base, '--name', 'obs', '--scope-profile', 'agent-observability'], { env });
    expect((posts()[2].body as { scopes: string[] }).scopes).toEqual([...INVESTIGATE, 'ingest:write', 'agents:write', 'evals:write', 'scores:write']);

    for (const args of [['--agent', 'a', '--scope', 'root:everything'], ['--agent', 'a', '--scope-profile', 'superuser'], []]) {
      const bad = await runInProcess([...base, ...args], { env });
      expect(bad.code, args.join(' ')).toBe(2);
      expect(stderrJson(bad).error).toBe('usage_error');
    }
    expect(posts()).toHaveLength(3);
  });

  it('"--expires-in (default 30d, max 365d)": 365d, 4w and 90 are accepted; 366d, 53w, 12h, 0 and 1.5d are usage errors and nothing is sent', async () => {
    const env = { ...t.env, SVC_PROJECT: 'p1' };
    const run = (v: string) => runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout', '--expires-in', v], { env });
    for (const v of ['365d', '4w', '90', '48h']) expect((await run(v)).code, v).toBe(0);
    expect(posts().map((p) => (p.body as { expires_in_days: number }).expires_in_days)).toEqual([365, 28, 90, 2]);
    for (const v of ['366d', '53w', '12h', '0', '1.5d', 'soon']) {
      const r = await run(v);
      expect(r.code, v).toBe(2);
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error', message: expect.stringContaining('--expires-in') });
    }
    expect(posts()).toHaveLength(4);
  });

  it('keychain unavailable: exit 1 "keychain_unavailable" naming env-file and stdout, and no key is minted', async () => {
    const cases: Record<string, string>[] = [
      { ...t.env, SVC_PROJECT: 'p1' }, // no PATH at all
      { ...t.env, SVC_PROJECT: 'p1', PATH: join(t.tmp.dir, 'empty') }, // no secret-tool on PATH
      { ...fakeKeychainEnv({ bus: false }), SVC_PROJECT: 'p1' }, // secret-tool but no session bus
    ];
    for (const env of cases) {
      const r = await runInProcess(['agent', 'bootstrap', '--agent', 'a'], { env });
      expect(r.code).toBe(1);
      const err = stderrJson(r);
      expect(err).toMatchObject({ error: 'keychain_unavailable', exit_code: 1 });
      expect(err.message).toContain('--secret-dest env-file');
      expect(err.message).toContain('--secret-dest stdout');
      expect(r.stdout).toBe('');
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('a keychain that refuses the secret: the minted key is revoked and the command exits 1', async () => {
    const r = await runInProcess(['agent', 'bootstrap', '--agent', 'a'], { env: { ...fakeKeychainEnv({ fail: true }), SVC_PROJECT: 'p1' } });
    expect(r.code).toBe(1);
    expect(stderrJson(r)).toMatchObject({ error: 'secret_store_failed', details: { key_id: 'k1', revoked: true } });
    expect(t.api.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['POST /api/v1/account/api-keys', 'POST /api/v1/account/api-keys/k1/revoke']);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('--env-path is --env-file for Node.js 20, which takes --env-file for itself: the real binary writes the file', async () => {
    const file = join(t.tmp.dir, 'node20.env');
    const r = await spawnSvc(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'env-file', '--env-path', file], { ...t.env, SVC_PROJECT: 'p1' });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain(`SVC_API_KEY=${SECRET}`);
    const both = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--env-file', 'x.env', '--env-path', 'y.env'], { env: { ...t.env, SVC_PROJECT: 'p1' } });
    expect(both.code).toBe(2);
  });

  it('env-file: SVC_API_KEY, SVC_API_URL and SVC_PROJECT in a 0600 file; an existing file is refused without --force before minting', async () => {
    const file = join(t.tmp.dir, 'agent.env');
    const env = { ...t.env, SVC_PROJECT: 'p1' };
    const r = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'env-file', '--env-file', file], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
    expect(lines).toEqual([`SVC_API_URL=${t.api.url}`, `SVC_API_KEY=${SECRET}`, 'SVC_PROJECT=p1']);
    expect(JSON.parse(r.stdout)).toMatchObject({ secret_dest: 'env-file', env_file: file });
    expect(JSON.parse(r.stdout).key).toBeUndefined();

    writeFileSync(file, 'KEEP=1\n', { mode: 0o644 });
    const refused = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--env-file', file, '--org-wide'], { env });
    expect(refused.code).toBe(2);
    expect(stderrJson(refused).message).toContain('--force');
    expect(readFileSync(file, 'utf8')).toBe('KEEP=1\n');
    expect(posts()).toHaveLength(1);

    // --env-file alone implies --secret-dest env-file; an org-wide key writes no SVC_PROJECT.
    const forced = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--env-file', file, '--org-wide', '--force'], { env });
    expect(forced.code, forced.stderr).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain('SVC_PROJECT');
    expect(readFileSync(file, 'utf8')).toContain(`SVC_API_KEY=${SECRET}`);

    const mixed = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--env-file', file, '--secret-dest', 'stdout'], { env });
    expect(mixed.code).toBe(2);
    expect(posts()).toHaveLength(2);
  });

  it('stdout: the secret is the "key" field in JSON and a SECRET line in a table', async () => {
    const env = { ...t.env, SVC_PROJECT: 'p1' };
    const json = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ key_id: 'k1', secret_dest: 'stdout', key: SECRET });
    const table = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout', '-o', 'table'], { env });
    expect(table.stdout.split('\n')).toContain(`SECRET      ${SECRET}`);
    expect(table.stdout.split('\n')).toContain('PROJECT     p1');
    expect(existsSync(join(process.cwd(), '.env.svc'))).toBe(false);
  });

  it('"--host" snippets reference SVC_API_KEY without --embed-secret and contain the secret with it', async () => {
    const env = { ...t.env, SVC_PROJECT: 'p1' };
    const mcp = `${t.api.url}/mcp`;
    const snippet = async (host: string, embed: boolean) => {
      const r = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout', '--host', host, ...(embed ? ['--embed-secret'] : [])], { env });
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.host).toBe(host);
      return out.snippet as string;
    };
    expect(JSON.parse(await snippet('claude-code', false))).toEqual({
      mcpServers: { svc: { type: 'http', url: mcp, headers: { Authorization: 'Bearer ${SVC_API_KEY}' } } },
    });
    expect(JSON.parse(await snippet('cursor', false))).toEqual({ mcpServers: { svc: { url: mcp, headers: { Authorization: 'Bearer ${env:SVC_API_KEY}' } } } });
    expect(JSON.parse(await snippet('vscode', false))).toEqual({
      servers: { svc: { type: 'http', url: mcp, headers: { Authorization: 'Bearer ${env:SVC_API_KEY}' } } },
    });
    expect(await snippet('codex', false)).toBe(`[mcp_servers.svc]\nurl = "${mcp}"\nbearer_token_env_var = "SVC_API_KEY"`);
    for (const host of ['claude-code', 'cursor', 'vscode', 'codex']) {
      const without = await snippet(host, false);
      expect(without).not.toContain(SECRET);
      expect(await snippet(host, true)).toContain(`Bearer ${SECRET}`);
    }
    expect(JSON.parse(await snippet('cursor', true)).mcpServers.svc.headers.Authorization).toBe(`Bearer ${SECRET}`);

    const none = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout'], { env });
    expect(JSON.parse(none.stdout)).not.toHaveProperty('snippet');
    const embedWithoutHost = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout', '--embed-secret'], { env });
    expect(embedWithoutHost.code).toBe(2);
    const table = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout', '--host', 'vscode', '-o', 'table'], { env });
    expect(table.stdout).toContain('# VS Code: add to .vscode/mcp.json\n{');
  });

  it('a scope the creator lacks: the server\'s 403 exits 4 with the JSON error and its status', async () => {
    t.api.on('POST', '/account/api-keys', {
      status: 403,
      body: { error: 'permission_denied', message: 'a key cannot grant scopes its creator lacks: api_key:write' },
    });
    const r = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--scope-profile', 'admin', '--secret-dest', 'stdout'], {
      env: { ...t.env, SVC_PROJECT: 'p1' },
    });
    expect(r.code).toBe(4);
    expect(stderrJson(r)).toEqual({
      error: 'permission_denied',
      message: 'a key cannot grant scopes its creator lacks: api_key:write',
      exit_code: 4,
      status: 403,
    });
    expect(r.stdout).toBe('');
  });

  it('without any API key it exits 3 and sends nothing', async () => {
    const { SVC_API_KEY: _, ...env } = t.env;
    const r = await runInProcess(['agent', 'bootstrap', '--agent', 'a', '--secret-dest', 'stdout', '--project', 'p1'], { env });
    expect(r.code).toBe(3);
    expect(t.api.requests).toHaveLength(0);
  });
});

describe('svc agent key env', () => {
  it('prints export lines for SVC_API_URL, SVC_API_KEY and SVC_PROJECT even when piped, and nothing else', async () => {
    const r = await runInProcess(['agent', 'key', 'env'], { env: { ...t.env, SVC_PROJECT: 'p1' }, stderrTTY: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`export SVC_API_URL=${t.api.url}\nexport SVC_API_KEY=test-key\nexport SVC_PROJECT=p1\n`);
    expect(r.stderr).toBe('');
    // Flag over env over profile; no project: no SVC_PROJECT line; values are shell-quoted.
    updateProfile(configPath(t.env), 'default', 'api_key', 'from-profile');
    const { SVC_API_KEY: _, ...noKeyEnv } = t.env;
    expect((await runInProcess(['agent', 'key', 'env'], { env: noKeyEnv })).stdout).toContain('export SVC_API_KEY=from-profile\n');
    const quoted = await runInProcess(['agent', 'key', 'env', '--api-key', "it's $HOME"], { env: t.env });
    expect(quoted.stdout).toBe(`export SVC_API_URL=${t.api.url}\nexport SVC_API_KEY='it'\\''s $HOME'\n`);
    expect(t.api.requests).toHaveLength(0);
  });

  it('--json prints the same settings as one object', async () => {
    const r = await runInProcess(['agent', 'key', 'env', '--json'], { env: { ...t.env, SVC_PROJECT: 'p1' }, stdoutTTY: true });
    expect(JSON.parse(r.stdout)).toEqual({ SVC_API_URL: t.api.url, SVC_API_KEY: 'test-key', SVC_PROJECT: 'p1' });
  });

  it('without an API key: exit 3 and an empty stdout', async () => {
    const { SVC_API_KEY: _, ...env } = t.env;
    const r = await runInProcess(['agent', 'key', 'env'], { env });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
  });
});
