/** The audit trail records every write and every refusal for missing permission (issue 3; spec 1 Audit record). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../testing/app.js';
import { describeRoute } from './audit-hook.js';

describe('describeRoute', () => {
  it('names the resource by its path and the action by the method or a trailing verb', () => {
    expect(describeRoute('POST', '/api/v1/projects')).toEqual({ resource: 'projects', action: 'create' });
    expect(describeRoute('PATCH', '/api/v1/projects/:id')).toEqual({ resource: 'projects', action: 'update' });
    expect(describeRoute('DELETE', '/api/v1/metrics/:metric_name')).toEqual({ resource: 'metrics', action: 'delete' });
    expect(describeRoute('POST', '/api/v1/account/api-keys/:id/revoke')).toEqual({ resource: 'account.api-keys', action: 'revoke' });
    expect(describeRoute('POST', '/api/v1/metrics/aggregate')).toEqual({ resource: 'metrics.aggregate', action: 'create' });
    expect(describeRoute('GET', '/api/v1/metrics/:metric_name/labels')).toEqual({ resource: 'metrics', action: 'labels' });
  });
});

describe('request audit trail', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t.close());

  const audit = async (q: string) => (await t.call({ method: 'GET', url: `/api/v1/account/audit-events?${q}` })).json().audit_events;

  it('every write is recorded with result, resource, action, affected object and actor', async () => {
    const p = (await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'audited' } })).json();
    await t.call({ method: 'PATCH', url: `/api/v1/projects/${p.id}`, payload: { name: 'renamed' } });
    const [update, create] = await audit('resource=projects');
    expect(create).toMatchObject({ result: 'success', resource: 'projects', action: 'create', actor: { kind: 'api_key' } });
    expect(update).toMatchObject({ result: 'success', resource: 'projects', action: 'update', affected_object: p.id });
  });

  it('every refusal for missing permission is recorded as denied', async () => {
    const { key, keyId, projectId } = await projectWithKey(t, ['projects:read']);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/metrics/cpu?project_id=${projectId}`, key })).statusCode).toBe(403);
    const [denied] = await audit('result=denied&resource=metrics');
    expect(denied).toMatchObject({ result: 'denied', action: 'delete', affected_object: 'cpu', actor: { api_key_id: keyId } });
  });

  it('reads and refused writes that changed nothing are not recorded; domain-audited changes are recorded once', async () => {
    const before = (await audit('limit=200')).length;
    await t.call({ method: 'GET', url: '/api/v1/projects' });
    await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: '' } });
    await t.call({ method: 'POST', url: `/api/v1/metrics/aggregate?project_id=${t.projectId}`, payload: { metric_name: 'm' } });
    await t.call({ method: 'POST', url: '/api/v1/metrics/forecast', payload: { metric_name: 'm', project_id: t.projectId } });
    expect((await audit('limit=200')).length).toBe(before);
    const k = (await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'x', scopes: ['metrics:read'], org_wide: true } })).json();
    const forKey = (await audit('limit=200')).filter((e: { affected_object: string }) => e.affected_object === k.id);
    expect(forKey.map((e: { event_type: string }) => e.event_type)).toEqual(['api_key_created']);
  });

  it('telemetry ingestion is not written to the audit trail', async () => {
    const before = (await audit('limit=200')).length;
    const res = await t.call({
      method: 'POST',
      url: `/v1/metrics?project_id=${t.projectId}`,
      headers: { 'content-type': 'application/json' },
      payload: { resourceMetrics: [] },
    });
    expect(res.statusCode).toBe(200);
    expect((await audit('limit=200')).length).toBe(before);
  });
});
