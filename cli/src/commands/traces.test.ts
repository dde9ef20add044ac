import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';
import { stderrJson } from '../testing/fake-api.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const TID = '0af7651916cd43dd8448eb211c80319c';
const SUMMARY = {
  trace_id: TID,
  root_span_id: 'b7ad6b7169203331',
  root_span_name: 'GET /pay',
  root_service_name: 'checkout',
  root_missing: false,
  started_at: '2024-06-01T11:00:00.000000Z',
  ended_at: '2024-06-01T11:00:00.250000Z',
  duration_ms: 250.1234,
  span_count: 3,
  error_count: 1,
  services: ['checkout', 'db'],
};
const span = (id: string, name: string, depth: number, extra: Record<string, unknown> = {}) => ({
  span_id: id,
  depth,
  children: [],
  name,
  kind: 'internal',
  service_name: 'checkout',
  started_at: '2024-06-01T11:00:00.000000Z',
  ended_at: '2024-06-01T11:00:00.100000Z',
  duration_ms: 100,
  status: { code: 'unset' },
  attributes: {},
  resource_attributes: {},
  events: [],
  ...extra,
});
const TREE = {
  trace_id: TID,
  started_at: SUMMARY.started_at,
  ended_at: SUMMARY.ended_at,
  duration_ms: 250,
  span_count: 3,
  error_count: 1,
  services: ['checkout', 'db'],
  spans: [
    span('b7ad6b7169203331', 'GET /pay', 0, { kind: 'server' }),
    span('00f067aa0ba902b7', 'SELECT', 1, { parent_span_id: 'b7ad6b7169203331', service_name: 'db', status: { code: 'error', message: 'timeout' } }),
    span('53995c3f42cd8ad8', 'late', 0, { parent_span_id: 'ffffffffffffffff', orphan: true }),
  ],
};

const { t, svc } = useCliTestEnv(NOW);

describe('svc traces list', () => {
  it('passes every filter /traces accepts, with --since/--until as RFC 3339', async () => {
    t.api.on('GET', '/traces', { body: { traces: [SUMMARY], next_cursor: 'c2' } });
    const r = await svc([
      'traces', 'list', '--project', 'p1', '--since', '2h', '--until', '2024-06-01T11:30:00Z', '--service', 'checkout', '--service', 'db,web',
      '--name', 'GET /pay', '--status', 'error', '--min-duration', '0.5', '--max-duration', '2500', '--attr', 'http.route=/pay', '--attr', 'region=eu=1',
      '--limit', '10', '--cursor', 'c1',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ traces: [SUMMARY], next_cursor: 'c2' });
    expect(t.api.requests[0].path).toBe('/api/v1/traces');
    expect(t.api.requests[0].query).toEqual({
      project_id: ['p1'],
      since: ['2024-06-01T10:00:00.000Z'],
      until: ['2024-06-01T11:30:00Z'],
      service: ['checkout', 'db,web'],
      name: ['GET /pay'],
      status: ['error'],
      min_duration_ms: ['0.5'],
      max_duration_ms: ['2500'],
      attr: ['http.route=/pay', 'region=eu=1'],
      limit: ['10'],
      cursor: ['c1'],
    });
    await svc(['traces', 'list']);
    expect(t.api.requests[1].search).toBe('');
  });

  it('--all follows next_cursor with the same query; the table shows one row per trace', async () => {
    t.api.on('GET', '/traces', (req) =>
      req.query.cursor?.[0] === 'c2'
        ? { body: { traces: [{ ...SUMMARY, trace_id: 'f'.repeat(32), root_missing: true }], next_cursor: null } }
        : { body: { traces: [SUMMARY], next_cursor: 'c2' } },
    );
    const r = await svc(['traces', 'list', '--all', '--status', 'ok']);
    expect(JSON.parse(r.stdout).traces).toHaveLength(2);
    expect(t.api.requests.map((q) => q.search)).toEqual(['status=ok', 'status=ok&cursor=c2']);
    const tbl = await svc(['traces', 'list', '--all', '-o', 'table']);
    const lines = tbl.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TRACE_ID\s+ROOT\s+SERVICE\s+STARTED_AT\s+DURATION_MS\s+SPANS\s+ERRORS$/);
    expect(lines[1]).toMatch(new RegExp(`^${TID}\\s+GET /pay\\s+checkout\\s+2024-06-01T11:00:00.000000Z\\s+250.123\\s+3\\s+1$`));
    expect(lines[2]).toContain('(root missing)');
  });

  it('usage errors exit 2 and send nothing (unknown status, bad durations, limits, attr, time)', async () => {
    const cases: [string[], RegExp][] = [
      [['traces', 'list', '--status', 'failed'], /ok, error, unset/],
      [['traces', 'list', '--min-duration', '-1'], /at least 0/],
      [['traces', 'list', '--max-duration', 'fast'], /number/],
      [['traces', 'list', '--limit', '101'], /at most 100/],
      [['traces', 'list', '--attr', '=x'], /key=value/],
      [['traces', 'list', '--name', ''], /must not be empty/],
      [['traces', 'list', '--since', '-5m'], /--since/],
      [['traces', 'list', '--since', '1h', '--until', '2h'], /before/],
      [['traces', 'get'], /missing required argument 'trace_id'/],
      [['traces', 'get', 'abc'], /32 hexadecimal/],
      [['traces', 'get', 'g'.repeat(32)], /32 hexadecimal/],
      [['services', '--until', 'now'], /--until/],
    ];
    for (const [args, message] of cases) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrJson(r).message, args.join(' ')).toMatch(message);
    }
    expect(t.api.requests).toHaveLength(0);
  });
});

