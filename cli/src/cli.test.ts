import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from './testing/cli-test-env.js';
import { runInProcess, startFakeApi, stderrJson } from './testing/fake-api.js';

let api: CliTestEnv['api'];
let tmp: CliTestEnv['tmp'];
let env: CliTestEnv['env'];
beforeEach(async () => {
  ({ api, tmp, env } = await startCliTestEnv());
  api.on('GET', '/projects', { body: { projects: [{ id: 'p1', name: 'web', sampling_rate: 1, created_at: '2024-01-01T00:00:00Z' }], next_cursor: null } });
});
afterEach(() => stopCliTestEnv({ api, tmp }));

describe('argv parsing', () => {
  it('accepts global flags before and after the subcommand', async () => {
    const a = await runInProcess(['--api-key', 'k-before', 'projects', 'list'], { env });
    const b = await runInProcess(['projects', 'list', '--api-key=k-after', '--project', 'ignored'], { env });
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(api.requests.map((r) => r.headers['x-svc-api-key'])).toEqual(['k-before', 'k-after']);
  });

  it('the last of --json, -o and --output wins, in argv order', async () => {
    const cases: [string[], 'json' | 'table'][] = [
      [['--json', '-o', 'table'], 'table'],
      [['-o', 'table', '--json'], 'json'],
      [['--output=json', '--output', 'table'], 'table'],
      [['-otable', '--json', '-ojson', '--output', 'table'], 'table'],
      [['--json'], 'json'],
      [['-o', 'table'], 'table'],
    ];
    for (const [flags, want] of cases) {
      const placements = [
        ['projects', 'list', ...flags],
        [...flags, 'projects', 'list'],
        ['projects', ...flags, 'list'],
      ];
      for (const [tty, argv] of placements.flatMap((a) => [false, true].map((t) => [t, a] as const))) {
        const r = await runInProcess([...argv, '--no-color'], { env, stdoutTTY: tty });
        expect(r.code, flags.join(' ')).toBe(0);
        if (want === 'json') expect(JSON.parse(r.stdout).projects[0].id).toBe('p1');
        else expect(r.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+SAMPLING_RATE\s+CREATED_AT$/);
      }
    }
  });

  it('without an output flag: tables on a terminal, JSON when piped; no colour unless a terminal allows it', async () => {
    const piped = await runInProcess(['projects', 'list'], { env });
    expect(JSON.parse(piped.stdout)).toEqual({ projects: [expect.objectContaining({ id: 'p1' })], next_cursor: null });
    const tty = await runInProcess(['projects', 'list'], { env, stdoutTTY: true });
    expect(tty.stdout).toContain('\x1b[1m');
    expect((await runInProcess(['projects', 'list', '--no-color'], { env, stdoutTTY: true })).stdout).not.toContain('\x1b');
    expect((await runInProcess(['projects', 'list'], { env: { ...env, NO_COLOR: '1' }, stdoutTTY: true })).stdout).not.toContain('\x1b');
    expect((await runInProcess(['projects', 'list', '-o', 'table'], { env })).stdout).not.toContain('\x1b');
  });

  it('commander errors and bad flag values are usage errors (exit 2) as JSON on stderr', async () => {
    const cases = [
      ['projects', 'list', '--bogus'],
      ['projectz', 'list'],
      ['projects', 'use'],
      ['projects', 'list', '-o', 'yaml'],
      ['projects', 'list', 'extra'],
      ['projects', 'list', '--limit', '0'],
      ['projects', 'create'],
      ['projects', 'create', '--name', 'x', '--sampling-rate', '2'],
      ['projects'],
      [],
      ['--api-url', 'http://h/path', 'projects', 'list'],
    ];
    for (const args of cases) {
      const r = await runInProcess(args, { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      const err = stderrJson(r);
      expect(err.error).toBe('usage_error');
      expect(err.exit_code).toBe(2);
      expect(typeof err.message).toBe('string');
    }
    expect(api.requests).toHaveLength(0);
    expect(stderrJson(await runInProcess(['projects', 'list', '-o', 'yaml'], { env })).message).toContain('json, table');
  });

  it('--help and --version succeed on stdout', async () => {
    const h = await runInProcess(['--help'], { env });
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('Usage: svc');
    const sub = await runInProcess(['metrics', 'query', '--help'], { env });
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('--group-by');
    const v = await runInProcess(['--version'], { env });
    expect([v.code, v.stdout.trim()]).toEqual([0, '0.1.0']);
  });
});

describe('errors and exit codes', () => {
  it('no API key configured at all: exit 3 and nothing sent', async () => {
    const r = await runInProcess(['projects', 'list'], { env: { ...tmp.env, SVC_API_URL: api.url } });
    expect(r.code).toBe(3);
    expect(stderrJson(r)).toMatchObject({ error: 'unauthenticated', exit_code: 3 });
    expect(api.requests).toHaveLength(0);
  });

  it('maps API failures to exit codes and keeps the real status and Retry-After', async () => {
    const cases: [number, number, Record<string, string>?][] = [
      [400, 1],
      [401, 3],
      [403, 4],
      [404, 5],
      [409, 1],
      [429, 1, { 'retry-after': '12' }],
      [500, 1],
      [503, 1, { 'retry-after': '3' }],
    ];
    for (const [status, exit, headers] of cases) {
      api.on('GET', '/projects/p1', { status, body: { error: `e${status}`, message: `m${status}` }, headers });
      const r = await runInProcess(['projects', 'use', 'p1'], { env });
      expect(r.code, String(status)).toBe(exit);
      const err = stderrJson(r);
      expect(err).toEqual({
        error: `e${status}`,
        message: `m${status}`,
        exit_code: exit,
        status,
        ...(headers ? { retry_after: Number(headers['retry-after']) } : {}),
      });
    }
  });

  // Brief item 8: a command needing a project, none selected, an org-wide credential: say how to fix it, exit 2 (usage).
  it('the server\'s "project_id is required" 400 becomes a usage error (exit 2) naming --project, SVC_PROJECT, svc projects use and svc projects list', async () => {
    const body = { error: 'invalid_request', message: 'project_id is required for organization-level credentials' };
    api.on('POST', '/metrics/aggregate', { status: 400, body });
    api.on('GET', '/traces', { status: 400, body });
    for (const args of [['metrics', 'query', 'cpu'], ['traces', 'list']]) {
      const r = await runInProcess(args, { env });
      expect(r.code, args.join(' ')).toBe(2);
      const err = stderrJson(r);
      expect(err).toMatchObject({ error: 'project_required', exit_code: 2, status: 400 });
      for (const hint of ['--project', 'SVC_PROJECT', 'svc projects use', 'svc projects list']) expect(err.message).toContain(hint);
    }
    const tty = await runInProcess(['traces', 'list', '--no-color'], { env, stderrTTY: true });
    expect(tty.stderr).toMatch(/^svc: error: this command needs a project, and the credential is organization-wide: pass --project <id>, .*\(HTTP 400, project_required\)\n$/);
    // any other 400 stays an API error (exit 1)
    api.on('GET', '/traces', { status: 400, body: { error: 'invalid_request', message: 'since must be before until' } });
    expect((await runInProcess(['traces', 'list'], { env })).code).toBe(1);
  });

  it('an invalid JSON answer exits 1', async () => {
    api.on('GET', '/projects', { raw: 'not json' });
    const r = await runInProcess(['projects', 'list'], { env });
    expect(r.code).toBe(1);
    expect(stderrJson(r)).toMatchObject({ error: 'invalid_response', exit_code: 1, status: 200 });
  });

  it('a network failure is connection_failed, exit 1', async () => {
    const url = api.url;
    await api.close();
    const r = await runInProcess(['projects', 'list'], { env: { ...env, SVC_API_URL: url } });
    expect(r.code).toBe(1);
    expect(stderrJson(r)).toMatchObject({ error: 'connection_failed', exit_code: 1 });
    api = await startFakeApi();
  });

  it('on a terminal, errors are one readable line instead of JSON', async () => {
    api.on('GET', '/projects/nope', { status: 404, body: { error: 'not_found', message: 'project not found' } });
    const r = await runInProcess(['projects', 'use', 'nope', '--no-color'], { env, stderrTTY: true });
    expect(r.code).toBe(5);
    expect(r.stderr).toBe('svc: error: project not found (HTTP 404, not_found)\n');
    const u = await runInProcess(['projects', 'delete', 'p1', '--no-color'], { env, stderrTTY: true });
    expect(u.code).toBe(2);
    expect(u.stderr).toMatch(/^svc: error: .*--yes.*\n$/);
    const missing = await runInProcess(['projects'], { env, stderrTTY: true });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Usage: svc projects');
  });
});
