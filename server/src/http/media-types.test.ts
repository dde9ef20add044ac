/**
 * Rule (issue): "A REST write with a body that is not JSON is 415, and every 415 names the accepted
 * types." Every body-taking route under /api/v1 answers any other media type (or a body without
 * one) with 415 `unsupported_media_type`, the accepted types in the message and `details.accepted`,
 * and nothing changes. The OTLP routes name theirs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../testing/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const concrete = (url: string) => url.replace(/:[a-z_]+/g, 'x');

const NOT_JSON: { type: string | undefined; payload: string }[] = [
  { type: 'text/plain', payload: '{"name":"x"}' },
  { type: 'text/plain; charset=utf-8', payload: 'name=x' },
  { type: 'application/x-www-form-urlencoded', payload: 'name=x' },
  { type: 'multipart/form-data; boundary=b', payload: '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n' },
  { type: undefined, payload: '{"name":"x"}' },
  { type: 'application/json-patch+json', payload: '[]' },
  { type: 'application/merge-patch+json', payload: '{}' },
  { type: 'application/xml', payload: '<a/>' },
  { type: 'application/x-protobuf', payload: 'x' },
  { type: 'x'.repeat(5000), payload: '{}' },
];

async function snapshot() {
  const projects = await t.ctx.control.projects.list(t.orgId, { limit: 1000 });
  const keys = await t.ctx.control.apiKeys.list({ orgId: t.orgId, limit: 1000 });
  return JSON.stringify({ projects, keys: keys.map((k) => ({ id: k.id, status: k.status, name: k.name, scopes: k.scopes })) });
}

describe('415 for a body that is not JSON', () => {
  it('every body-taking REST route answers 415 naming application/json, and nothing changes', async () => {
    const routes = t.app.declaredRoutes.filter((r) => r.url.startsWith('/api/v1/') && r.takesBody);
    expect(routes.length).toBeGreaterThan(15);
    const before = await snapshot();
    for (const r of routes) {
      for (const c of NOT_JSON) {
        const res = await t.call({
          method: r.method as never,
          url: concrete(r.url),
          payload: c.payload,
          headers: c.type === undefined ? {} : { 'content-type': c.type },
        });
        const what = `${r.method} ${r.url} as ${String(c.type).slice(0, 40)}`;
        expect(res.statusCode, what).toBe(415);
        expect(res.json(), what).toEqual({
          error: 'unsupported_media_type',
          message: 'unsupported content type; send application/json',
          details: { accepted: ['application/json'] },
        });
      }
    }
    expect(await snapshot()).toBe(before);
  });

  it('JSON with parameters still works (control)', async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/projects', payload: '{"name":"ok"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('the OTLP routes name their own types', async () => {
    for (const url of ['/v1/metrics', '/v1/traces', '/v1/logs']) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await t.call({ method: 'POST', url: `${url}?project_id=${t.projectId}`, payload: 'x', headers: { 'content-type': type } });
        expect(res.statusCode, `${url} ${type}`).toBe(415);
        expect(res.json().error).toBe('unsupported_media_type');
        expect(res.json().details.accepted).toEqual(expect.arrayContaining(['application/x-protobuf', 'application/json']));
        expect(res.json().message).toContain('application/x-protobuf');
      }
    }
  });
});
