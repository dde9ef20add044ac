/**
 * The security table (issue 3): for every route with a credential, a request with no credential, a
 * revoked key, a key lacking the route's scope, and a project-scoped key naming another project gets
 * the documented refusal and changes nothing; a key of another organization cannot reach this
 * organization's objects (404, the same answer as a missing one).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../domains/api-keys/scopes.js';
import { projectWithKey, testApp, type TestApp } from '../testing/app.js';
import { secondOrganization } from '../testing/people.js';

let t: TestApp;
let routes: { method: string; url: string; scope?: string; auth?: string; foreignProject?: string }[];
let fixture: { projectId: string; otherProjectId: string; keyId: string; revokedKey: string };

/** A snapshot of what a refused request must not change. */
async function state() {
  const c = t.ctx.control;
  const projects = await c.projects.list(t.orgId, { limit: 1000 });
  const keys = await c.apiKeys.list({ orgId: t.orgId, limit: 1000 });
  return JSON.stringify({ projects, keys: keys.map((k) => ({ id: k.id, status: k.status, name: k.name, scopes: k.scopes })) });
}

function concrete(url: string): string {
  return url
    .replace(':metric_name', 'cpu')
    .replace(':id', fixture.keyId)
    .replace(':user_id', '00000000-0000-0000-0000-000000000000')
    .replace(/:[a-z_]+/g, 'x');
}

beforeAll(async () => {
  t = await testApp();
  const a = await projectWithKey(t, ['metrics:read']);
  const b = await projectWithKey(t, ['metrics:read']);
  const revoked = await projectWithKey(t, [...ALL_SCOPES.filter((s) => s !== 'api_key:write')]);
  await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${revoked.keyId}/revoke` });
  fixture = { projectId: a.projectId, otherProjectId: b.projectId, keyId: a.keyId, revokedKey: revoked.key };
  routes = t.app.declaredRoutes.map((r) => ({ method: r.method, url: r.url, ...r.config })).filter((r) => r.auth !== 'none');
});
afterAll(async () => t.close());

describe('security table', () => {
  it('covers the routes added so far', () => {
    expect(routes.length).toBeGreaterThan(15);
  });

  it('no credential: 401 unauthorized, nothing changes', async () => {
    const before = await state();
    for (const r of routes) {
      const res = await t.call({ method: r.method as never, url: concrete(r.url), key: null });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
    }
    expect(await state()).toBe(before);
  });

  it('a revoked key: the same 401, nothing changes', async () => {
    const before = await state();
    for (const r of routes) {
      const res = await t.call({ method: r.method as never, url: concrete(r.url), key: fixture.revokedKey });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
    }
    expect(await state()).toBe(before);
  });

  it('a key lacking the route scope: 403 permission_denied naming the scope, nothing changes', async () => {
    const readsProjects = (await projectWithKey(t, ['projects:read'])).key;
    const readsMetrics = (await projectWithKey(t, ['metrics:read'])).key;
    const before = await state();
    for (const r of routes.filter((x) => x.scope)) {
      const key = r.scope === 'projects:read' ? readsMetrics : readsProjects;
      const res = await t.call({ method: r.method as never, url: concrete(r.url), key });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(403);
      expect(res.json().message).toContain(r.scope);
    }
    expect(await state()).toBe(before);
  });

  it('a project-scoped key naming another project: 403 before anything runs (404 on routes that answer it like a missing object), nothing changes', async () => {
    const { key } = await projectWithKey(t, [...ALL_SCOPES]);
    const before = await state();
    for (const r of routes) {
      const url = concrete(r.url);
      const res = await t.call({ method: r.method as never, url: `${url}${url.includes('?') ? '&' : '?'}project_id=${fixture.otherProjectId}`, key });
      const notFound = r.foreignProject === 'not_found';
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(notFound ? 404 : 403);
      expect(res.json().error).toBe(notFound ? 'not_found' : 'permission_denied');
    }
    expect(await state()).toBe(before);
  });

  it("a key of another organization cannot reach this organization's objects (404 like a missing one)", async () => {
    const other = await secondOrganization(t);
    const before = await state();
    const cases = [
      { method: 'GET', url: `/api/v1/projects/${fixture.projectId}` },
      { method: 'PATCH', url: `/api/v1/projects/${fixture.projectId}`, payload: { name: 'stolen' } },
      { method: 'DELETE', url: `/api/v1/projects/${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/account/api-keys/${fixture.keyId}` },
      { method: 'POST', url: `/api/v1/account/api-keys/${fixture.keyId}/revoke` },
      { method: 'PATCH', url: `/api/v1/account/api-keys/${fixture.keyId}`, payload: { name: 'stolen' } },
      { method: 'GET', url: `/api/v1/metrics/names?project_id=${fixture.projectId}` },
      { method: 'DELETE', url: `/api/v1/metrics/cpu?project_id=${fixture.projectId}` },
      { method: 'POST', url: `/api/v1/metrics/aggregate?project_id=${fixture.projectId}`, payload: { metric_name: 'cpu' } },
      { method: 'POST', url: '/api/v1/metrics/forecast', payload: { metric_name: 'cpu', project_id: fixture.projectId } },
      { method: 'GET', url: `/api/v1/services?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/traces?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/traces/${'a'.repeat(32)}?project_id=${fixture.projectId}` },
      { method: 'DELETE', url: `/api/v1/traces/${'a'.repeat(32)}?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/logs?project_id=${fixture.projectId}` },
      { method: 'POST', url: `/api/v1/logs/aggregate?project_id=${fixture.projectId}`, payload: {} },
      { method: 'GET', url: `/api/v1/logs/x/context?project_id=${fixture.projectId}` },
      { method: 'DELETE', url: `/api/v1/logs?log_id=x&project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/stream/logs?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/agent-runs?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/agent-runs/${'0'.repeat(31)}1/graph?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/agent-sessions?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/agent-events?session_key=s&project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/agent-identities?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/llm/pricing?project_id=${fixture.projectId}` },
      { method: 'PUT', url: `/api/v1/llm/pricing?project_id=${fixture.projectId}`, payload: { model: 'm', input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 1 } },
      { method: 'DELETE', url: `/api/v1/llm/pricing?project_id=${fixture.projectId}&model=m` },
      { method: 'GET', url: `/api/v1/llm/calls?project_id=${fixture.projectId}` },
      { method: 'GET', url: `/api/v1/llm/usage?project_id=${fixture.projectId}` },
    ];
    for (const c of cases) {
      const res = await t.call({ method: c.method as never, url: c.url, payload: c.payload, key: other.ownerKey });
      expect(res.statusCode, `${c.method} ${c.url}`).toBe(404);
    }
    const keys = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=200', key: other.ownerKey })).json().api_keys;
    expect(keys.map((k: { id: string }) => k.id)).not.toContain(fixture.keyId);
    expect(await state()).toBe(before);
  });
});
