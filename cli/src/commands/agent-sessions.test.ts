import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';
import { stderrJson } from '../testing/fake-api.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const S1 = {
  session_key: 'conv-42',
  run_count: 2,
  turn_count: 1,
  started_at: '2024-06-01T11:00:00.000000Z',
  ended_at: '2024-06-01T11:00:01.500000Z',
  duration_ms: 1500.0004,
  cost_nanos: 12_500_000,
};
const S2 = { session_key: 'a/b c', run_count: 1, started_at: '2024-06-01T10:00:00.000000Z', ended_at: '2024-06-01T10:00:00.000000Z', duration_ms: 0, cost_unavailable_reason: 'run_cost_unavailable' };

const { t, svc } = useCliTestEnv(NOW);

describe('svc agent-sessions list', () => {
  it('sends project_id, the window (RFC 3339), --limit and --cursor; --all follows next_cursor', async () => {
    t.api.on('GET', '/agent-sessions', (req) =>
      req.query.cursor?.[0] === 'c2' ? { body: { sessions: [S2], next_cursor: null } } : { body: { sessions: [S1], next_cursor: 'c2' } },
    );
    const r = await svc(['agent-sessions', 'list', '--project', 'p1', '--since', '1d', '--until', '2024-06-01T11:59:00Z', '--limit', '1', '--cursor', 'c1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ sessions: [S1], next_cursor: 'c2' });
    expect(t.api.requests[0].query).toEqual({
      project_id: ['p1'],
      since: ['2024-05-31T12:00:00.000Z'],
      until: ['2024-06-01T11:59:00Z'],
      limit: ['1'],
      cursor: ['c1'],
    });
    const all = await svc(['agent-sessions', 'list', '--all']);
    expect(JSON.parse(all.stdout)).toEqual({ sessions: [S1, S2], next_cursor: null });
    expect(t.api.requests.slice(1).map((q) => q.search)).toEqual(['', 'cursor=c2']);
    const tbl = await svc(['agent-sessions', 'list', '--all', '-o', 'table']);
    expect(tbl.stdout.split('\n').slice(0, 3)).toEqual([
      'SESSION_KEY  RUNS  TURNS  STARTED_AT                   ENDED_AT                     DURATION_MS  COST_USD',
      'conv-42      2     1      2024-06-01T11:00:00.000000Z  2024-06-01T11:00:01.500000Z  1500         0.0125',
      'a/b c        1     -      2024-06-01T10:00:00.000000Z  2024-06-01T10:00:00.000000Z  0            —',
    ]);
  });

  it('usage errors exit 2 and send nothing', async () => {
    for (const args of [
      ['agent-sessions', 'list', '--limit', '201'],
      ['agent-sessions', 'list', '--limit', 'x'],
      ['agent-sessions', 'list', '--since', 'last week'],
      ['agent-sessions', 'list', '--since', '1h', '--until', '2h'],
      ['agent-sessions', 'get'],
      ['agent-sessions'],
    ]) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrJson(r)).toMatchObject({ exit_code: 2 });
    }
    expect(t.api.requests).toHaveLength(0);
  });
});

describe('svc agent-sessions get', () => {
  it('reads one session by its url-encoded key; the table shows the cost in dollars', async () => {
    t.api.on('GET', '/agent-sessions/a/b c', { body: S2 });
    const r = await svc(['agent-sessions', 'get', 'a/b c', '--project', 'p1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(S2);
    expect(t.api.requests[0]).toMatchObject({ path: '/api/v1/agent-sessions/a%2Fb%20c', search: 'project_id=p1' });
    t.api.on('GET', '/agent-sessions/conv-42', { body: S1 });
    const tbl = await svc(['agent-sessions', 'get', 'conv-42', '-o', 'table']);
    expect(tbl.stdout).toMatch(/cost_usd\s+0\.0125/);
    expect(tbl.stdout).toMatch(/duration_ms\s+1500\n/);
  });

  it('an unknown session exits 5; an unauthenticated call exits 3', async () => {
    const nf = await svc(['agent-sessions', 'get', 'nope']);
    expect(nf.code).toBe(5);
    expect(stderrJson(nf)).toMatchObject({ status: 404, exit_code: 5 });
    t.api.on('GET', '/agent-sessions', { status: 401, body: { error: 'unauthorized', message: 'authentication required' } });
    const un = await svc(['agent-sessions', 'list']);
    expect(un.code).toBe(3);
    expect(stderrJson(un)).toEqual({ error: 'unauthorized', message: 'authentication required', exit_code: 3, status: 401 });
  });
});
