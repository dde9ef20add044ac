/** `GET /logs`, `GET /logs/{logId}/context`, `DELETE /logs` over HTTP (spec 1 "Raw observability", "General query rules", "Pagination", Authentication 3 and 10; spec 3 `logs query`). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLogs, newTraceId, SEV } from '../../testing/log-fixtures.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';

const NOW = '2024-06-01T12:00:00.000Z';

describe('log search, context and delete', () => {
  const clock = fixedClock(NOW);
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock });
  });
  afterAll(async () => t.close());

  const db = () => t.ctx.telemetry;
  const fresh = (scopes = ['logs:read', 'logs:delete']) => projectWithKey(t, scopes);
  const get = (key: string, url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key });
  const bodies = async (key: string, url: string) => {
    const r = await get(key, url);
    expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
    return r.json().logs.map((l: { body: string }) => l.body);
  };

  describe('GET /logs', () => {
    it('returns records in the window, newest first by default, with their fields', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      await insertLogs(db(), [
        {
          projectId, at: '2024-06-01T11:00:00.123456Z', observedAt: '2024-06-01T11:00:01Z', severityNumber: SEV.error, severityText: 'ERROR',
          body: 'payment failed', traceId: trace, spanId: 'abcdefabcdefabcd', service: 'pay', environment: 'prod', scope: 'pay.logger',
          attributes: { 'order.id': 42 }, resource: { 'host.name': 'h1' },
        },
        { projectId, at: '2024-06-01T11:30:00Z', body: 'later', severityNumber: null, severityText: null },
        { projectId, at: '2024-05-31T11:00:00Z', body: 'too old' },
      ]);
      const r = await get(key, '/logs');
      expect(r.statusCode).toBe(200);
      expect(r.json().next_cursor).toBeNull();
      const [later, failed] = r.json().logs;
      expect(later).toEqual({
        log_id: expect.any(String),
        timestamp: '2024-06-01T11:30:00.000000Z',
        body: 'later',
        service_name: 'api',
        attributes: {},
        resource_attributes: { 'service.name': 'api' },
      });
      expect(failed).toEqual({
        log_id: expect.any(String),
        timestamp: '2024-06-01T11:00:00.123456Z',
        observed_at: '2024-06-01T11:00:01.000000Z',
        severity: 'error',
        severity_number: 17,
        severity_text: 'ERROR',
        body: 'payment failed',
        trace_id: trace,
        span_id: 'abcdefabcdefabcd',
        service_name: 'pay',
        environment: 'prod',
        scope_name: 'pay.logger',
        attributes: { 'order.id': 42 },
        resource_attributes: { 'service.name': 'pay', 'host.name': 'h1' },
      });
      expect(await bodies(key, '/logs?since=2d')).toEqual(['later', 'payment failed', 'too old']);
    });

    it('"`--sort` (`timestamp_desc` default, `timestamp_asc`)"; any other sort is 400', async () => {
      const { projectId, key } = await fresh();
      await insertLogs(db(), [
        { projectId, at: '2024-06-01T10:00:00Z', body: 'a' },
        { projectId, at: '2024-06-01T11:00:00Z', body: 'b' },
      ]);
      expect(await bodies(key, '/logs?sort=timestamp_asc')).toEqual(['a', 'b']);
      expect(await bodies(key, '/logs?sort=timestamp_desc')).toEqual(['b', 'a']);
      const bad = await get(key, '/logs?sort=newest');
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('timestamp_desc, timestamp_asc') });
    });

    it('"`--limit` default 50": limit default 50, at most 1,000; cursor continues in either sort, not across sorts', async () => {
      const { projectId, key } = await fresh();
      await insertLogs(
        db(),
        Array.from({ length: 60 }, (_, i) => ({ projectId, at: `2024-06-01T11:${String(i % 60).padStart(2, '0')}:00Z`, body: `m${String(i).padStart(2, '0')}` })),
      );
      const first = await get(key, '/logs');
      expect(first.json().logs).toHaveLength(50);
      const rest = await get(key, `/logs?cursor=${first.json().next_cursor}`);
      expect(rest.json().logs).toHaveLength(10);
      expect(rest.json().next_cursor).toBeNull();
      const all = [...first.json().logs, ...rest.json().logs].map((l: { body: string }) => l.body);
      expect(all).toEqual(Array.from({ length: 60 }, (_, i) => `m${String(59 - i).padStart(2, '0')}`));
      const asc = await get(key, '/logs?sort=timestamp_asc&limit=30');
      const asc2 = await get(key, `/logs?sort=timestamp_asc&limit=30&cursor=${asc.json().next_cursor}`);
      expect([...asc.json().logs, ...asc2.json().logs].map((l: { body: string }) => l.body)).toEqual([...all].reverse());
      const crossed = await get(key, `/logs?cursor=${asc.json().next_cursor}`);
      expect(crossed.statusCode).toBe(400);
      expect(crossed.json().message).toContain('sort');
      for (const q of ['limit=0', 'limit=1001', 'limit=', 'cursor=x&cursor=y', 'cursor=bm90LWEtY3Vyc29y', 'severity=loud', 'trace_id=123', 'q=', 'since=tomorrow']) {
        const r = await get(key, `/logs?${q}`);
        expect(r.statusCode, q).toBe(400);
        expect(r.json().error).toBe('invalid_request');
      }
      expect((await get(key, '/logs?limit=1000')).statusCode).toBe(200);
    });

    it('filters: service (OR), minimum severity (number, else text), q (case-insensitive body substring), trace_id, attr; AND across', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      await insertLogs(db(), [
        { projectId, at: '2024-06-01T11:00:01Z', body: 'Disk FULL on /var', service: 'api', severityNumber: SEV.warn, attributes: { 'http.status_code': 507 } },
        { projectId, at: '2024-06-01T11:00:02Z', body: 'user login', service: 'auth', severityNumber: SEV.info, traceId: trace, attributes: { 'user.id': 'u1' } },
        { projectId, at: '2024-06-01T11:00:03Z', body: 'crash', service: 'worker', severityNumber: null, severityText: 'CRITICAL' },
        { projectId, at: '2024-06-01T11:00:04Z', body: 'no severity', service: 'api', severityNumber: null, severityText: null },
        { projectId, at: '2024-06-01T11:00:05Z', body: 'debug line', service: 'api', severityNumber: null, severityText: 'debug2', resource: { region: 'eu' } },
      ]);
      expect(await bodies(key, '/logs?service=auth,worker')).toEqual(['crash', 'user login']);
      expect(await bodies(key, '/logs?service=auth&service=worker')).toEqual(['crash', 'user login']);
      expect(await bodies(key, '/logs?severity=warn')).toEqual(['crash', 'Disk FULL on /var']);
      expect(await bodies(key, '/logs?severity=fatal')).toEqual(['crash']);
      expect(await bodies(key, '/logs?severity=trace')).toEqual(['debug line', 'crash', 'user login', 'Disk FULL on /var']);
      expect(await bodies(key, '/logs?q=disk%20full')).toEqual(['Disk FULL on /var']);
      expect(await bodies(key, `/logs?trace_id=${trace.toUpperCase()}`)).toEqual(['user login']);
      expect(await bodies(key, '/logs?attr=user.id=u1')).toEqual(['user login']);
      expect(await bodies(key, '/logs?attr=http.status_code=507')).toEqual(['Disk FULL on /var']);
      expect(await bodies(key, '/logs?attr=region=eu')).toEqual(['debug line']);
      expect(await bodies(key, '/logs?service=api&severity=warn')).toEqual(['Disk FULL on /var']);
      expect(await bodies(key, '/logs?service=api&q=login')).toEqual([]);
      const levels = (await get(key, '/logs?service=worker,api')).json().logs.map((l: { severity?: string }) => l.severity ?? null);
      expect(levels).toEqual(['debug', null, 'fatal', 'warn']);
    });

    it('needs logs:read; a project-scoped key is confined to its project (another project\'s logs are not seen)', async () => {
      const mine = await fresh();
      const other = await fresh();
      await insertLogs(db(), [{ projectId: other.projectId, at: '2024-06-01T11:00:00Z', body: 'theirs' }]);
      expect(await bodies(mine.key, '/logs')).toEqual([]);
      const denied = await get((await projectWithKey(t, ['traces:read'])).key, '/logs');
      expect(denied.statusCode).toBe(403);
      expect(denied.json().message).toContain('logs:read');
      expect((await get(mine.key, `/logs?project_id=${other.projectId}`)).statusCode).toBe(403);
    });
  });

  describe('GET /logs/{logId}/context', () => {
    it('the log and the nearest N records before and after of the same service, oldest first (default 10, at most 100)', async () => {
      const { projectId, key } = await fresh();
      const specs = Array.from({ length: 30 }, (_, i) => ({ projectId, at: `2024-06-01T11:00:${String(i).padStart(2, '0')}Z`, body: `api ${i}`, service: 'api' }));
      const ids = await insertLogs(db(), [...specs, { projectId, at: '2024-06-01T11:00:15.5Z', body: 'other service', service: 'db' }]);
      const r = await get(key, `/logs/${ids[15]}/context`);
      expect(r.statusCode).toBe(200);
      const body = r.json();
      expect(body.log.body).toBe('api 15');
      expect(body.before.map((l: { body: string }) => l.body)).toEqual(Array.from({ length: 10 }, (_, i) => `api ${5 + i}`));
      expect(body.after.map((l: { body: string }) => l.body)).toEqual(Array.from({ length: 10 }, (_, i) => `api ${16 + i}`));
      const narrow = (await get(key, `/logs/${ids[1]}/context?before=3&after=0`)).json();
      expect(narrow.before.map((l: { body: string }) => l.body)).toEqual(['api 0']);
      expect(narrow.after).toEqual([]);
      for (const q of ['before=101', 'after=-1', 'before=x']) expect((await get(key, `/logs/${ids[1]}/context?${q}`)).statusCode, q).toBe(400);
      expect((await get(key, `/logs/${ids[1]}/context?before=100`)).statusCode).toBe(200);
    });

    it('"404: missing object; object owned by another project (same answer)"', async () => {
      const mine = await fresh();
      const other = await fresh();
      const [theirs] = await insertLogs(db(), [{ projectId: other.projectId, at: '2024-06-01T11:00:00Z' }]);
      const foreign = await get(mine.key, `/logs/${theirs}/context`);
      const missing = await get(mine.key, '/logs/no-such-log/context');
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(missing.json());
      expect((await get(other.key, `/logs/${theirs}/context`)).statusCode).toBe(200);
    });
  });

  describe('DELETE /logs', () => {
    const del = (key: string, q: string) => t.call({ method: 'DELETE', url: `/api/v1/logs?${q}`, key });

    it('never deletes everything by accident: needs log_id, or since+until and one of service, trace_id, q, attr (400 otherwise, nothing deleted)', async () => {
      const { projectId, key } = await fresh();
      await insertLogs(db(), [{ projectId, at: '2024-06-01T11:00:00Z' }]);
      for (const q of ['', 'since=1d&until=2024-06-01T12:00:00Z', 'service=api', 'since=1d&service=api', 'until=2024-06-01T12:00:00Z&q=x', 'since=1d&until=2024-06-01T12:00:00Z&severity=info']) {
        const r = await del(key, q);
        expect(r.statusCode, q).toBe(400);
        expect(r.json().error).toBe('invalid_request');
      }
      expect(await bodies(key, '/logs')).toHaveLength(1);
    });

    it('needs logs:delete (403 with logs:read only)', async () => {
      const { projectId, key } = await fresh(['logs:read']);
      await insertLogs(db(), [{ projectId, at: '2024-06-01T11:00:00Z' }]);
      const r = await del(key, 'since=1d&until=2024-06-01T12:00:00Z&service=api');
      expect(r.statusCode).toBe(403);
      expect(r.json().message).toContain('logs:delete');
      expect(await bodies(key, '/logs')).toHaveLength(1);
    });

    it('removes the matching records of the project only and returns the count; by log_id too', async () => {
      const a = await fresh();
      const b = await fresh();
      const trace = newTraceId();
      const ids = await insertLogs(db(), [
        { projectId: a.projectId, at: '2024-06-01T11:00:00Z', body: 'keep other service', service: 'web' },
        { projectId: a.projectId, at: '2024-06-01T11:00:00Z', body: 'drop 1', service: 'api' },
        { projectId: a.projectId, at: '2024-06-01T11:10:00Z', body: 'drop 2', service: 'api', severityNumber: SEV.error },
        { projectId: a.projectId, at: '2024-06-01T09:00:00Z', body: 'keep outside window', service: 'api' },
        { projectId: a.projectId, at: '2024-06-01T11:20:00Z', body: 'by id', service: 'web', traceId: trace },
        { projectId: b.projectId, at: '2024-06-01T11:00:00Z', body: 'other project', service: 'api' },
      ]);
      const r = await del(a.key, 'since=2024-06-01T10:00:00Z&until=2024-06-01T12:00:00Z&service=api');
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({ deleted: 2 });
      expect(await bodies(a.key, '/logs')).toEqual(['by id', 'keep other service', 'keep outside window']);
      expect((await del(a.key, `log_id=${ids[4]}`)).json()).toEqual({ deleted: 1 });
      expect((await del(a.key, `log_id=${ids[4]}`)).json()).toEqual({ deleted: 0 });
      // another project's record cannot be deleted through this key
      expect((await del(a.key, 'since=1d&until=2024-06-01T12:00:00Z&q=other%20project')).json()).toEqual({ deleted: 0 });
      expect(await bodies(b.key, '/logs')).toEqual(['other project']);
    });

    it('20 concurrent identical deletes all answer 200 and remove each record once ("deleting must be idempotent and safe under concurrency")', async () => {
      const { projectId, key } = await fresh();
      await insertLogs(db(), Array.from({ length: 30 }, (_, i) => ({ projectId, at: '2024-06-01T11:00:00Z', body: `race ${i}`, service: 'api' })));
      const answers = await Promise.all(Array.from({ length: 20 }, () => del(key, 'since=1d&until=2024-06-01T12:00:00Z&service=api')));
      expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      expect(answers.reduce((n, r) => n + r.json().deleted, 0)).toBe(30);
      expect(await bodies(key, '/logs')).toEqual([]);
    });

    it('"Not undone by revocation: ... deletions (delete_log, delete_trace)"', async () => {
      const { projectId, key, keyId } = await fresh();
      await insertLogs(db(), [{ projectId, at: '2024-06-01T11:00:00Z', body: 'secret', service: 'api' }]);
      expect((await del(key, 'since=1d&until=2024-06-01T12:00:00Z&q=secret')).json()).toEqual({ deleted: 1 });
      await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
      expect(await bodies(t.ownerKey, `/logs?project_id=${projectId}&since=7d`)).toEqual([]);
    });
  });
});
