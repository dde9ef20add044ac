/** `svc projects retention get|set` (docs/retention.md): the windows of a project, against a fake API. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, stderrJson } from '../testing/fake-api.js';

const W = { project_id: 'p1', windows: [{ signal: 'SIGNAL_SPANS', retention_days: 30, updated_by: { api_key_id: 'k1' }, updated_at: '2026-03-10T12:00:00.000Z' }] };

let api: CliTestEnv['api'];
let tmp: CliTestEnv['tmp'];
let env: CliTestEnv['env'];
beforeEach(async () => {
  ({ api, tmp, env } = await startCliTestEnv());
});
afterEach(() => stopCliTestEnv({ api, tmp }));

describe('svc projects retention', () => {
  it('get reads the windows of the project given, else of the active one; as JSON or a table', async () => {
    api.on('GET', '/projects/p1/retention', { body: W });
    api.on('GET', '/projects/p2/retention', { body: { project_id: 'p2', windows: [] } });
    const r = await runInProcess(['projects', 'retention', 'get', 'p1'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(W);
    const table = await runInProcess(['projects', 'retention', 'get', '-o', 'table'], { env: { ...env, SVC_PROJECT: 'p1' } });
    expect(table.stdout).toBe(['SIGNAL        DAYS  UPDATED_AT', 'SIGNAL_SPANS  30    2026-03-10T12:00:00.000Z', ''].join('\n'));
    const none = await runInProcess(['projects', 'retention', 'get', 'p2', '-o', 'table'], { env });
    expect(none.stdout).toBe('Project p2 has no retention window: every signal is kept\n');
    expect(api.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/v1/projects/p1/retention', 'GET /api/v1/projects/p1/retention', 'GET /api/v1/projects/p2/retention']);
  });

  it('set sends the whole set: flags per signal, --none, or a JSON body (object or list)', async () => {
    api.on('PUT', '/projects/p1/retention', (req) => ({ body: { project_id: 'p1', windows: (req.body as { windows: unknown[] }).windows } }));
    for (const args of [
      ['--spans', '30', '--logs', '7'],
      ['--metrics', '3650'],
      ['--none'],
      ['--body', '[{"signal":"SIGNAL_LOGS","retention_days":1}]'],
      ['--body', '{"windows":[{"signal":"SIGNAL_METRICS","retention_days":2}]}'],
    ])
      expect((await runInProcess(['projects', 'retention', 'set', 'p1', ...args, '--yes'], { env })).code, args.join(' ')).toBe(0);
    expect(api.requests.map((q) => q.body)).toEqual([
      { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 30 }, { signal: 'SIGNAL_LOGS', retention_days: 7 }] },
      { windows: [{ signal: 'SIGNAL_METRICS', retention_days: 3650 }] },
      { windows: [] },
      { windows: [{ signal: 'SIGNAL_LOGS', retention_days: 1 }] },
      { windows: [{ signal: 'SIGNAL_METRICS', retention_days: 2 }] },
    ]);
  });

  it('usage errors exit 2 and send nothing: no windows, two ways at once, days out of range or not whole, bad JSON, no project', async () => {
    for (const args of [
      ['projects', 'retention', 'set', 'p1'],
      ['projects', 'retention', 'set', 'p1', '--none', '--spans', '3'],
      ['projects', 'retention', 'set', 'p1', '--spans', '3', '--body', '[]'],
      ['projects', 'retention', 'set', 'p1', '--spans', '0'],
      ['projects', 'retention', 'set', 'p1', '--spans', '3651'],
      ['projects', 'retention', 'set', 'p1', '--spans', '1.5'],
      ['projects', 'retention', 'set', 'p1', '--spans', '7d'],
      ['projects', 'retention', 'set', 'p1', '--body', '{nope'],
      ['projects', 'retention', 'set', 'p1', '--body', '3'],
      ['projects', 'retention', 'set', '--spans', '3'],
      ['projects', 'retention', 'get'],
    ]) {
      const r = await runInProcess(args, { env });
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(api.requests).toEqual([]);
  });

  it('a new or shorter window deletes data: without --yes nothing is written; a longer one or none needs no --yes', async () => {
    api.on('GET', '/projects/p1/retention', { body: W });
    api.on('PUT', '/projects/p1/retention', (req) => ({ body: { project_id: 'p1', windows: (req.body as { windows: unknown[] }).windows } }));
    for (const args of [['--spans', '29'], ['--spans', '60', '--logs', '7'], ['--body', '[{"signal":"SIGNAL_METRICS","retention_days":5}]']]) {
      const r = await runInProcess(['projects', 'retention', 'set', 'p1', ...args], { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error', message: expect.stringContaining('--yes') });
    }
    expect(api.requests.filter((q) => q.method === 'PUT')).toEqual([]);
    for (const args of [['--spans', '30'], ['--spans', '365'], ['--none']]) expect((await runInProcess(['projects', 'retention', 'set', 'p1', ...args], { env })).code, args.join(' ')).toBe(0);
    expect(api.requests.filter((q) => q.method === 'PUT').map((q) => q.body)).toEqual([
      { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 30 }] },
      { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 365 }] },
      { windows: [] },
    ]);
  });

  it("the server's refusal (a window that deletes data without the delete scope) exits with the API error", async () => {
    api.on('PUT', '/projects/p1/retention', { status: 403, body: { error: 'permission_denied', message: 'it needs scope traces:delete' } });
    const r = await runInProcess(['projects', 'retention', 'set', 'p1', '--spans', '1', '--yes'], { env });
    expect(r.code).not.toBe(0);
    expect(stderrJson(r)).toMatchObject({ error: 'permission_denied', status: 403 });
  });
});
