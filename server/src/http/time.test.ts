/**
 * One time vocabulary (docs/api-conventions.md "Time"): every route that takes a time bound accepts the
 * same RFC 3339 timestamps and relative durations (`1h`, `7d`); anything else, or an instant outside
 * 1970-01-01..9999-12-31, is 400 in our shape, never 500. Spec: "A present-but-invalid query parameter
 * (... unparseable timestamp) returns 400." Defects: `/agent-runs?since=1h` was 400 while `/traces`
 * accepted it; `since=99999999999d` was 500 on the log and trace reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../testing/app.js';
import { insertSpans, spanId, traceId, us } from '../testing/agent-fixtures.js';
import { MAX_TIME_US, parseTimeUs } from './time.js';

const NOW = '2024-06-01T12:00:00.000Z';
const NOW_MS = Date.parse(NOW);
const VALID = ['1h', '7d', '2024-06-01T10:00:00Z'];
const INVALID = ['99999999999d', '-1h', '1x', '9999999999999999999999', '0001-01-01T00:00:00Z', '10000-01-01T00:00:00Z', ''];

interface Route {
  name: string;
  /** The two fields of the window, as named in errors. */
  fields: [string, string];
  /** The request with `field` set to `value` (the other bound absent, or as the route needs it). */
  call(t: TestApp, key: string, field: string, value: string): ReturnType<TestApp['call']>;
}

const qs = (o: Record<string, string>) => new URLSearchParams(o).toString();
const get = (path: string, extra: Record<string, string> = {}): Route['call'] => (t, key, field, value) =>
  t.call({ method: 'GET', url: `/api/v1${path}?${qs({ ...extra, [field]: value })}`, key });
const post = (path: string, body: Record<string, unknown> = {}, nested?: string): Route['call'] => (t, key, field, value) => {
  const bound = nested ? { [nested]: { [field.split('.')[1]]: value } } : { [field]: value };
  return t.call({ method: 'POST', url: `/api/v1${path}`, key, payload: { ...body, ...bound } });
};

const RUN_ID = '0af7651916cd43dd8448eb211c80319c';
const ROUTES: Route[] = [
  { name: 'GET /traces', fields: ['since', 'until'], call: get('/traces') },
  { name: 'GET /services', fields: ['since', 'until'], call: get('/services') },
  { name: 'GET /logs', fields: ['since', 'until'], call: get('/logs') },
  { name: 'GET /logs/fields', fields: ['since', 'until'], call: get('/logs/fields') },
  { name: 'GET /logs/patterns', fields: ['since', 'until'], call: get('/logs/patterns') },
  { name: 'POST /logs/aggregate', fields: ['since', 'until'], call: post('/logs/aggregate') },
  {
    name: 'DELETE /logs',
    fields: ['since', 'until'],
    // A delete needs both bounds and a narrowing filter: the other bound is fixed and valid.
    call: (t, key, field, value) => {
      const other: Record<string, string> = field === 'since' ? { until: NOW } : { since: '2000-01-01T00:00:00Z' };
      return t.call({ method: 'DELETE', url: `/api/v1/logs?${qs({ service: 'nothing', ...other, [field]: value })}`, key });
    },
  },
  { name: 'GET /agent-runs', fields: ['since', 'until'], call: get('/agent-runs') },
  { name: 'GET /agent-sessions', fields: ['since', 'until'], call: get('/agent-sessions') },
  { name: 'GET /agent-events', fields: ['since', 'until'], call: get('/agent-events', { run_id: RUN_ID }) },
  { name: 'GET /metrics/names', fields: ['start_time', 'end_time'], call: get('/metrics/names') },
  { name: 'GET /metrics/{name}/labels', fields: ['start_time', 'end_time'], call: get('/metrics/cpu/labels') },
  { name: 'POST /metrics/aggregate', fields: ['time_range.start', 'time_range.end'], call: post('/metrics/aggregate', { metric_name: 'cpu' }, 'time_range') },
  { name: 'POST /metrics/histogram', fields: ['time_range.start', 'time_range.end'], call: post('/metrics/histogram', { metric_name: 'cpu' }, 'time_range') },
  { name: 'POST /metrics/forecast', fields: ['time_range.start', 'time_range.end'], call: post('/metrics/forecast', { metric_name: 'cpu' }, 'time_range') },
];

const SCOPES = ['traces:read', 'logs:read', 'logs:delete', 'agents:read', 'metrics:read'];