describe('svc traces get', () => {
  it('JSON is the whole answer; a terminal shows the span tree indented by depth', async () => {
    t.api.on('GET', `/traces/${TID}`, { body: TREE });
    const r = await svc(['traces', 'get', TID, '--project', 'p1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(TREE);
    expect(t.api.requests[0]).toMatchObject({ path: `/api/v1/traces/${TID}`, search: 'project_id=p1' });
    const tbl = await svc(['traces', 'get', TID, '--no-color'], { stdoutTTY: true });
    const lines = tbl.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Trace ${TID}: 3 spans, 1 errors, 250 ms, from 2024-06-01T11:00:00.000000Z; services: checkout, db`);
    expect(lines[1]).toMatch(/^SPAN\s+SPAN_ID\s+SERVICE\s+KIND\s+STATUS\s+STARTED_AT\s+DURATION_MS$/);
    expect(lines[2]).toMatch(/^GET \/pay\s+b7ad6b7169203331\s+checkout\s+server\s+unset/);
    expect(lines[3]).toMatch(/^ {2}SELECT\s+00f067aa0ba902b7\s+db\s+internal\s+error: timeout/);
    expect(lines[4]).toMatch(/^late \(orphan\)\s+53995c3f42cd8ad8/);
  });

  it('API errors map to exit codes: 404 -> 5, 403 -> 4, 429 keeps Retry-After', async () => {
    t.api.on('GET', `/traces/${TID}`, { status: 404, body: { error: 'not_found', message: 'trace not found' } });
    const nf = await svc(['traces', 'get', TID]);
    expect(nf.code).toBe(5);
    expect(stderrJson(nf)).toEqual({ error: 'not_found', message: 'trace not found', exit_code: 5, status: 404 });
    t.api.on('GET', `/traces/${TID}`, { status: 403, body: { error: 'permission_denied', message: 'project_id conflicts with the project this key is bound to' } });
    const fb = await svc(['traces', 'get', TID, '--project', 'other']);
    expect(fb.code).toBe(4);
    expect(stderrJson(fb)).toMatchObject({ error: 'permission_denied', status: 403, exit_code: 4 });
    t.api.on('GET', `/traces/${TID}`, { status: 429, body: { error: 'result_too_large', message: 'too many spans' }, headers: { 'retry-after': '3' } });
    const big = await svc(['traces', 'get', TID]);
    expect(big.code).toBe(1);
    expect(stderrJson(big)).toMatchObject({ error: 'result_too_large', status: 429, retry_after: 3 });
  });
});

describe('svc services', () => {
  it('sends project_id and the window; prints one row per service', async () => {
    const res = {
      services: [
        { name: 'checkout', span_count: 10, error_span_count: 1, log_count: 4, first_seen: '2024-06-01T10:00:00.000000Z', last_seen: '2024-06-01T11:00:00.000000Z' },
        { name: 'db', log_count: 2, first_seen: '2024-06-01T10:00:00.000000Z', last_seen: '2024-06-01T10:30:00.000000Z' },
      ],
      total_count: 2,
      since: '2024-06-01T06:00:00.000000Z',
      until: '2024-06-01T12:00:00.000000Z',
    };
    t.api.on('GET', '/services', { body: res });
    const r = await svc(['services', '--since', '6h'], { env: { ...t.env, SVC_PROJECT: 'p2' } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(res);
    expect(t.api.requests[0].query).toEqual({ project_id: ['p2'], since: ['2024-06-01T06:00:00.000Z'] });
    const tbl = await svc(['services', '-o', 'table']);
    expect(tbl.stdout.split('\n').slice(0, 3)).toEqual([
      'NAME      SPANS  ERROR_SPANS  LOGS  FIRST_SEEN                   LAST_SEEN',
      'checkout  10     1            4     2024-06-01T10:00:00.000000Z  2024-06-01T11:00:00.000000Z',
      'db        -      -            2     2024-06-01T10:00:00.000000Z  2024-06-01T10:30:00.000000Z',
    ]);
  });
});
