/**
 * End-to-end: spawns the real `cli/bin/svc.js` against a fake API (node:http) that records requests.
 * Standard output and error are pipes here, so output defaults to JSON and errors are JSON objects.
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPath } from './config.js';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from './testing/cli-test-env.js';
import { BIN, runInProcess, spawnSvc, stderrJson } from './testing/fake-api.js';

const P1 = { id: 'p1', name: 'web', sampling_rate: 1, created_at: '2024-01-01T00:00:00Z' };

let api: CliTestEnv['api'];
let tmp: CliTestEnv['tmp'];
let env: CliTestEnv['env'];
beforeEach(async () => {
  ({ api, tmp, env } = await startCliTestEnv());
  api.on('GET', '/projects', { body: { projects: [P1], next_cursor: null } });
});
afterEach(() => stopCliTestEnv({ api, tmp }));

describe('spec rules', () => {
  it('The client binary is named `svc`.', async () => {
    const pkg = JSON.parse(readFileSync(join(BIN, '..', '..', 'package.json'), 'utf8'));
    expect(pkg.bin).toEqual({ svc: 'bin/svc.js' });
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    accessSync(BIN, constants.X_OK);
    expect(statSync(BIN).mode & 0o111).not.toBe(0);
    const r = await spawnSvc(['--help'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: svc /);
    const e = await spawnSvc(['nope'], env);
    expect(e.code).toBe(2);
    expect(stderrJson(e).message).toMatch(/unknown command/);
  });

  it('Output: tables on a terminal, JSON when piped; `--output json|table` or `--json` (the last wins).', async () => {
    const piped = await spawnSvc(['projects', 'list'], env);
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toEqual({ projects: [P1], next_cursor: null });

    const table = await spawnSvc(['--json', 'projects', 'list', '-o', 'table'], env);
    expect(table.stdout).toBe(['ID  NAME  SAMPLING_RATE  CREATED_AT', 'p1  web   1              2024-01-01T00:00:00Z', ''].join('\n'));
    expect(table.stdout).not.toContain('\x1b'); // not a terminal: no colour

    const json = await spawnSvc(['-o', 'table', 'projects', 'list', '--json'], env);
    expect(JSON.parse(json.stdout).projects[0].id).toBe('p1');
    const json2 = await spawnSvc(['projects', 'list', '--output=table', '--output', 'json'], env);
    expect(JSON.parse(json2.stdout).projects[0].id).toBe('p1');

    // A terminal (no pty in tests, so in-process with a TTY stdout): a table by default, JSON on request.
    const tty = await runInProcess(['projects', 'list', '--no-color'], { env, stdoutTTY: true });
    expect(tty.stdout.split('\n')[0]).toMatch(/^ID\s+NAME/);
    const ttyJson = await runInProcess(['projects', 'list', '-o', 'table', '--json'], { env, stdoutTTY: true });
    expect(JSON.parse(ttyJson.stdout).projects).toHaveLength(1);
  });

  it('Destructive commands never prompt and need `--yes`.', async () => {
    api.on('DELETE', '/projects/p1', { status: 204 });
    api.on('DELETE', '/metrics/cpu', { status: 204 });
    // stdin stays open: a prompt would hang until the spawn timeout.
    for (const args of [
      ['projects', 'delete', 'p1'],
      ['metrics', 'delete', 'cpu', '--project', 'p1'],
    ]) {
      const r = await spawnSvc(args, env, { timeoutMs: 10_000 });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error', exit_code: 2, message: expect.stringContaining('--yes') });
    }
    expect(api.requests).toHaveLength(0);

    expect((await spawnSvc(['projects', 'delete', 'p1', '--yes'], env)).code).toBe(0);
    expect((await spawnSvc(['metrics', 'delete', 'cpu', '--yes', '--project', 'p1'], env)).code).toBe(0);
    expect(api.requests.map((r) => `${r.method} ${r.path}${r.search ? `?${r.search}` : ''}`)).toEqual([
      'DELETE /api/v1/projects/p1',
      'DELETE /api/v1/metrics/cpu?project_id=p1',
    ]);
  });

  it('Active project precedence: `--project`, then `SVC_PROJECT`, then the profile. A project-bound key conflicting with it fails with HTTP 403 before product logic, exit code 4.', async () => {
    // The fake server binds key "bound-p1" to project p1, like a project-scoped key.
    api.on('GET', '/metrics/names', (req) => {
      const project = req.query.project_id?.[0];
      if (req.headers['x-svc-api-key'] === 'bound-p1' && project !== undefined && project !== 'p1')
        return { status: 403, body: { error: 'permission_denied', message: 'API key is bound to another project' } };
      return { body: { metrics: [], total_count: 0, retrieved_at: '2024-06-01T12:00:00Z' } };
    });
    const profileOnly = await spawnSvc(['config', 'set', 'project', 'p-profile'], env);
    expect(profileOnly.code).toBe(0);

    await spawnSvc(['metrics', 'list'], env);
    await spawnSvc(['metrics', 'list'], { ...env, SVC_PROJECT: 'p-env' });
    await spawnSvc(['metrics', 'list', '--project', 'p-flag'], { ...env, SVC_PROJECT: 'p-env' });
    expect(api.requests.map((r) => r.query.project_id)).toEqual([['p-profile'], ['p-env'], ['p-flag']]);

    const conflict = await spawnSvc(['metrics', 'list', '--project', 'p2'], { ...env, SVC_API_KEY: 'bound-p1' });
    expect(conflict.code).toBe(4);
    expect(conflict.stdout).toBe('');
    expect(stderrJson(conflict)).toEqual({
      error: 'permission_denied',
      message: 'API key is bound to another project',
      exit_code: 4,
      status: 403,
    });
    const ok = await spawnSvc(['metrics', 'list', '--project', 'p1'], { ...env, SVC_API_KEY: 'bound-p1' });
    expect(ok.code).toBe(0);
  });

  it('Errors in non-interactive mode: one JSON object on standard error with `error`, `message`, `exit_code`; API failures add the real HTTP `status`', async () => {
    api.on('GET', '/projects/p1', {
      status: 503,
      body: { error: 'unavailable', message: 'storage is warming up' },
      headers: { 'retry-after': '7' },
    });
    const api503 = await spawnSvc(['projects', 'use', 'p1'], env);
    expect(api503.code).toBe(1);
    expect(stderrJson(api503)).toEqual({ error: 'unavailable', message: 'storage is warming up', exit_code: 1, status: 503, retry_after: 7 });

    api.on('GET', '/projects/p2', { status: 401, body: { error: 'unauthorized', message: 'authentication required' } });
    const api401 = await spawnSvc(['projects', 'use', 'p2'], env);
    expect([api401.code, stderrJson(api401)]).toEqual([3, { error: 'unauthorized', message: 'authentication required', exit_code: 3, status: 401 }]);

    const usage = await spawnSvc(['metrics', 'query', 'cpu', '--agg', 'mean'], env);
    expect([usage.code, Object.keys(stderrJson(usage)).sort()]).toEqual([2, ['error', 'exit_code', 'message']]);

    const noKey = await spawnSvc(['projects', 'list'], { ...tmp.env, SVC_API_URL: api.url });
    expect(stderrJson(noKey)).toMatchObject({ error: 'unauthenticated', exit_code: 3 });
    expect(noKey.code).toBe(3);

    const down = await spawnSvc(['projects', 'list', '--api-url', 'http://127.0.0.1:9'], env);
    expect(down.code).toBe(1);
    expect(stderrJson(down)).toMatchObject({ error: 'connection_failed', exit_code: 1 });
  });
});

describe('end to end', () => {
  it('metrics query sends the exact request with the key header', async () => {
    api.on('POST', '/metrics/aggregate', { body: { series: [{ labels: { env: 'prod' }, points: [{ timestamp: '2024-06-01T10:00:00Z', value: 4 }] }] } });
    const r = await spawnSvc(
      ['metrics', 'query', 'http.server.duration', '--agg', 'p99', '--interval', '1h', '--group-by', 'env', '--filter', 'env=prod', '--filter', 'env=dev',
        '--since', '2024-06-01T00:00:00Z', '--until', '2024-06-01T12:00:00Z', '--project', 'p1'],
      env,
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).series).toHaveLength(1);
    const req = api.requests[0];
    expect(req.method).toBe('POST');
    expect(`${req.path}?${req.search}`).toBe('/api/v1/metrics/aggregate?project_id=p1');
    expect(req.headers['x-svc-api-key']).toBe('test-key');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual({
      metric_name: 'http.server.duration',
      step: '1h',
      aggregation: 'p99',
      time_range: { start: '2024-06-01T00:00:00Z', end: '2024-06-01T12:00:00Z' },
      group_by: ['env'],
      filters: [{ key: 'env', values: ['prod', 'dev'] }],
    });
  });

  it('profiles: the flag beats SVC_API_KEY which beats the profile; the config file is 0600', async () => {
    const set = await spawnSvc(['config', 'set', 'api_key', 'profile-key-0123456789', '--profile', 'ci'], tmp.env);
    expect(set.code).toBe(0);
    expect(statSync(configPath(tmp.env)).mode & 0o777).toBe(0o600);
    await spawnSvc(['config', 'set', 'api_url', api.url, '--profile', 'ci'], tmp.env);
    await spawnSvc(['projects', 'list', '--profile', 'ci'], tmp.env);
    await spawnSvc(['projects', 'list'], { ...tmp.env, SVC_PROFILE: 'ci', SVC_API_KEY: 'env-key' });
    await spawnSvc(['projects', 'list', '--api-key', 'flag-key'], { ...tmp.env, SVC_PROFILE: 'ci', SVC_API_KEY: 'env-key' });
    expect(api.requests.map((r) => r.headers['x-svc-api-key'])).toEqual(['profile-key-0123456789', 'env-key', 'flag-key']);
    const got = await spawnSvc(['config', 'get', 'api_key', '--profile', 'ci'], tmp.env);
    expect(JSON.parse(got.stdout).value).toBe('profile-…');
  });

  it('a signal interrupts the command with exit code 1 and a JSON error', async () => {
    api.on('GET', '/metrics/names', { hang: true });
    const r = await spawnSvc(['metrics', 'list'], env, {
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (api.requests.length > 0) {
            clearInterval(timer);
            child.kill('SIGINT');
          }
        }, 20);
      },
    });
    expect(r.code).toBe(1);
    expect(stderrJson(r)).toMatchObject({ error: 'interrupted', exit_code: 1 });
  });
});