describe('one time vocabulary on every route with a time bound', () => {
  const clock = fixedClock(NOW);
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await testApp({ clock });
    key = (await projectWithKey(t, SCOPES)).key;
  });
  afterAll(async () => t.close());

  for (const route of ROUTES) {
    for (const field of route.fields) {
      it(`${route.name} ${field}: ${VALID.join(', ')} are accepted (2xx)`, async () => {
        for (const value of VALID) {
          const r = await route.call(t, key, field, value);
          expect(r.statusCode, `${field}=${value}: ${r.body}`).toBeLessThan(300);
        }
      });
      it(`${route.name} ${field}: invalid or unrepresentable values are 400 invalid_request naming the field and the forms, never 500`, async () => {
        for (const value of INVALID) {
          const r = await route.call(t, key, field, value);
          expect(r.statusCode, `${field}=${JSON.stringify(value)}: ${r.body}`).toBe(400);
          expect(r.json().error).toBe('invalid_request');
          expect(r.json().message).toContain(field);
          expect(r.json().message).toMatch(/RFC 3339.*duration/);
        }
      });
    }
    it(`${route.name}: a start after the end is 400 "<start> must not be after <end>"`, async () => {
      const [start, end] = route.fields;
      const nested = start.includes('.');
      const r = nested
        ? await t.call({
            method: 'POST',
            url: `/api/v1${route.name.split(' ')[1]}`,
            key,
            payload: { metric_name: 'cpu', time_range: { start: '1h', end: '2h' } },
          })
        : route.name === 'POST /logs/aggregate'
          ? await t.call({ method: 'POST', url: '/api/v1/logs/aggregate', key, payload: { since: '1h', until: '2h' } })
          : await t.call({
              method: route.name.split(' ')[0] as 'GET' | 'DELETE',
              url: `/api/v1${route.name.split(' ')[1].replace('{name}', 'cpu')}?${qs({ ...(route.name === 'GET /agent-events' ? { run_id: RUN_ID } : {}), ...(route.name === 'DELETE /logs' ? { service: 'x' } : {}), [start]: '1h', [end]: '2h' })}`,
              key,
            });
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json()).toEqual({ error: 'invalid_request', message: `${start} must not be after ${end}` });
    });
  }

  it('a cursor of a duration window (since=1h) continues the same query after "1 hour ago" has moved; a changed bound is refused', async () => {
    const p = await projectWithKey(t, SCOPES);
    const roots = [1, 2, 3].map((n) => ({ traceId: traceId(9000 + n), spanId: spanId(n), op: 'invoke_agent', name: 'invoke_agent a', startUs: us('2024-06-01T11:50:00Z', n) }));
    await insertSpans(t, p.projectId, roots);
    const page = (url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key: p.key });
    const first = await page('/agent-runs?since=1h&limit=2');
    expect(first.json().runs).toHaveLength(2);
    clock.set('2024-06-01T12:01:00Z');
    const next = await page(`/agent-runs?since=1h&limit=2&cursor=${first.json().next_cursor}`);
    expect(next.statusCode, next.body).toBe(200);
    expect(next.json().runs.map((r: { run_id: string }) => r.run_id)).toEqual([traceId(9001)]);
    const other = await page(`/agent-runs?since=2h&limit=2&cursor=${first.json().next_cursor}`);
    expect(other.statusCode).toBe(400);
    clock.set(NOW);
  });
});

describe('parseTimeUs', () => {
  it('reads RFC 3339 to the microsecond, offsets, leap seconds, and durations before now', () => {
    expect(parseTimeUs('since', '2024-06-01T12:00:00.1234567Z', NOW_MS)).toBe(NOW_MS * 1000 + 123456);
    expect(parseTimeUs('since', '2024-06-01T14:00:00+02:00', NOW_MS)).toBe(NOW_MS * 1000);
    expect(parseTimeUs('since', '2024-06-01 12:00:00z', NOW_MS)).toBe(NOW_MS * 1000);
    expect(parseTimeUs('since', '2016-12-31T23:59:60Z', NOW_MS)).toBe(Date.parse('2017-01-01T00:00:00Z') * 1000);
    expect(parseTimeUs('since', '90m', NOW_MS)).toBe((NOW_MS - 90 * 60_000) * 1000);
    expect(parseTimeUs('since', '2w', NOW_MS)).toBe((NOW_MS - 14 * 86_400_000) * 1000);
    expect(parseTimeUs('since', '1970-01-01T00:00:00Z', NOW_MS)).toBe(0);
    expect(parseTimeUs('until', '9999-12-31T23:59:59.999999Z', NOW_MS)).toBe(MAX_TIME_US);
  });

  it('refuses what it cannot represent: before 1970, past 9999, zero or unsafe durations, impossible dates', () => {
    for (const v of ['0s', '0d', '1969-12-31T23:59:59Z', '1970-01-01T00:30:00+01:00', '9999-12-31T23:59:59-01:00', '2024-02-30T00:00:00Z', '2024-06-01T24:00:00Z', '19999d', '99999999999999999999s', '1H', '1 h', '1.5h', '+1h', 'now'])
      expect(() => parseTimeUs('since', v, NOW_MS), v).toThrow(/since must be an RFC 3339 timestamp/);
  });
});
