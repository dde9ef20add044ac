/**
 * Rule: "403 `permission_denied` for a missing scope" comes before any lookup, so a credential that
 * may not read something cannot learn whether it exists (a 404 would tell it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../testing/app.js';

describe('the scope is checked before existence', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await testApp();
    const k = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'metrics-only', scopes: ['metrics:read'], org_wide: true } });
    key = k.json().key;
  });
  afterAll(async () => t.close());

  it('GET /services needs traces:read or logs:read: 403 for an unknown project too, never 404', async () => {
    for (const project of ['missing', '00000000-0000-4000-8000-000000000000', t.projectId]) {
      const res = await t.call({ method: 'GET', url: `/api/v1/services?project_id=${project}`, key });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error).toBe('permission_denied');
    }
    // With the scope, an unknown project is the usual 404.
    expect((await t.call({ method: 'GET', url: '/api/v1/services?project_id=missing' })).statusCode).toBe(404);
  });

  it('GET /agent-budgets without activity:read or audit:read: 403 for a missing connection', async () => {
    const res = await t.call({ method: 'GET', url: '/api/v1/agent-budgets?credential_kind=oauth_connection&credential_id=missing', key });
    expect(res.statusCode, res.body).toBe(403);
  });
});
