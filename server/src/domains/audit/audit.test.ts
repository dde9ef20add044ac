/** Audit records of key changes (spec 1, "Account and audit"; Audit record fields). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

describe('audit events', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t.close());

  const events = async (query: string, key?: string) => t.call({ method: 'GET', url: `/api/v1/account/audit-events?${query}`, key });

  it('creation, update and revocation are recorded for the key that was changed, newest first', async () => {
    const { keyId } = await projectWithKey(t, ['metrics:read', 'projects:read']);
    await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload: { scopes: ['metrics:read'] } });
    await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    const res = (await events(`target_api_key_id=${keyId}`)).json();
    expect(res.audit_events.map((e: { event_type: string }) => e.event_type)).toEqual(['api_key_revoked', 'api_key_updated', 'api_key_created']);
    const [revoked, updated, created] = res.audit_events;
    expect(created).toMatchObject({ result: 'success', resource: 'api_key', action: 'create', affected_object: keyId, metadata: { scopes: ['metrics:read', 'projects:read'], via: 'api' } });
    expect(updated.metadata).toEqual({ scopes: ['metrics:read'], previous_scopes: ['metrics:read', 'projects:read'], via: 'api' });
    expect(revoked).toMatchObject({ action: 'revoke', metadata: { scopes: ['metrics:read'], via: 'api' } });
    // The record names the key that made the change as actor, and the changed key as target.
    expect(created.actor.api_key_id).not.toBe(keyId);
    expect(created.target_api_key_id).toBe(keyId);
  });

  it('the initial owner key is recorded as created by the bootstrap', async () => {
    const res = (await events('event_type=api_key_created&limit=200')).json();
    const boot = res.audit_events.find((e: { metadata: { via: string } }) => e.metadata.via === 'bootstrap');
    expect(boot).toMatchObject({ actor: { kind: 'system', api_key_id: null } });
  });

  it('event_type filters; an unknown event_type is 400', async () => {
    const { keyId } = await projectWithKey(t, ['metrics:read']);
    await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    const only = (await events(`target_api_key_id=${keyId}&event_type=api_key_revoked`)).json();
    expect(only.audit_events).toHaveLength(1);
    const both = (await events(`target_api_key_id=${keyId}&event_type=api_key_revoked,api_key_created`)).json();
    expect(both.audit_events).toHaveLength(2);
    const bad = await events('event_type=api_key_deleted');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('api_key_created');
  });

  it('filters by resource, action and result; an unknown result is 400', async () => {
    const { keyId } = await projectWithKey(t, ['metrics:read']);
    await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` });
    const res = (await events(`target_api_key_id=${keyId}&resource=api_key&action=revoke&result=success`)).json();
    expect(res.audit_events).toHaveLength(1);
    expect((await events(`target_api_key_id=${keyId}&result=denied`)).json().audit_events).toHaveLength(0);
    expect((await events('result=maybe')).statusCode).toBe(400);
  });

  it('needs audit:read', async () => {
    const { key } = await projectWithKey(t, ['metrics:read']);
    expect((await events('', key)).statusCode).toBe(403);
  });

  it('pages newest first with the shared cursor rules', async () => {
    const first = (await events('limit=2')).json();
    expect(first.audit_events).toHaveLength(2);
    const second = (await events(`limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.audit_events[0].occurred_at <= first.audit_events[1].occurred_at).toBe(true);
    expect(second.audit_events.map((e: { id: string }) => e.id)).not.toContain(first.audit_events[1].id);
    expect((await events('cursor=a&cursor=b')).json().message).toBe('cursor must be provided at most once');
  });
});
