/** Scopes and project selection of the metrics endpoints (spec 1, "Metrics endpoints", "Authentication" 3, "Errors"). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { insertMetric } from './test-data.js';

const NOW = '2024-06-01T12:00:00.000Z';
const AT = '2024-06-01T11:00:00.000Z';

describe('metrics access', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  async function orgKey(scopes: string[]): Promise<string> {
    const r = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'org', scopes, org_wide: true } });
    expect(r.statusCode).toBe(201);
    return r.json().key;
  }

  /** One request per endpoint, with `qs` appended to its URL. */
  const endpoints = (qs: string) => [
    { method: 'GET' as const, url: `/api/v1/metrics/names${qs}` },
    { method: 'GET' as const, url: `/api/v1/metrics/cpu/labels${qs}` },
    { method: 'POST' as const, url: `/api/v1/metrics/aggregate${qs}`, payload: { metric_name: 'cpu' } },
    { method: 'POST' as const, url: `/api/v1/metrics/histogram${qs}`, payload: { metric_name: 'cpu' } },
  ];

  it('metric reads need `metrics:read` (403 permission_denied without it)', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:delete']);
    for (const req of endpoints(`?project_id=${projectId}`)) {
      const r = await t.call({ ...req, key });
      expect(r.statusCode, req.url).toBe(403);
      expect(r.json().error).toBe('permission_denied');
      expect(r.json().message).toContain('metrics:read');
    }
  });

  it('"delete needs `metrics:delete`": a key holding only metrics:read gets 403 and the data stays', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:read']);
    await insertMetric(t, { projectId, name: 'cpu' }, [[AT, 1]]);
    const r = await t.call({ method: 'DELETE', url: '/api/v1/metrics/cpu', key });
    expect(r.statusCode).toBe(403);
    expect(r.json()).toMatchObject({ error: 'permission_denied' });
    const names = await t.call({ method: 'GET', url: '/api/v1/metrics/names', key });
    expect(names.json().metrics).toEqual([{ name: 'cpu' }]);
  });

  it('"an organization-level credential must name `project_id`" (400 on every metrics endpoint)', async () => {
    const key = await orgKey(['metrics:read', 'metrics:delete']);
    for (const req of [...endpoints(''), { method: 'DELETE' as const, url: '/api/v1/metrics/cpu' }]) {
      const r = await t.call({ ...req, key });
      expect(r.statusCode, req.url).toBe(400);
      expect(r.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('project_id') });
    }
  });

  it('an organization-level credential naming its project reads that project', async () => {
    const { projectId } = await projectWithKey(t, ['metrics:read']);
    await insertMetric(t, { projectId, name: 'cpu' }, [[AT, 1]]);
    const key = await orgKey(['metrics:read']);
    const r = await t.call({ method: 'GET', url: `/api/v1/metrics/names?project_id=${projectId}`, key });
    expect(r.statusCode).toBe(200);
    expect(r.json().metrics).toEqual([{ name: 'cpu' }]);
  });

  it('"a project-scoped key may omit it and is confined to its own project"', async () => {
    const a = await projectWithKey(t, ['metrics:read']);
    const b = await projectWithKey(t, ['metrics:read']);
    await insertMetric(t, { projectId: a.projectId, name: 'only_a' }, [[AT, 1]]);
    await insertMetric(t, { projectId: b.projectId, name: 'only_b' }, [[AT, 2]]);
    const names = await t.call({ method: 'GET', url: '/api/v1/metrics/names', key: a.key });
    expect(names.statusCode).toBe(200);
    expect(names.json().metrics).toEqual([{ name: 'only_a' }]);
    const agg = await t.call({ method: 'POST', url: '/api/v1/metrics/aggregate', key: a.key, payload: { metric_name: 'only_b' } });
    expect(agg.statusCode).toBe(200);
    expect(agg.json().series).toEqual([]);
    // Repeating its own project exactly is allowed.
    const same = await t.call({ method: 'GET', url: `/api/v1/metrics/names?project_id=${a.projectId}`, key: a.key });
    expect(same.statusCode).toBe(200);
  });

  it('"naming another project is rejected": a project-scoped key naming another project gets 403', async () => {
    const a = await projectWithKey(t, ['metrics:read', 'metrics:delete']);
    const b = await projectWithKey(t, ['metrics:read']);
    for (const req of [...endpoints(`?project_id=${b.projectId}`), { method: 'DELETE' as const, url: `/api/v1/metrics/cpu?project_id=${b.projectId}` }]) {
      const r = await t.call({ ...req, key: a.key });
      expect(r.statusCode, req.url).toBe(403);
      expect(r.json().error).toBe('permission_denied');
    }
  });

  it('a missing or deleted project is 404 (same answer as another owner\'s)', async () => {
    const key = await orgKey(['metrics:read', 'metrics:delete']);
    const { projectId } = await projectWithKey(t, ['metrics:read']);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${projectId}` })).statusCode).toBe(204);
    for (const pid of ['00000000-0000-4000-8000-000000000000', projectId]) {
      for (const req of [...endpoints(`?project_id=${pid}`), { method: 'DELETE' as const, url: `/api/v1/metrics/cpu?project_id=${pid}` }]) {
        const r = await t.call({ ...req, key });
        expect(r.statusCode, `${req.method} ${req.url}`).toBe(404);
        expect(r.json().error).toBe('not_found');
      }
    }
  });

  it('no credential is 401', async () => {
    const r = await t.call({ method: 'GET', url: '/api/v1/metrics/names', key: null });
    expect(r.statusCode).toBe(401);
    expect(r.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
  });

  it('"`project_id` in the query string, not the body": a body project_id is an unknown field (400)', async () => {
    const { projectId, key } = await projectWithKey(t, ['metrics:read']);
    for (const url of ['/api/v1/metrics/aggregate', '/api/v1/metrics/histogram']) {
      const r = await t.call({ method: 'POST', url, key, payload: { metric_name: 'cpu', project_id: projectId } });
      expect(r.statusCode, url).toBe(400);
      expect(r.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('unknown field "project_id"') });
    }
  });

  it('unknown query parameters are refused (400) on every metrics endpoint', async () => {
    const { key } = await projectWithKey(t, ['metrics:read', 'metrics:delete']);
    for (const req of [...endpoints('?limit=5'), { method: 'DELETE' as const, url: '/api/v1/metrics/cpu?limit=5' }]) {
      const r = await t.call({ ...req, key });
      expect(r.statusCode, req.url).toBe(400);
      expect(r.json().message).toContain('limit');
    }
  });

  it('every metrics route is described in the OpenAPI document with its response schema', async () => {
    const doc = (await t.call({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    for (const [path, method] of [
      ['/api/v1/metrics/names', 'get'],
      ['/api/v1/metrics/{metric_name}/labels', 'get'],
      ['/api/v1/metrics/aggregate', 'post'],
      ['/api/v1/metrics/histogram', 'post'],
      ['/api/v1/metrics/{metric_name}', 'delete'],
    ]) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.responses['200']).toBeDefined();
    }
  });
});
