import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPath, updateProfile } from '../config.js';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, stderrJson } from '../testing/fake-api.js';

const P1 = { id: 'p1', name: 'web', sampling_rate: 1, created_at: '2024-01-01T00:00:00Z' };
const P2 = { id: 'p2', name: 'batch', sampling_rate: 0.5, created_at: '2024-01-02T00:00:00Z' };

let api: CliTestEnv['api'];
let tmp: CliTestEnv['tmp'];
let env: CliTestEnv['env'];
beforeEach(async () => {
  ({ api, tmp, env } = await startCliTestEnv());
});
afterEach(() => stopCliTestEnv({ api, tmp }));

describe('svc projects', () => {
  it('list forwards --limit/--cursor and prints next_cursor; --all follows the cursors', async () => {
    api.on('GET', '/projects', (req) =>
      req.query.cursor?.[0] === 'c2'
        ? { body: { projects: [P2], next_cursor: null } }
        : { body: { projects: [P1], next_cursor: 'c2' } },
    );
    const one = await runInProcess(['projects', 'list', '--limit', '1'], { env });
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({ projects: [P1], next_cursor: 'c2' });
    expect(api.requests[0].search).toBe('limit=1');
    const all = await runInProcess(['projects', 'list', '--all', '--limit', '1'], { env });
    expect(JSON.parse(all.stdout)).toEqual({ projects: [P1, P2], next_cursor: null });
    expect(api.requests.slice(1).map((r) => r.search)).toEqual(['limit=1', 'limit=1&cursor=c2']);
    const table = await runInProcess(['projects', 'list', '-o', 'table'], { env });
    expect(table.stdout).toBe(['ID  NAME  SAMPLING_RATE  CREATED_AT', 'p1  web   1              2024-01-01T00:00:00Z', ''].join('\n'));
  });

  it('create sends {name, sampling_rate?}', async () => {
    api.on('POST', '/projects', (req) => ({ status: 201, body: { ...P1, ...(req.body as object) } }));
    const r = await runInProcess(['projects', 'create', '--name', 'web', '--sampling-rate', '0.25'], { env });
    expect(r.code).toBe(0);
    expect(api.requests[0].body).toEqual({ name: 'web', sampling_rate: 0.25 });
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'p1', name: 'web', sampling_rate: 0.25 });
    await runInProcess(['projects', 'create', '--name', 'only'], { env });
    expect(api.requests[1].body).toEqual({ name: 'only' });
  });

  // Issue: "Take names as arguments (`svc projects create NAME`)"; --name keeps working.
  it('create takes the name as its argument', async () => {
    api.on('POST', '/projects', (req) => ({ status: 201, body: { ...P1, ...(req.body as object) } }));
    const r = await runInProcess(['projects', 'create', 'my shop', '--sampling-rate', '1'], { env });
    expect(r.code).toBe(0);
    expect(api.requests[0].body).toEqual({ name: 'my shop', sampling_rate: 1 });
    expect((await runInProcess(['projects', 'create', 'same', '--name', 'same'], { env })).code).toBe(0);
    expect(api.requests[1].body).toEqual({ name: 'same' });
    for (const args of [['projects', 'create'], ['projects', 'create', ''], ['projects', 'create', 'a', '--name', 'b'], ['projects', 'create', 'a', 'b']]) {
      const bad = await runInProcess(args, { env });
      expect(bad.code, args.join(' ')).toBe(2);
      expect(stderrJson(bad)).toMatchObject({ error: 'usage_error', exit_code: 2 });
    }
    expect(api.requests).toHaveLength(2);
  });

  it('update sends only the given fields and needs at least one', async () => {
    api.on('PATCH', '/projects/p 1', (req) => ({ body: { ...P1, ...(req.body as object) } }));
    const r = await runInProcess(['projects', 'update', 'p 1', '--sampling-rate', '0'], { env });
    expect(r.code).toBe(0);
    expect(api.requests[0].path).toBe('/api/v1/projects/p%201');
    expect(api.requests[0].body).toEqual({ sampling_rate: 0 });
    const none = await runInProcess(['projects', 'update', 'p1'], { env });
    expect(none.code).toBe(2);
    expect(stderrJson(none)).toMatchObject({ error: 'usage_error', exit_code: 2 });
    expect(api.requests).toHaveLength(1);
  });

  it('delete needs --yes, then sends DELETE', async () => {
    api.on('DELETE', '/projects/p1', { status: 204 });
    const refused = await runInProcess(['projects', 'delete', 'p1'], { env });
    expect(refused.code).toBe(2);
    expect(api.requests).toHaveLength(0);
    const r = await runInProcess(['projects', 'delete', 'p1', '--yes'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ deleted: true, id: 'p1' });
    expect(api.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['DELETE /api/v1/projects/p1']);
  });

  it('use verifies the project with GET, then stores it in the active profile', async () => {
    api.on('GET', '/projects/p1', { body: P1 });
    // An unknown profile is an error, not an empty one: only `svc config set` creates one.
    const unknown = await runInProcess(['projects', 'use', 'p1', '--profile', 'staging'], { env });
    expect(unknown.code).toBe(2);
    expect(api.requests).toHaveLength(0);
    expect((await runInProcess(['config', 'set', 'project', 'p0', '--profile', 'staging'], { env })).code).toBe(0);
    const r = await runInProcess(['projects', 'use', 'p1', '--profile', 'staging'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ profile: 'staging', project: P1 });
    expect(api.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/v1/projects/p1']);
    expect(JSON.parse(readFileSync(configPath(tmp.env), 'utf8'))).toEqual({ profiles: { staging: { project: 'p1' } } });

    const missing = await runInProcess(['projects', 'use', 'nope', '--profile', 'staging'], { env });
    expect(missing.code).toBe(5);
    expect(JSON.parse(readFileSync(configPath(tmp.env), 'utf8')).profiles.staging.project).toBe('p1');
  });

  it('use says when SVC_PROJECT (or --project) still takes precedence, also in JSON', async () => {
    api.on('GET', '/projects/p1', { body: P1 });
    const r = await runInProcess(['projects', 'use', 'p1'], { env: { ...env, SVC_PROJECT: 'p9' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ profile: 'default', project: P1, overridden_by: 'SVC_PROJECT', active_project_id: 'p9' });
  });

  it('current prints the active project and where it came from, or {project: null}', async () => {
    const none = await runInProcess(['projects', 'current'], { env });
    expect([none.code, JSON.parse(none.stdout)]).toEqual([0, { project: null }]);
    const noneTable = await runInProcess(['projects', 'current'], { env, stdoutTTY: true });
    expect(noneTable.stdout).toMatch(/no active project is set/i);
    expect(api.requests).toHaveLength(0);

    api.on('GET', '/projects/p1', { body: P1 });
    api.on('GET', '/projects/p2', { body: P2 });
    updateProfile(configPath(tmp.env), 'default', 'project', 'p1');
    expect(JSON.parse((await runInProcess(['projects', 'current'], { env })).stdout)).toEqual({ project: P1, source: 'profile' });
    const fromEnv = await runInProcess(['projects', 'current'], { env: { ...env, SVC_PROJECT: 'p2' } });
    expect(JSON.parse(fromEnv.stdout)).toEqual({ project: P2, source: 'env' });
    const fromFlag = await runInProcess(['projects', 'current', '--project', 'p1', '-o', 'table'], { env: { ...env, SVC_PROJECT: 'p2' } });
    expect(fromFlag.stdout).toMatch(/SOURCE\n.*p1\s+web.*flag\n$/);
  });
});
