import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../http.js';
import { SseParser } from '../sse.js';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, spawnSvc, sseResponse, stderrJson, type RecordedRequest } from '../testing/fake-api.js';
import { oneLine } from './logs.js';
import { tailLine } from './logs-tail.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const TRACE = '0123456789abcdef0123456789ABCDEF';

const log = (id: string, over: Record<string, unknown> = {}) => ({
  log_id: id,
  timestamp: '2024-06-01T11:59:00.000000Z',
  severity: 'error',
  severity_number: 17,
  body: `payment ${id} failed`,
  service_name: 'checkout',
  attributes: {},
  resource_attributes: {},
  ...over,
});

let t: CliTestEnv;
beforeEach(async () => {
  t = await startCliTestEnv();
});
afterEach(() => stopCliTestEnv(t));

const svc = (
  args: string[],
  opts: { stdoutTTY?: boolean; env?: Record<string, string>; sleep?: (ms: number) => Promise<void> } = {},
) => runInProcess(args, { env: opts.env ?? t.env, now: NOW, stdoutTTY: opts.stdoutTTY, sleep: opts.sleep });

const target = (r: RecordedRequest) => `${r.method} ${r.path}${r.search ? `?${r.search}` : ''}`;

describe('svc logs query', () => {
  it('sends every filter (repeated service and attr, durations as RFC 3339), the sort and limit 50 by default', async () => {
    const body = { logs: [log('l1')], next_cursor: null };
    t.api.on('GET', '/logs', { body });
    const r = await svc([
      'logs', 'query', '--project', 'p1', '--service', 'checkout', '--service', 'cart', '--severity', 'warn', '-q', 'timed out',
      '--trace-id', TRACE, '--attr', 'http.route=/pay', '--attr', 'region=eu=1', '--since', '2h', '--until', '30m', '--sort', 'timestamp_asc',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(body);
    expect(t.api.requests[0].path).toBe('/api/v1/logs');
    expect(t.api.requests[0].query).toEqual({
      project_id: ['p1'],
      since: ['2024-06-01T10:00:00.000Z'],
      until: ['2024-06-01T11:30:00.000Z'],
      service: ['checkout', 'cart'],
      severity: ['warn'],
      q: ['timed out'],
      trace_id: [TRACE],
      attr: ['http.route=/pay', 'region=eu=1'],
      sort: ['timestamp_asc'],
      limit: ['50'],
    });
    await svc(['logs', 'query', '--query', 'x', '--limit', '1000', '--cursor', 'c9']);
    expect(t.api.requests[1].search).toBe('q=x&sort=timestamp_desc&limit=1000&cursor=c9');
  });

  it('prints TIMESTAMP, SEVERITY, SERVICE, BODY; the body is cut and flattened in tables only', async () => {
    const long = `first line\nsecond ${'x'.repeat(200)}`;
    const logs = [log('l1'), log('l2', { severity: undefined, severity_text: 'Notice', service_name: undefined, body: long }), log('l3', { body: null })];
    t.api.on('GET', '/logs', { body: { logs, next_cursor: 'more' } });
    const r = await svc(['logs', 'query', '--no-color'], { stdoutTTY: true });
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('TIMESTAMP                    SEVERITY  SERVICE   BODY');
    expect(lines[1]).toBe('2024-06-01T11:59:00.000000Z  error     checkout  payment l1 failed');
    expect(lines[2]).toBe(`2024-06-01T11:59:00.000000Z  Notice    -         ${oneLine(long)}`);
    expect([...oneLine(long)!]).toHaveLength(120);
    expect(oneLine(long)!.startsWith('first line second xxx')).toBe(true);
    expect(oneLine(long)!.endsWith('…')).toBe(true);
    expect(lines[3]).toBe('2024-06-01T11:59:00.000000Z  error     checkout  -');
    const json = await svc(['logs', 'query']);
    expect(JSON.parse(json.stdout).logs[1].body).toBe(long);
    expect(JSON.parse(json.stdout).next_cursor).toBe('more');
  });

  it('--all follows next_cursor with the same query', async () => {
    t.api.on('GET', '/logs', (req) =>
      req.query.cursor?.[0] === 'c2' ? { body: { logs: [log('l2')], next_cursor: null } } : { body: { logs: [log('l1')], next_cursor: 'c2' } },
    );
    const r = await svc(['logs', 'query', '--all', '--service', 'checkout', '--limit', '1']);
    expect(JSON.parse(r.stdout)).toEqual({ logs: [log('l1'), log('l2')], next_cursor: null });
    expect(t.api.requests.map((q) => q.search)).toEqual([
      'service=checkout&sort=timestamp_desc&limit=1',
      'service=checkout&sort=timestamp_desc&limit=1&cursor=c2',
    ]);
  });

  it('validates closed sets and structured values client-side (exit 2, nothing sent)', async () => {
    const cases: [string[], RegExp][] = [
      [['logs', 'query', '--severity', 'warning'], /trace, debug, info, warn, error, fatal/],
      [['logs', 'tail', '--severity', 'critical'], /trace, debug, info, warn, error, fatal/],
      [['logs', 'query', '--sort', 'newest'], /timestamp_desc, timestamp_asc/],
      [['logs', 'query', '--limit', '1001'], /at most 1000/],
      [['logs', 'query', '--limit', '0'], /positive integer/],
      [['logs', 'query', '--attr', 'novalue'], /key=value/],
      [['logs', 'query', '--attr', '=x'], /key=value/],
      [['logs', 'query', '--trace-id', 'abc'], /32 hexadecimal/],
      [['logs', 'query', '--since', '3 days'], /--since/],
      [['logs', 'query', '--since', '1h', '--until', '2h'], /before/],
      [['logs', 'query', '-q', ''], /must not be empty/],
      [['logs', 'aggregate', '--step', '2m'], /1s, 5s, 10s, 30s, 1m, 5m/],
      [['logs', 'aggregate', '--group-by', 'host'], /service, severity or attr/],
      [['logs', 'aggregate', '--group-by', 'service', '--group-by', 'severity', '--group-by', 'attr.x'], /at most 2/],
      [['logs', 'aggregate', '--group-by', 'service', '--group-by', 'service'], /differ/],
      [['logs', 'patterns', '--limit', '201'], /at most 200/],
      [['logs', 'context', 'l1', '--before', '101'], /between 0 and 100/],
      [['logs', 'context', 'l1', '--after', '-1'], /between 0 and 100/],
    ];
    for (const [args, message] of cases) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error', message: expect.stringMatching(message) });
    }
    expect(t.api.requests).toHaveLength(0);
  });
});

describe('svc logs aggregate, fields, patterns, context', () => {
  it('aggregate posts the body with project_id in the query and prints one row per group or bucket', async () => {
    const series = [
      { group: { service: 'checkout', severity: 'error' }, count: 3, points: [{ timestamp: '2024-06-01T10:00:00.000000Z', count: 1 }, { timestamp: '2024-06-01T11:00:00.000000Z', count: 2 }] },
      { group: { service: 'cart' }, count: 1, points: [{ timestamp: '2024-06-01T10:00:00.000000Z', count: 1 }, { timestamp: '2024-06-01T11:00:00.000000Z', count: 0 }] },
    ];
    const res = { since: '2024-06-01T10:00:00.000000Z', until: '2024-06-01T12:00:00.000000Z', step: '1h', series };
    t.api.on('POST', '/logs/aggregate', { body: res });
    const r = await svc([
      'logs', 'aggregate', '--project', 'p1', '--step', '1h', '--group-by', 'service', '--group-by', 'severity', '--since', '2h',
      '--service', 'checkout', '--service', 'cart', '--severity', 'info', '-q', 'pay', '--trace-id', TRACE, '--attr', 'a=b',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(res);
    expect(target(t.api.requests[0])).toBe('POST /api/v1/logs/aggregate?project_id=p1');
    expect(t.api.requests[0].body).toEqual({
      since: '2024-06-01T10:00:00.000Z',
      step: '1h',
      group_by: ['service', 'severity'],
      service: ['checkout', 'cart'],
      severity: 'info',
      q: 'pay',
      trace_id: TRACE,
      attr: ['a=b'],
    });
    const table = await svc(['logs', 'aggregate', '--group-by', 'service', '-o', 'table']);
    expect(t.api.requests[1].search).toBe('');
    expect(t.api.requests[1].body).toEqual({ group_by: ['service'] });
    expect(table.stdout).toBe(
      [
        'SERVICE   SEVERITY  TIMESTAMP                    COUNT',
        'checkout  error     2024-06-01T10:00:00.000000Z  1',
        'checkout  error     2024-06-01T11:00:00.000000Z  2',
        'cart      -         2024-06-01T10:00:00.000000Z  1',
        'cart      -         2024-06-01T11:00:00.000000Z  0',
        '',
      ].join('\n'),
    );
    t.api.on('POST', '/logs/aggregate', { body: { since: 'a', until: 'b', series: [{ group: { 'attr.region': 'eu' }, count: 7 }, { group: {}, count: 2 }] } });
    const totals = await svc(['logs', 'aggregate', '--group-by', 'attr.region', '-o', 'table']);
    expect(totals.stdout).toBe(['ATTR.REGION  COUNT', 'eu           7', '-            2', ''].join('\n'));
  });

  it('fields sends the filters and window and lists keys with their top values', async () => {
    const res = {
      fields: [
        { key: 'http.route', source: 'attributes', count: 9, distinct_values: 2, top_values: [{ value: '/pay', count: 6 }, { value: '/cart', count: 3 }] },
        { key: 'host.name', source: 'resource_attributes', count: 9, distinct_values: 1, top_values: [{ value: 'h1', count: 9 }] },
      ],
      total_count: 2,
      scanned: 9,
      sampled: false,
    };
    t.api.on('GET', '/logs/fields', { body: res });
    const r = await svc(['logs', 'fields', '--project', 'p1', '--severity', 'error', '--since', '1d', '--attr', 'k=v']);
    expect(JSON.parse(r.stdout)).toEqual(res);
    expect(t.api.requests[0].query).toEqual({ project_id: ['p1'], since: ['2024-05-31T12:00:00.000Z'], severity: ['error'], attr: ['k=v'] });
    const table = await svc(['logs', 'fields', '-o', 'table']);
    expect(table.stdout).toBe(
      [
        'KEY         SOURCE     COUNT  DISTINCT  TOP_VALUES',
        'http.route  attribute  9      2         /pay (6), /cart (3)',
        'host.name   resource   9      1         h1 (9)',
        '',
      ].join('\n'),
    );
  });

  it('patterns sends --limit and the filters and prints count, pattern, services, last seen', async () => {
    const res = {
      patterns: [
        {
          pattern_id: '0123456789abcdef',
          pattern: 'payment <num> failed',
          count: 12,
          first_seen: '2024-06-01T10:00:00.000000Z',
          last_seen: '2024-06-01T11:59:00.000000Z',
          services: ['cart', 'checkout'],
          example: { log_id: 'l1', timestamp: '2024-06-01T11:59:00.000000Z', body: 'payment 7 failed' },
        },
      ],
      total_patterns: 1,
      scanned: 12,
      sampled: false,
    };
    t.api.on('GET', '/logs/patterns', { body: res });
    const r = await svc(['logs', 'patterns', '--limit', '5', '--service', 'checkout', '--until', '2024-06-01T11:00:00Z']);
    expect(JSON.parse(r.stdout)).toEqual(res);
    expect(t.api.requests[0].search).toBe('until=2024-06-01T11%3A00%3A00Z&service=checkout&limit=5');
    const table = await svc(['logs', 'patterns', '-o', 'table']);
    expect(t.api.requests[1].search).toBe('');
    expect(table.stdout).toBe(
      ['COUNT  PATTERN               SERVICES        LAST_SEEN', '12     payment <num> failed  cart, checkout  2024-06-01T11:59:00.000000Z', ''].join('\n'),
    );
  });

  it('context reads the neighbours of one log and numbers them around it', async () => {
    const res = { log: log('l2'), before: [log('l0'), log('l1')], after: [log('l3')] };
    t.api.on('GET', '/logs/l 2/context', { body: res });
    const r = await svc(['logs', 'context', 'l 2', '--before', '2', '--after', '0', '--project', 'p1']);
    expect(JSON.parse(r.stdout)).toEqual(res);
    expect(target(t.api.requests[0])).toBe('GET /api/v1/logs/l%202/context?project_id=p1&before=2&after=0');
    const table = await svc(['logs', 'context', 'l 2', '-o', 'table']);
    expect(t.api.requests[1].search).toBe('');
    expect(table.stdout.split('\n').map((l) => l.split(/\s{2,}/)[0])).toEqual(['POS', '-2', '-1', '0', '+1', '']);
    expect(table.stdout).toContain('payment l2 failed');
  });
});

describe('svc logs delete', () => {
  it('needs --yes: exit 2 and nothing is sent', async () => {
    t.api.on('DELETE', '/logs', { body: { deleted: 1 } });
    for (const args of [
      ['logs', 'delete', '--log-id', 'l1'],
      ['logs', 'delete', '--since', '1d', '--until', '1h', '--service', 'checkout'],
    ]) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error', message: expect.stringContaining('--yes') });
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('needs --log-id, or --since and --until with a narrowing filter (severity alone is not one)', async () => {
    for (const args of [
      ['logs', 'delete', '--yes'],
      ['logs', 'delete', '--yes', '--since', '1d', '--until', '1h'],
      ['logs', 'delete', '--yes', '--since', '1d', '--until', '1h', '--severity', 'debug'],
      ['logs', 'delete', '--yes', '--since', '1d', '--service', 'checkout'],
      ['logs', 'delete', '--yes', '--until', '1h', '--attr', 'a=b'],
    ]) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrJson(r).message).toMatch(/--log-id, or --since and --until/);
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('sends DELETE /logs with the selector and prints the count', async () => {
    t.api.on('DELETE', '/logs', { body: { deleted: 4 } });
    const one = await svc(['logs', 'delete', '--log-id', 'l1', '--yes', '--project', 'p1']);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({ deleted: 4 });
    expect(target(t.api.requests[0])).toBe('DELETE /api/v1/logs?project_id=p1&log_id=l1');
    const many = await svc(['logs', 'delete', '--yes', '--since', '1d', '--until', '1h', '--trace-id', TRACE, '--severity', 'debug', '-o', 'table']);
    expect(many.stdout).toBe('Deleted 4 log records\n');
    expect(t.api.requests[1].query).toEqual({
      since: ['2024-05-31T12:00:00.000Z'],
      until: ['2024-06-01T11:00:00.000Z'],
      severity: ['debug'],
      trace_id: [TRACE],
    });
  });
});

describe('svc logs tail', () => {
  const sleeps: number[] = [];
  const sleep = async (ms: number) => void sleeps.push(ms);
  beforeEach(() => void sleeps.splice(0));

  it('prints each record as NDJSON when piped and stops with exit 3 on a final unauthorized', async () => {
    t.api.on(
      'GET',
      '/stream/logs',
      sseResponse([
        { comment: 'stream open' },
        { event: 'log', id: 'l1', data: log('l1') },
        { comment: 'ping' },
        { event: 'log', id: 'l2', data: log('l2', { body: 'two\nlines' }) },
        { event: 'error', data: { error: 'unauthorized', message: 'authentication required', final: true } },
      ]),
    );
    const r = await svc(['logs', 'tail', '--project', 'p1', '--service', 'checkout', '--severity', 'warn', '--attr', 'a=b', '-q', 'pay'], { sleep });
    expect(r.code).toBe(3);
    expect(r.stdout.split('\n')).toEqual([JSON.stringify(log('l1')), JSON.stringify(log('l2', { body: 'two\nlines' })), '']);
    expect(stderrJson(r)).toEqual({ error: 'unauthorized', message: 'authentication required', exit_code: 3 });
    expect(target(t.api.requests[0])).toBe('GET /api/v1/stream/logs?project_id=p1&service=checkout&severity=warn&q=pay&attr=a%3Db');
    expect(t.api.requests[0].headers.accept).toBe('text/event-stream');
    expect(t.api.requests[0].headers['x-svc-api-key']).toBe('test-key');
    expect(t.api.requests[0].headers['last-event-id']).toBeUndefined();
    expect(sleeps).toEqual([]);
  });

  it('prints one line per record on a terminal; a final forbidden exits 4', async () => {
    t.api.on(
      'GET',
      '/stream/logs',
      sseResponse([
        { event: 'log', id: 'l1', data: log('l1', { body: 'two\nlines' }) },
        { event: 'log', id: 'l2', data: log('l2', { severity: undefined, service_name: undefined, body: null }) },
        { event: 'error', data: { error: 'forbidden', message: 'this stream needs scope logs:read', final: true } },
      ]),
    );
    const r = await svc(['logs', 'tail'], { stdoutTTY: true, sleep });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe(['2024-06-01T11:59:00.000000Z  ERROR  checkout  two ⏎ lines', '2024-06-01T11:59:00.000000Z  -      -', ''].join('\n'));
    expect(stderrJson(r)).toMatchObject({ error: 'forbidden', exit_code: 4 });
  });

  it('reconnects with Last-Event-ID after an end without the final event, backing off 1 s doubling', async () => {
    let n = 0;
    t.api.on('GET', '/stream/logs', () => {
      n++;
      if (n === 1) return sseResponse([{ event: 'log', id: 'l1', data: log('l1') }, { event: 'log', id: 'l2', data: log('l2') }]);
      if (n === 2) return sseResponse([{ comment: 'credential expired; renew it and reconnect' }]);
      if (n === 3) return sseResponse([]);
      if (n === 4) return sseResponse([{ event: 'log', id: 'l3', data: log('l3') }]);
      return sseResponse([{ event: 'error', data: { error: 'unauthorized', message: 'revoked', final: true } }]);
    });
    const r = await svc(['logs', 'tail', '--service', 'checkout'], { sleep });
    expect(r.code).toBe(3);
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l).log_id)).toEqual(['l1', 'l2', 'l3']);
    expect(t.api.requests.map((q) => q.headers['last-event-id'])).toEqual([undefined, 'l2', 'l2', 'l2', 'l3']);
    expect(t.api.requests.every((q) => q.search === 'service=checkout')).toBe(true);
    // After records the backoff starts again at 1 s.
    expect(sleeps).toEqual([1000, 2000, 4000, 1000]);
  });

  it('caps the backoff at 30 s', async () => {
    let n = 0;
    t.api.on('GET', '/stream/logs', () =>
      ++n < 9 ? sseResponse([]) : sseResponse([{ event: 'error', data: { error: 'forbidden', message: 'no', final: true } }]),
    );
    const r = await svc(['logs', 'tail'], { sleep });
    expect(r.code).toBe(4);
    expect(sleeps).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('--no-reconnect stops (exit 0) when the stream ends without the final event', async () => {
    t.api.on('GET', '/stream/logs', sseResponse([{ event: 'log', id: 'l1', data: log('l1') }]));
    const r = await svc(['logs', 'tail', '--no-reconnect'], { sleep });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).log_id).toBe('l1');
    expect(t.api.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('honours Retry-After on a 429 or 503 refusal; other refusals fail at once', async () => {
    let n = 0;
    t.api.on('GET', '/stream/logs', () => {
      n++;
      if (n === 1) return { status: 429, body: { error: 'too_many_streams', message: 'too many' }, headers: { 'retry-after': '5' } };
      if (n === 2) return { status: 503, body: { error: 'unavailable', message: 'warming up' } };
      return sseResponse([{ event: 'error', data: { error: 'unauthorized', message: 'revoked', final: true } }]);
    });
    const r = await svc(['logs', 'tail'], { sleep });
    expect(r.code).toBe(3);
    expect(sleeps).toEqual([5000, 1000]);

    t.api.on('GET', '/stream/logs', { status: 429, body: { error: 'too_many_streams', message: 'too many' }, headers: { 'retry-after': '5' } });
    const once = await svc(['logs', 'tail', '--no-reconnect'], { sleep });
    expect(once.code).toBe(1);
    expect(stderrJson(once)).toEqual({ error: 'too_many_streams', message: 'too many', exit_code: 1, status: 429, retry_after: 5 });

    const before = t.api.requests.length;
    t.api.on('GET', '/stream/logs', { status: 403, body: { error: 'permission_denied', message: 'needs logs:read' } });
    const denied = await svc(['logs', 'tail'], { sleep });
    expect(denied.code).toBe(4);
    expect(stderrJson(denied)).toMatchObject({ error: 'permission_denied', status: 403 });
    expect(t.api.requests.length - before).toBe(1);
  });

  it('Ctrl-C ends a tail with exit code 0', async () => {
    t.api.on('GET', '/stream/logs', sseResponse([{ event: 'log', id: 'l1', data: log('l1') }], { keepOpen: true }));
    const r = await spawnSvc(['logs', 'tail'], t.env, {
      onSpawn: (child) => {
        child.stdout!.on('data', () => child.kill('SIGINT'));
      },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).log_id).toBe('l1');
    expect(r.stderr).toBe('');
  });
});

describe('the streaming GET of the client', () => {
  it('sends the bearer token, refreshes once after a 401 and returns the open stream', async () => {
    const tokens: string[] = [];
    t.api.on('GET', '/stream/logs', (req) =>
      req.headers.authorization === 'Bearer at-2'
        ? sseResponse([{ event: 'log', id: 'l1', data: log('l1') }])
        : { status: 401, body: { error: 'unauthorized', message: 'expired' } },
    );
    const client = new ApiClient(t.api.url, {
      token: async () => (tokens.push('token'), 'at-1'),
      refresh: async () => (tokens.push('refresh'), 'at-2'),
    });
    const res = await client.stream('/stream/logs', { query: { service: ['a', 'b'] }, headers: { 'last-event-id': 'l0' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('event: log');
    expect(tokens).toEqual(['token', 'refresh']);
    expect(t.api.requests.map((q) => [q.headers.authorization, q.headers['last-event-id'], q.search])).toEqual([
      ['Bearer at-1', 'l0', 'service=a&service=b'],
      ['Bearer at-2', 'l0', 'service=a&service=b'],
    ]);

    t.api.on('GET', '/stream/logs', { status: 401, body: { error: 'unauthorized', message: 'expired' } });
    await expect(client.stream('/stream/logs')).rejects.toMatchObject({ code: 'unauthenticated', exitCode: 3 });
  });
});

describe('the Server-Sent Events parser', () => {
  it('handles CRLF/CR line ends split across chunks, multi-line data, comments and persisting ids', () => {
    const p = new SseParser();
    const out = [
      ...p.push('\ufeff: hello\r'),
      ...p.push('\nid: 1\revent: log\r\ndata: a\ndata:b\n'),
      ...p.push('\n'),
      ...p.push('data: c\n\nevent: x\n\n'),
      ...p.push('id\ndata: d\n\r'),
    ];
    expect(out).toEqual([
      { event: 'log', data: 'a\nb', id: '1' },
      { event: 'message', data: 'c', id: '1' },
      { event: 'message', data: 'd' },
    ]);
  });

  it('tail lines keep the whole body on one line', () => {
    expect(tailLine(log('l1', { body: 'a\r\nb', severity: 'info' }) as never)).toBe('2024-06-01T11:59:00.000000Z  INFO   checkout  a ⏎ b\n');
  });
});
