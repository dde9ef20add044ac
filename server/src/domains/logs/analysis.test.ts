/** `POST /logs/aggregate`, `GET /logs/fields`, `GET /logs/patterns` over HTTP (spec 1 "Raw observability", "Errors", "Limits"). */
import { allowAllContent } from '../../testing/content-policy.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLogs, SEV } from '../../testing/log-fixtures.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { logPattern } from './patterns.js';

const NOW = '2024-06-01T12:00:00.000Z';

describe('log aggregate, fields and patterns', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  const db = () => t.ctx.telemetry;
  const fresh = (scopes = ['logs:read']) => projectWithKey(t, scopes);
  const aggregate = (key: string, payload: object, qs = '') => t.call({ method: 'POST', url: `/api/v1/logs/aggregate${qs}`, key, payload });
  const get = (key: string, url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key });

  describe('POST /logs/aggregate', () => {
    async function seed(projectId: string) {
      await insertLogs(db(), [
        { projectId, at: '2024-06-01T10:05:00Z', service: 'api', severityNumber: SEV.error, attributes: { 'http.method': 'GET' } },
        { projectId, at: '2024-06-01T10:10:00Z', service: 'api', severityNumber: SEV.info, attributes: { 'http.method': 'POST' } },
        { projectId, at: '2024-06-01T11:05:00Z', service: 'api', severityNumber: SEV.error, attributes: { 'http.method': 'GET' } },
        { projectId, at: '2024-06-01T11:06:00Z', service: 'db', severityNumber: SEV.warn },
        { projectId, at: '2024-06-01T11:07:00Z', service: 'db', severityNumber: null },
      ]);
    }

    it('counts per group (largest first), a missing value absent from group and last', async () => {
      const { projectId, key } = await fresh();
      await seed(projectId);
      const r = await aggregate(key, { group_by: ['service', 'severity'] });
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({
        since: '2024-05-31T12:00:00.000000Z',
        until: '2024-06-01T12:00:00.000000Z',
        series: [
          { group: { service: 'api', severity: 'error' }, count: 2 },
          { group: { service: 'api', severity: 'info' }, count: 1 },
          { group: { service: 'db', severity: 'warn' }, count: 1 },
          { group: { service: 'db' }, count: 1 },
        ],
      });
      const byAttr = (await aggregate(key, { group_by: ['attr.http.method'], service: ['api'] })).json().series;
      expect(byAttr).toEqual([
        { group: { 'attr.http.method': 'GET' }, count: 2 },
        { group: { 'attr.http.method': 'POST' }, count: 1 },
      ]);
      expect((await aggregate(key, {})).json().series).toEqual([{ group: {}, count: 5 }]);
    });

    it('with a step: every bucket of the window, 0 when no log fell in it; filters as GET /logs', async () => {
      const { projectId, key } = await fresh();
      await seed(projectId);
      const r = await aggregate(key, { since: '2024-06-01T09:30:00Z', until: '2024-06-01T11:59:59Z', step: '1h', severity: 'warn' });
      expect(r.json()).toEqual({
        since: '2024-06-01T09:30:00.000000Z',
        until: '2024-06-01T11:59:59.000000Z',
        step: '1h',
        series: [
          {
            group: {},
            count: 3,
            points: [
              { timestamp: '2024-06-01T09:00:00.000000Z', count: 0 },
              { timestamp: '2024-06-01T10:00:00.000000Z', count: 1 },
              { timestamp: '2024-06-01T11:00:00.000000Z', count: 2 },
            ],
          },
        ],
      });
      const none = (await aggregate(key, { since: '2h', step: '1h', q: 'no such text' })).json().series;
      expect(none).toEqual([{ group: {}, count: 0, points: [{ timestamp: '2024-06-01T10:00:00.000000Z', count: 0 }, { timestamp: '2024-06-01T11:00:00.000000Z', count: 0 }, { timestamp: '2024-06-01T12:00:00.000000Z', count: 0 }] }]);
    });

    it('"Aggregate query: 50 grouped series, 500 points per series": 429 above 50 groups (never truncated), 400 above 500 buckets', async () => {
      const { projectId, key } = await fresh();
      await insertLogs(db(), Array.from({ length: 51 }, (_, i) => ({ projectId, at: '2024-06-01T11:00:00Z', service: `s${i}` })));
      const r = await aggregate(key, { group_by: ['service'] });
      expect(r.statusCode).toBe(429);
      expect(r.json()).toMatchObject({ error: 'result_too_large', details: { limit: 50 } });
      expect((await aggregate(key, { group_by: ['service'], service: ['s1', 's2'] })).json().series).toHaveLength(2);
      const buckets = await aggregate(key, { since: '2024-06-01T00:00:00Z', until: '2024-06-01T12:00:00Z', step: '1m' });
      expect(buckets.statusCode).toBe(400);
      expect(buckets.json().details).toEqual({ limit: 500, points_per_series: 721 });
    });

    it('refuses bad bodies (400), needs project_id in the query for an organization key, and needs logs:read', async () => {
      const { projectId, key } = await fresh();
      for (const body of [{ group_by: ['host'] }, { group_by: ['service', 'severity', 'attr.x'] }, { step: '2h' }, { severity: 'loud' }, { extra: 1 }, { group_by: ['attr.9x'] }, { attr: ['k'] }]) {
        const r = await aggregate(key, body);
        expect(r.statusCode, JSON.stringify(body)).toBe(400);
      }
      const org = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'org', scopes: ['logs:read'], org_wide: true } });
      expect((await aggregate(org.json().key, {})).statusCode).toBe(400);
      expect((await aggregate(org.json().key, {}, `?project_id=${projectId}`)).statusCode).toBe(200);
      expect((await aggregate((await projectWithKey(t, ['metrics:read'])).key, {})).statusCode).toBe(403);
      // group_by on recorded content needs agents:content:read
      expect((await aggregate(key, { group_by: ['attr.gen_ai.prompt'] })).statusCode).toBe(403);
    });
  });

  describe('GET /logs/fields', () => {
    it('attribute and resource keys with counts, distinct values and top values, most frequent first; content keys withheld', async () => {
      const { projectId, key } = await fresh();
      await insertLogs(db(), [
        { projectId, at: '2024-06-01T11:00:00Z', attributes: { 'http.method': 'GET', 'gen_ai.prompt': 'hi' }, resource: { region: 'eu' } },
        { projectId, at: '2024-06-01T11:00:01Z', attributes: { 'http.method': 'GET', big: 'x'.repeat(300) } },
        { projectId, at: '2024-06-01T11:00:02Z', attributes: { 'http.method': 'POST', n: 5 } },
      ]);
      const r = await get(key, '/logs/fields');
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({
        fields: [
          { key: 'http.method', source: 'attributes', count: 3, distinct_values: 2, top_values: [{ value: 'GET', count: 2 }, { value: 'POST', count: 1 }] },
          { key: 'service.name', source: 'resource_attributes', count: 3, distinct_values: 1, top_values: [{ value: 'api', count: 3 }] },
          { key: 'big', source: 'attributes', count: 1, distinct_values: 1, top_values: [] },
          { key: 'n', source: 'attributes', count: 1, distinct_values: 1, top_values: [{ value: '5', count: 1 }] },
          { key: 'region', source: 'resource_attributes', count: 1, distinct_values: 1, top_values: [{ value: 'eu', count: 1 }] },
        ],
        total_count: 5,
        scanned: 3,
        sampled: false,
      });
      const filtered = (await get(key, '/logs/fields?attr=http.method=POST')).json();
      expect(filtered.scanned).toBe(1);
      const content = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'c', scopes: ['logs:read', 'agents:content:read'], project_id: projectId } });
      const fieldKeys = async () => (await get(content.json().key, '/logs/fields')).json().fields.map((f: { key: string }) => f.key);
      // The scope alone is not enough: the project's read policy must allow the content (none: every class denied).
      expect(await fieldKeys()).not.toContain('gen_ai.prompt');
      await allowAllContent(t, projectId);
      expect(await fieldKeys()).toContain('gen_ai.prompt');
    });
  });

  describe('GET /logs/patterns', () => {
    it('groups bodies by masking numbers, hex ids, UUIDs, quoted strings; counts, services and the newest example', async () => {
      const { projectId, key } = await fresh();
      const ids = await insertLogs(db(), [
        { projectId, at: '2024-06-01T11:00:00Z', body: 'user 42 logged in from 10.0.0.1', service: 'auth' },
        { projectId, at: '2024-06-01T11:00:01Z', body: 'user 7 logged in from 192.168.1.20', service: 'auth' },
        { projectId, at: '2024-06-01T11:00:02Z', body: 'user 8 logged in from 10.0.0.2', service: 'web' },
        { projectId, at: '2024-06-01T11:00:03Z', body: 'request 0f8fad5b-d9cb-469f-a165-70867728950e failed: "timeout"', service: 'api' },
      ]);
      const r = await get(key, '/logs/patterns');
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({
        patterns: [
          {
            pattern_id: expect.stringMatching(/^[0-9a-f]{16}$/),
            pattern: 'user <num> logged in from <ip>',
            count: 3,
            first_seen: '2024-06-01T11:00:00.000000Z',
            last_seen: '2024-06-01T11:00:02.000000Z',
            services: ['auth', 'web'],
            example: { log_id: ids[2], timestamp: '2024-06-01T11:00:02.000000Z', body: 'user 8 logged in from 10.0.0.2' },
          },
          {
            pattern_id: expect.stringMatching(/^[0-9a-f]{16}$/),
            pattern: 'request <uuid> failed: <str>',
            count: 1,
            first_seen: '2024-06-01T11:00:03.000000Z',
            last_seen: '2024-06-01T11:00:03.000000Z',
            services: ['api'],
            example: { log_id: ids[3], timestamp: '2024-06-01T11:00:03.000000Z', body: 'request 0f8fad5b-d9cb-469f-a165-70867728950e failed: "timeout"' },
          },
        ],
        total_patterns: 2,
        scanned: 4,
        sampled: false,
      });
      expect((await get(key, '/logs/patterns?limit=1')).json().patterns).toHaveLength(1);
      expect((await get(key, '/logs/patterns?service=api')).json().patterns.map((p: { count: number }) => p.count)).toEqual([1]);
      expect((await get(key, '/logs/patterns?limit=201')).statusCode).toBe(400);
    });

    it('the tokenizer (documented in patterns.ts)', () => {
      expect(logPattern('took 153ms for order #991 (retry 2.5)')).toBe('took <num>ms for order #<num> (retry <num>)');
      expect(logPattern("can't open 'config.yaml' at 2024-06-01T12:00:00.123Z")).toBe("can't open <str> at <time>");
      expect(logPattern('trace 4bf92f3577b34da6a3ce929d0e0e4736 span 0x1F')).toBe('trace <hex> span <hex>');
      expect(logPattern('  deadbeef   cafe  ')).toBe('deadbeef cafe');
      expect(logPattern('id=9f86d081 v2')).toBe('id=<hex> v<num>');
    });
  });
});
