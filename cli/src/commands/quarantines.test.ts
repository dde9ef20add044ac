import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const Q = {
  id: 'q1',
  project_id: 'p1',
  status: 'pending',
  action: 'freeze_writes',
  observation_key: 'svc/weather',
  reason: 'leaks',
  requested_by: { user_id: 'u1', api_key_id: 'k1' },
  requested_at: '2024-06-01T12:00:00.000Z',
  credentials: [],
  unenforceable_sightings: 0,
};

const { t, svc } = useCliTestEnv(NOW);

describe('svc quarantines', () => {
  it('request posts exactly one target, the reason and the options to the active project; JSON is the answer', async () => {
    t.api.on('POST', '/quarantines', { status: 201, body: Q });
    const r = await svc(['quarantines', 'request', '--observation-key', 'svc/weather', '--reason', 'leaks', '--action', 'kill', '--request-id', 'r1', '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(Q);
    expect(t.api.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/quarantines', search: 'project_id=p1' });
    expect(t.api.requests[0].body).toEqual({ observation_key: 'svc/weather', reason: 'leaks', action: 'kill', request_id: 'r1' });
  });

  it('usage errors exit 2 and send nothing: no target, two targets, an unknown action, no reason, approve or lift without --yes', async () => {
    const cases: string[][] = [
      ['quarantines', 'request', '--reason', 'x', '--project', 'p1'],
      ['quarantines', 'request', '--key-id', 'k', '--asset', 'a', '--reason', 'x', '--project', 'p1'],
      ['quarantines', 'request', '--key-id', 'k', '--reason', 'x', '--action', 'explode', '--project', 'p1'],
      ['quarantines', 'request', '--key-id', 'k', '--project', 'p1'],
      ['quarantines', 'approve', 'q1'],
      ['quarantines', 'lift', 'q1', '--reason', 'x'],
    ];
    for (const args of cases) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(t.api.requests).toEqual([]);
  });

  it('approve --yes, lift --yes --reason, withdraw --reason, reenforce, get and list reach their routes', async () => {
    t.api.on('POST', '/quarantines/q1/approve', { status: 200, body: { ...Q, status: 'active' } });
    t.api.on('POST', '/quarantines/q1/lift', { status: 200, body: { ...Q, status: 'lifted' } });
    t.api.on('POST', '/quarantines/q1/withdraw', { status: 200, body: { ...Q, status: 'withdrawn' } });
    t.api.on('POST', '/quarantines/q1/reenforce', { status: 200, body: { ...Q, status: 'active', retried: 0 } });
    t.api.on('GET', '/quarantines/q1', { status: 200, body: Q });
    t.api.on('GET', '/quarantines', { status: 200, body: { quarantines: [Q], next_cursor: null } });
    for (const args of [
      ['quarantines', 'approve', 'q1', '--yes'],
      ['quarantines', 'lift', 'q1', '--yes', '--reason', 'fixed'],
      ['quarantines', 'withdraw', 'q1', '--reason', 'oops'],
      ['quarantines', 'reenforce', 'q1'],
      ['quarantines', 'get', 'q1'],
      ['quarantines', 'list', '--status', 'active,pending', '--project', 'p1'],
    ])
      expect((await svc(args)).code, args.join(' ')).toBe(0);
    expect(t.api.requests.map((r) => `${r.method} ${r.path}${r.search ? `?${r.search}` : ''}`)).toEqual([
      'POST /api/v1/quarantines/q1/approve',
      'POST /api/v1/quarantines/q1/lift',
      'POST /api/v1/quarantines/q1/withdraw',
      'POST /api/v1/quarantines/q1/reenforce',
      'GET /api/v1/quarantines/q1',
      'GET /api/v1/quarantines?project_id=p1&status=active%2Cpending',
    ]);
    expect(t.api.requests[1].body).toEqual({ reason: 'fixed' });
  });
});
