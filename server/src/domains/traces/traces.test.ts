/** `/services` and `/traces` over HTTP (spec 1, "Raw observability", "General query rules", "Pagination", "Errors", Authentication 3 and 10). */
import { allowAllContent } from '../../testing/content-policy.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLogs } from '../../testing/log-fixtures.js';
import { rows } from '../../testing/rows-at-rest.js';
import { insertBigTrace, insertSpans, newSpanId, newTraceId } from '../../testing/trace-fixtures.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';

const NOW = '2024-06-01T12:00:00.000Z';

describe('traces and services', () => {
  const clock = fixedClock(NOW);
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock });
  });
  afterAll(async () => t.close());

  const fresh = (scopes = ['traces:read', 'traces:delete', 'logs:read']) => projectWithKey(t, scopes);
  const get = (key: string, url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key });

  describe('GET /services', () => {
    it('lists services seen in spans and logs of the window (default the last 24 hours) with span, error and log counts', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      await insertSpans(t.ctx.telemetry, [
        { projectId, traceId: trace, service: 'api', start: '2024-06-01T10:00:00Z', status: 'error' },
        { projectId, traceId: trace, service: 'api', start: '2024-06-01T11:00:00Z' },
        { projectId, traceId: trace, service: 'db', start: '2024-06-01T11:30:00Z', status: 'ok' },
        { projectId, traceId: trace, service: 'old', start: '2024-05-30T11:00:00Z' }, // outside the default window
        { projectId, traceId: trace, service: null, start: '2024-06-01T11:00:00Z' }, // no service.name: not listed
      ]);
      await insertLogs(t.ctx.telemetry, [
        { projectId, service: 'worker', at: '2024-06-01T09:00:00Z' },
        { projectId, service: 'api', at: '2024-06-01T08:00:00Z' },
      ]);
      const r = await get(key, '/services');
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({
        services: [
          { name: 'api', span_count: 2, error_span_count: 1, log_count: 1, first_seen: '2024-06-01T08:00:00.000000Z', last_seen: '2024-06-01T11:00:00.000000Z' },
          { name: 'db', span_count: 1, error_span_count: 0, log_count: 0, first_seen: '2024-06-01T11:30:00.000000Z', last_seen: '2024-06-01T11:30:00.000000Z' },
          { name: 'worker', span_count: 0, error_span_count: 0, log_count: 1, first_seen: '2024-06-01T09:00:00.000000Z', last_seen: '2024-06-01T09:00:00.000000Z' },
        ],
        total_count: 3,
        since: '2024-05-31T12:00:00.000000Z',
        until: '2024-06-01T12:00:00.000000Z',
      });
      const wide = await get(key, '/services?since=7d');
      expect(wide.json().services.map((s: { name: string }) => s.name)).toEqual(['api', 'db', 'old', 'worker']);
    });

    it('counts come from what the credential may read: traces:read gives span counts, logs:read log counts; neither is 403', async () => {
      const { projectId, key } = await fresh(['traces:read']);
      await insertSpans(t.ctx.telemetry, [{ projectId, traceId: newTraceId(), service: 'api', start: '2024-06-01T11:00:00Z' }]);
      await insertLogs(t.ctx.telemetry, [{ projectId, service: 'logger', at: '2024-06-01T11:00:00Z' }]);
      expect((await get(key, '/services')).json().services).toEqual([
        { name: 'api', span_count: 1, error_span_count: 0, first_seen: '2024-06-01T11:00:00.000000Z', last_seen: '2024-06-01T11:00:00.000000Z' },
      ]);
      const logsOnly = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'l', scopes: ['logs:read'], project_id: projectId } });
      expect((await get(logsOnly.json().key, '/services')).json().services).toEqual([
        { name: 'logger', log_count: 1, first_seen: '2024-06-01T11:00:00.000000Z', last_seen: '2024-06-01T11:00:00.000000Z' },
      ]);
      const neither = await projectWithKey(t, ['metrics:read']);
      const r = await get(neither.key, '/services');
      expect(r.statusCode).toBe(403);
      expect(r.json()).toMatchObject({ error: 'permission_denied', message: expect.stringContaining('traces:read or logs:read') });
    });

    it('is a bounded list: at most 1,000 services, total_count counts all, truncated says the cap cut it', async () => {
      const { projectId, key } = await fresh();
      await insertLogs(
        t.ctx.telemetry,
        Array.from({ length: 1001 }, (_, i) => ({ projectId, at: 1717236000000000, body: 'x', service: `svc-${String(i).padStart(4, '0')}` })),
      );
      const body = (await get(key, '/services')).json();
      expect(body.services).toHaveLength(1000);
      expect(body.total_count).toBe(1001);
      expect(body.truncated).toBe(true);
      expect(body.services[999].name).toBe('svc-0999');
    });

    it('"An absent parameter means no filter"; a present-but-invalid time is 400', async () => {
      const { key } = await fresh();
      for (const q of ['since=yesterday', 'until=2024-13-01T00:00:00Z', 'since=0m', 'since=2024-06-01T12:00:00Z&until=2024-06-01T11:00:00Z', 'since=']) {
        const r = await get(key, `/services?${q}`);
        expect(r.statusCode, q).toBe(400);
        expect(r.json().error).toBe('invalid_request');
      }
    });
  });

  describe('GET /traces', () => {
    async function seed(projectId: string) {
      const a = newTraceId();
      const b = newTraceId();
      const c = newTraceId();
      const aRoot = newSpanId();
      await insertSpans(t.ctx.telemetry, [
        // a: api -> db, 250 ms, an error in db
        { projectId, traceId: a, spanId: aRoot, name: 'GET /users', service: 'api', start: '2024-06-01T11:00:00Z', durationMs: 250, attributes: { 'http.method': 'GET', 'http.status_code': 200 } },
        { projectId, traceId: a, parentSpanId: aRoot, name: 'SELECT users', service: 'db', start: '2024-06-01T11:00:00.100Z', durationMs: 50, status: 'error', resource: { 'deployment.environment': 'prod' } },
        // b: api only, 10 ms, newer
        { projectId, traceId: b, name: 'POST /orders', service: 'api', start: '2024-06-01T11:30:00Z', durationMs: 10, status: 'ok', attributes: { 'http.method': 'POST' } },
        // c: root not received yet, worker only, oldest
        { projectId, traceId: c, parentSpanId: newSpanId(), name: 'consume', service: 'worker', start: '2024-06-01T10:00:00Z', durationMs: 1000 },
      ]);
      return { a, b, c, aRoot };
    }
    const ids = (r: { json(): { traces: { trace_id: string }[] } }) => r.json().traces.map((x) => x.trace_id);

    it('lists traces newest first with root span, duration, span and error counts and services', async () => {
      const { projectId, key } = await fresh();
      const { a, b, c, aRoot } = await seed(projectId);
      const r = await get(key, '/traces');
      expect(r.statusCode).toBe(200);
      expect(ids(r)).toEqual([b, a, c]);
      expect(r.json().traces[1]).toEqual({
        trace_id: a,
        root_span_id: aRoot,
        root_span_name: 'GET /users',
        root_service_name: 'api',
        root_missing: false,
        started_at: '2024-06-01T11:00:00.000000Z',
        ended_at: '2024-06-01T11:00:00.250000Z',
        duration_ms: 250,
        span_count: 2,
        error_count: 1,
        services: ['api', 'db'],
      });
      expect(r.json().traces[2]).toMatchObject({ trace_id: c, root_span_name: 'consume', root_missing: true });
      expect(r.json().next_cursor).toBeNull();
    });

    it('filters: service, name, status, attr (span or resource attribute), duration bounds; conditions hold on one span', async () => {
      const { projectId, key } = await fresh();
      const { a, b, c } = await seed(projectId);
      expect(ids(await get(key, '/traces?service=api'))).toEqual([b, a]);
      expect(ids(await get(key, '/traces?service=db,worker'))).toEqual([a, c]);
      expect(ids(await get(key, '/traces?service=db&service=worker'))).toEqual([a, c]);
      expect(ids(await get(key, '/traces?name=SELECT%20users'))).toEqual([a]);
      expect(ids(await get(key, '/traces?status=error'))).toEqual([a]);
      expect(ids(await get(key, '/traces?status=ok'))).toEqual([b]);
      expect(ids(await get(key, '/traces?attr=http.method=GET'))).toEqual([a]);
      expect(ids(await get(key, '/traces?attr=http.method=GET&attr=http.method=POST'))).toEqual([b, a]);
      expect(ids(await get(key, '/traces?attr=http.status_code=200'))).toEqual([a]);
      expect(ids(await get(key, '/traces?attr=deployment.environment=prod'))).toEqual([a]);
      // service api and status error are on different spans of a: no span meets both.
      expect(ids(await get(key, '/traces?service=api&status=error'))).toEqual([]);
      expect(ids(await get(key, '/traces?min_duration_ms=100'))).toEqual([a, c]);
      expect(ids(await get(key, '/traces?min_duration_ms=100&max_duration_ms=250'))).toEqual([a]);
      expect(ids(await get(key, '/traces?max_duration_ms=10'))).toEqual([b]);
    });

    it('the window applies to the trace start (its first span): since/until as RFC 3339 or a duration before now', async () => {
      const { projectId, key } = await fresh();
      const { a, b, c } = await seed(projectId);
      expect(ids(await get(key, '/traces?since=1h'))).toEqual([b, a]);
      expect(ids(await get(key, '/traces?since=2024-06-01T10:30:00Z&until=2024-06-01T11:15:00Z'))).toEqual([a]);
      expect(ids(await get(key, '/traces?until=2024-06-01T10:00:00Z'))).toEqual([c]);
      // microsecond precision at the edge: closed window
      expect(ids(await get(key, '/traces?since=2024-06-01T11:00:00Z&until=2024-06-01T11:00:00Z'))).toEqual([a]);
      // a's second span starts in this window, the trace does not
      expect(ids(await get(key, '/traces?since=2024-06-01T11:00:00.000001Z&until=2024-06-01T11:00:00.2Z'))).toEqual([]);
    });

    it('"Pagination": opaque cursor, limit default 20 max 100, duplicate cursor 400', async () => {
      const { projectId, key } = await fresh();
      const traces = Array.from({ length: 25 }, () => newTraceId());
      await insertSpans(
        t.ctx.telemetry,
        traces.map((traceId, i) => ({ projectId, traceId, start: `2024-06-01T11:${String(i).padStart(2, '0')}:00Z` })),
      );
      const first = await get(key, '/traces');
      expect(first.json().traces).toHaveLength(20);
      const seen = [...ids(first)];
      const second = await get(key, `/traces?cursor=${first.json().next_cursor}`);
      expect(second.json().traces).toHaveLength(5);
      expect(second.json().next_cursor).toBeNull();
      seen.push(...ids(second));
      expect(seen).toEqual([...traces].reverse());
      expect(ids(await get(key, '/traces?limit=3'))).toEqual(traces.slice(-3).reverse());
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=a&cursor=b', 'cursor=!!', 'status=failed', 'attr=novalue', 'attr=9bad=1', 'min_duration_ms=x', 'min_duration_ms=5&max_duration_ms=1', 'min_duration_ms=1e16', 'max_duration_ms=1e300', 'min_duration_ms=99999999999999999999', 'max_duration_ms=1e400', 'min_duration_ms=-1', 'unknown=1']) {
        const r = await get(key, `/traces?${q}`);
        expect(r.statusCode, q).toBe(400);
        expect(r.json().error).toBe('invalid_request');
      }
      expect((await get(key, '/traces?cursor=a&cursor=b')).json().message).toBe('cursor must be provided at most once');
      expect((await get(key, '/traces?cursor=')).statusCode).toBe(200);
    });

    it('at most 5 attr keys and 50 values per key; keys at most 128 characters', async () => {
      const { key } = await fresh();
      const six = Array.from({ length: 6 }, (_, i) => `attr=k${i}=v`).join('&');
      expect((await get(key, `/traces?${six}`)).statusCode).toBe(400);
      const many = Array.from({ length: 51 }, (_, i) => `attr=k=v${i}`).join('&');
      expect((await get(key, `/traces?${many}`)).statusCode).toBe(400);
      expect((await get(key, `/traces?attr=${'k'.repeat(129)}=v`)).statusCode).toBe(400);
      expect((await get(key, `/traces?attr=${'k'.repeat(128)}=v`)).statusCode).toBe(200);
    });
  });

  describe('GET /traces/{traceId}', () => {
    it('"an object of another project answers like a missing one": the same trace id stored in two projects is two traces, each read only with its own spans and events', async () => {
      const a = await fresh();
      const b = await fresh();
      const trace = newTraceId();
      await insertSpans(t.ctx.telemetry, [
        { projectId: a.projectId, traceId: trace, name: 'a-root', start: '2024-06-01T11:00:00Z', durationMs: 10, events: [{ name: 'a-event', at: '2024-06-01T11:00:00.001Z' }] },
        { projectId: b.projectId, traceId: trace, name: 'b-root', start: '2024-06-01T11:00:00Z', durationMs: 10 },
        { projectId: b.projectId, traceId: trace, name: 'b-child', start: '2024-06-01T11:00:00.002Z', durationMs: 1, events: [{ name: 'b-event', at: '2024-06-01T11:00:00.003Z' }] },
      ]);
      const read = async (key: string) => {
        const r = await get(key, `/traces/${trace}`);
        expect(r.statusCode).toBe(200);
        const spans = r.json().spans as { name: string; events?: { name: string }[] }[];
        return { count: r.json().span_count, names: spans.flatMap((x) => [x.name, ...(x.events ?? []).map((e) => e.name)]).sort() };
      };
      expect(await read(a.key)).toEqual({ count: 1, names: ['a-event', 'a-root'] });
      expect(await read(b.key)).toEqual({ count: 2, names: ['b-child', 'b-event', 'b-root'] });
      const other = await fresh();
      expect((await get(other.key, `/traces/${trace}`)).statusCode).toBe(404);
    });

    it('returns the span tree with attributes, resource attributes and span events; missing parents are orphans at the top level', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      const [root, child, grandchild, orphan] = [newSpanId(), newSpanId(), newSpanId(), newSpanId()];
      await insertSpans(t.ctx.telemetry, [
        {
          projectId, traceId: trace, spanId: root, name: 'GET /', kind: 'server', service: 'api', environment: 'prod', scope: 'http',
          start: '2024-06-01T11:00:00Z', durationMs: 100, attributes: { 'http.route': '/' }, resource: { 'host.name': 'h1' },
          events: [{ name: 'exception', at: '2024-06-01T11:00:00.050Z', attributes: { 'exception.type': 'Error' } }],
        },
        { projectId, traceId: trace, spanId: grandchild, parentSpanId: child, name: 'query', service: 'db', start: '2024-06-01T11:00:00.020Z', durationMs: 5 },
        { projectId, traceId: trace, spanId: child, parentSpanId: root, name: 'load', service: 'api', start: '2024-06-01T11:00:00.010Z', durationMs: 50, status: 'error', statusMessage: 'boom' },
        { projectId, traceId: trace, spanId: orphan, parentSpanId: newSpanId(), name: 'late', service: 'api', start: '2024-06-01T11:00:00.005Z', durationMs: 1 },
      ]);
      const r = await get(key, `/traces/${trace.toUpperCase()}`);
      expect(r.statusCode).toBe(200);
      const body = r.json();
      expect(body).toMatchObject({
        trace_id: trace,
        started_at: '2024-06-01T11:00:00.000000Z',
        ended_at: '2024-06-01T11:00:00.100000Z',
        duration_ms: 100,
        span_count: 4,
        error_count: 1,
        services: ['api', 'db'],
      });
      // Depth-first: the root and its subtree, then the orphan (top-level spans by start).
      expect(body.spans.map((s: { span_id: string; depth: number }) => [s.span_id, s.depth])).toEqual([
        [root, 0],
        [child, 1],
        [grandchild, 2],
        [orphan, 0],
      ]);
      expect(body.spans[0]).toEqual({
        span_id: root,
        depth: 0,
        children: [child],
        name: 'GET /',
        kind: 'server',
        service_name: 'api',
        environment: 'prod',
        scope_name: 'http',
        started_at: '2024-06-01T11:00:00.000000Z',
        ended_at: '2024-06-01T11:00:00.100000Z',
        duration_ms: 100,
        status: { code: 'unset' },
        attributes: { 'http.route': '/' },
        resource_attributes: { 'service.name': 'api', 'host.name': 'h1' },
        events: [{ name: 'exception', timestamp: '2024-06-01T11:00:00.050000Z', attributes: { 'exception.type': 'Error' } }],
      });
      expect(body.spans[1]).toMatchObject({ span_id: child, parent_span_id: root, children: [grandchild], status: { code: 'error', message: 'boom' } });
      expect(body.spans[1].orphan).toBeUndefined();
      expect(body.spans[3]).toMatchObject({ span_id: orphan, orphan: true, depth: 0, children: [] });
    });

    it('a span stored twice (retried export) appears once; a parent cycle is broken at its earliest span (every span appears once)', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      const [x, y] = [newSpanId(), newSpanId()];
      await insertSpans(t.ctx.telemetry, [
        { projectId, traceId: trace, spanId: x, parentSpanId: y, name: 'x', start: '2024-06-01T11:00:00Z' },
        { projectId, traceId: trace, spanId: y, parentSpanId: x, name: 'y', start: '2024-06-01T11:00:01Z' },
        { projectId, traceId: trace, spanId: y, parentSpanId: x, name: 'y', start: '2024-06-01T11:00:01Z', ingestedAt: '2024-06-01T11:05:00Z' },
      ]);
      const body = (await get(key, `/traces/${trace}`)).json();
      expect(body.span_count).toBe(2);
      expect(body.spans).toHaveLength(2);
      expect(body.spans[0]).toMatchObject({ span_id: x, parent_span_id: y, orphan: true, depth: 0, children: [y] });
      expect(body.spans[1]).toMatchObject({ span_id: y, parent_span_id: x, depth: 1, children: [] });
      expect(body.spans[1].orphan).toBeUndefined();
    });

    it('a deep trace (a chain of 10,000 spans) is answered whole', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      await insertBigTrace(t.ctx.telemetry, projectId, trace, 10_000, '2024-06-01T11:00:00Z', true);
      const r = await get(key, `/traces/${trace}`);
      expect(r.statusCode).toBe(200);
      const spans = r.json().spans;
      expect(spans).toHaveLength(10_000);
      expect(spans[9_999]).toMatchObject({ depth: 9_999, children: [] });
      expect(spans.every((s: { depth: number }, i: number) => s.depth === i)).toBe(true);
    });

    it('"429: read whose result is too large to answer honestly": more than 10,000 spans, never truncated', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      await insertBigTrace(t.ctx.telemetry, projectId, trace, 10_001, '2024-06-01T11:00:00Z');
      const r = await get(key, `/traces/${trace}`);
      expect(r.statusCode).toBe(429);
      expect(r.json()).toMatchObject({ error: 'result_too_large', details: { limit: 10_000, span_count: 10_001 } });
    });

    it('"404: missing object; object owned by another project (same answer)"; a malformed id is 400', async () => {
      const mine = await fresh();
      const other = await fresh();
      const trace = newTraceId();
      await insertSpans(t.ctx.telemetry, [{ projectId: other.projectId, traceId: trace, start: '2024-06-01T11:00:00Z' }]);
      const foreign = await get(mine.key, `/traces/${trace}`);
      const missing = await get(mine.key, `/traces/${newTraceId()}`);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(missing.json());
      expect((await get(mine.key, '/traces/xyz')).statusCode).toBe(400);
      expect((await get(other.key, `/traces/${trace}`)).statusCode).toBe(200);
    });

    it('recorded-content attributes are withheld without agents:content:read, and a filter on one is 403', async () => {
      const { projectId, key } = await fresh();
      const trace = newTraceId();
      await insertSpans(t.ctx.telemetry, [
        {
          projectId, traceId: trace, name: 'chat', start: '2024-06-01T11:00:00Z',
          attributes: { 'gen_ai.prompt': 'secret', 'gen_ai.request.model': 'm' },
          events: [{ name: 'gen_ai.content.prompt', at: '2024-06-01T11:00:00Z', attributes: { 'gen_ai.prompt': 'secret' } }],
        },
      ]);
      const span = (await get(key, `/traces/${trace}`)).json().spans[0];
      expect(span.attributes).toEqual({ 'gen_ai.request.model': 'm' });
      expect(span.withheld_attribute_keys).toEqual(['gen_ai.prompt']);
      expect(span.events[0]).toEqual({ name: 'gen_ai.content.prompt', timestamp: '2024-06-01T11:00:00.000000Z', attributes: {}, withheld_attribute_keys: ['gen_ai.prompt'] });
      expect((await get(key, '/traces?attr=gen_ai.prompt=secret')).statusCode).toBe(403);
      const reader = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'c', scopes: ['traces:read', 'agents:content:read'], project_id: projectId } });
      // The scope is half of it: the project's read policy must allow the class too (none: withheld).
      expect((await get(reader.json().key, `/traces/${trace}`)).json().spans[0].withheld_attribute_keys).toEqual(['gen_ai.prompt']);
      await allowAllContent(t, projectId);
      const full = (await get(reader.json().key, `/traces/${trace}`)).json().spans[0];
      expect(full.attributes['gen_ai.prompt']).toBe('secret');
      expect(full.withheld_attribute_keys).toBeUndefined();
      expect((await get(reader.json().key, '/traces?attr=gen_ai.prompt=secret')).json().traces).toHaveLength(1);
    });
  });

  describe('DELETE /traces/{traceId}', () => {
    it('needs traces:delete (403 with traces:read only; the trace stays)', async () => {
      const { projectId, key } = await fresh(['traces:read']);
      const trace = newTraceId();
      await insertSpans(t.ctx.telemetry, [{ projectId, traceId: trace, start: '2024-06-01T11:00:00Z' }]);
      const r = await t.call({ method: 'DELETE', url: `/api/v1/traces/${trace}`, key });
      expect(r.statusCode).toBe(403);
      expect(r.json().message).toContain('traces:delete');
      expect((await get(key, `/traces/${trace}`)).statusCode).toBe(200);
    });

    it('removes every span and span event of the trace in the project only; other traces and logs stay', async () => {
      const a = await fresh();
      const b = await fresh();
      const trace = newTraceId();
      const keep = newTraceId();
      const spec = { traceId: trace, start: '2024-06-01T11:00:00Z', events: [{ name: 'e', at: '2024-06-01T11:00:00Z' }] };
      await insertSpans(t.ctx.telemetry, [
        { ...spec, projectId: a.projectId },
        { ...spec, projectId: a.projectId, parentSpanId: newSpanId() },
        { ...spec, projectId: b.projectId },
        { projectId: a.projectId, traceId: keep, start: '2024-06-01T11:00:00Z' },
      ]);
      await insertLogs(t.ctx.telemetry, [{ projectId: a.projectId, traceId: trace, at: '2024-06-01T11:00:00Z' }]);
      const r = await t.call({ method: 'DELETE', url: `/api/v1/traces/${trace}`, key: a.key });
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({ trace_id: trace, deleted: true, spans_deleted: 2, events_deleted: 2 });
      expect((await get(a.key, `/traces/${trace}`)).statusCode).toBe(404);
      expect(ids(await get(a.key, '/traces'))).toEqual([keep]);
      expect((await get(b.key, `/traces/${trace}`)).statusCode).toBe(200);
      const [counts] = await rows(t, 'SELECT (SELECT count(*) FROM span_events WHERE project_id = $p AND trace_id = $t) AS events, (SELECT count(*) FROM logs WHERE project_id = $p) AS logs', { p: a.projectId, t: trace });
      expect([Number(counts.events), Number(counts.logs)]).toEqual([0, 1]);
      // Another project's copy cannot be deleted through this key: 404 like a missing one.
      expect((await t.call({ method: 'DELETE', url: `/api/v1/traces/${trace}`, key: a.key })).statusCode).toBe(404);
    });

    it('"Not undone by revocation: ... deletions (delete_log, delete_trace)"', async () => {
      const { projectId, key, keyId } = await fresh();
      const trace = newTraceId();
      await insertSpans(t.ctx.telemetry, [{ projectId, traceId: trace, start: '2024-06-01T11:00:00Z' }]);
      expect((await t.call({ method: 'DELETE', url: `/api/v1/traces/${trace}`, key })).statusCode).toBe(200);
      await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
      expect((await t.call({ method: 'GET', url: `/api/v1/traces/${trace}?project_id=${projectId}` })).statusCode).toBe(404);
    });
  });

  function ids(r: { json(): { traces: { trace_id: string }[] } }) {
    return r.json().traces.map((x) => x.trace_id);
  }
});
