/** Cross-cutting HTTP conventions (spec 1, "Errors", "General query rules", "Authentication" 3). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../testing/app.js';

describe('HTTP conventions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ env: { SVC_BODY_LIMIT_BYTES: '2048' } });
  });
  afterAll(async () => t.close());

  it('unknown routes are 404 in the error shape', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not_found', message: 'route not found' });
  });

  it('"unknown query parameters are 400" also on a REST route that declares none (it was silently ignored), and nothing changes', async () => {
    const before = (await t.call({ method: 'GET', url: '/api/v1/projects' })).json().projects.length;
    const create = await t.call({ method: 'POST', url: '/api/v1/projects?sampling_rate=0', payload: { name: 'q' } });
    expect(create.statusCode).toBe(400);
    expect(create.json()).toEqual({ error: 'invalid_request', message: 'unknown query parameter "sampling_rate": this route takes no query parameters' });
    expect((await t.call({ method: 'GET', url: '/api/v1/projects' })).json().projects.length).toBe(before);
    expect((await t.call({ method: 'GET', url: '/api/v1/users/me?verbose=1' })).statusCode).toBe(400);
    // Outside the REST API (health checks of load balancers) parameters stay harmless.
    expect((await t.call({ method: 'GET', url: '/healthz?probe=1', key: null })).statusCode).toBe(200);
  });

  it('a wrong method is 405 with Allow', async () => {
    const res = await t.call({ method: 'DELETE', url: '/api/v1/account/api-keys' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, POST');
    expect(res.json().error).toBe('method_not_allowed');
    const param = await t.call({ method: 'PUT', url: '/api/v1/projects/abc' });
    expect(param.statusCode).toBe(405);
  });

  it('a body that is not valid JSON is 400 invalid_request without library text', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/projects', headers: { 'content-type': 'application/json' }, payload: '{"name":' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: 'request body is not valid JSON' });
  });

  it('an oversize body is 413', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'x'.repeat(4000) } });
    expect(res.statusCode).toBe(413);
    // the answer says what the limit is and what sets it
    expect(res.json()).toMatchObject({ error: 'payload_too_large', details: { limit_bytes: 2048 } });
    expect(res.json().message).toContain('SVC_BODY_LIMIT_BYTES');
    expect(res.json().error).toBe('payload_too_large');
  });


  it('a missing credential is 401 before anything else', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/projects?limit=abc', key: null });
    expect(res.statusCode).toBe(401);
  });

  it('a present-but-invalid query value is 400; unknown query parameters are refused', async () => {
    expect((await t.call({ method: 'GET', url: '/api/v1/projects?limit=abc' })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/projects?limti=5' })).json()).toMatchObject({ error: 'invalid_request' });
    expect((await t.call({ method: 'GET', url: '/api/v1/projects?limit=-1' })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/projects?limit=4294967296' })).statusCode).toBe(400);
  });

  it('malformed query syntax is rejected, never partly read', async () => {
    expect((await t.call({ method: 'GET', url: '/api/v1/projects?limit=5;cursor=x' })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: '/api/v1/projects?cursor=%G1' })).statusCode).toBe(400);
  });

  describe('Authentication rule 3: project selection by a project-scoped key', () => {
    let a: { projectId: string; key: string };
    let other: string;
    beforeAll(async () => {
      a = await projectWithKey(t, ['audit:read']);
      other = (await projectWithKey(t, ['audit:read'])).projectId;
    });
    const get = (q: string) => t.call({ method: 'GET', url: `/api/v1/account/audit-events?${q}`, key: a.key });

    it('any non-empty conflicting value is 403 permission_denied before product logic', async () => {
      const res = await get(`project_id=${other}`);
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('permission_denied');
    });

    it('a conflicting value hidden in a repeated parameter is 403', async () => {
      expect((await get(`project_id=${a.projectId}&project_id=${other}`)).statusCode).toBe(403);
    });

    it('a selector malformed in a way the standard parser would discard is 403 (semicolon, bad escape)', async () => {
      expect((await get(`project_id=${a.projectId};x`)).statusCode).toBe(403);
      expect((await get(`limit=1;project_id=${other}`)).statusCode).toBe(403);
      expect((await get('project_id=%zz')).statusCode).toBe(403);
    });

    it('a malformed unrelated query field does not affect an exact or omitted selector (it is 400, not 403)', async () => {
      expect((await get('result=%zz')).statusCode).toBe(400);
    });

    it('the key may omit the selector', async () => {
      expect((await get('')).statusCode).toBe(200);
    });
  });

  it('GET /healthz and GET /readyz answer without a credential', async () => {
    expect((await t.call({ method: 'GET', url: '/healthz', key: null })).json()).toEqual({ status: 'ok' });
    expect((await t.call({ method: 'GET', url: '/readyz', key: null })).json()).toMatchObject({ status: 'ready', control: 'sqlite', telemetry: 'duckdb' });
  });

  it('GET /readyz is 503 with Retry-After when a store is unreachable', async () => {
    const ping = t.ctx.telemetry.ping;
    t.ctx.telemetry.ping = () => Promise.reject(new Error('down'));
    try {
      const res = await t.call({ method: 'GET', url: '/readyz', key: null });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toEqual({ error: 'unavailable', message: 'control store ok, telemetry store unreachable' });
    } finally {
      t.ctx.telemetry.ping = ping;
    }
  });

  it('GET /api/v1/openapi.json is OpenAPI 3.1 and covers every route', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/openapi.json', key: null });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${path}`);
    const routes = t.app.declaredRoutes.map((r) => `${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.filter((r) => !documented.has(r))).toEqual([]);
  });

  it('"every operation has an operationId and a summary": unique, camelCase verb+resource, one line', async () => {
    const doc = (await t.call({ method: 'GET', url: '/api/v1/openapi.json', key: null })).json();
    const ops = Object.entries<Record<string, { operationId?: string; summary?: string }>>(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, ...op })),
    );
    expect(ops.length).toBe(t.app.declaredRoutes.length);
    expect(ops.filter((o) => !o.operationId || !/^[a-z]+[A-Z][A-Za-z0-9]*$/.test(o.operationId)).map((o) => o.where)).toEqual([]);
    expect(ops.filter((o) => !o.summary || /\n/.test(o.summary)).map((o) => o.where)).toEqual([]);
    const ids = ops.map((o) => o.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });
});

describe('errors before routing', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t.close());

  it('a malformed percent escape in the path is 400 in the error shape', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/metrics/%ZZ/labels' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: 'malformed URL path (invalid percent escape)' });
  });

  it('a path parameter longer than the router reads is 400 saying so', async () => {
    for (const url of [`/api/v1/memory-items/${'k'.repeat(5000)}/label`, `/api/v1/traces/${'a'.repeat(1001)}`]) {
      const res = await t.call({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', message: 'a path segment is longer than 1000 characters, more than any id or key this service takes' });
    }
  });
});
