/**
 * `GET/PUT /projects/{projectId}/retention` (docs/retention.md) on both control stores: the windows resource,
 * its scopes and project pinning, the audit record, and input an attacker would send — each refused with a
 * 4xx in the error shape, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { secondOrganization } from '../../testing/people.js';

const url = (projectId: string) => `/api/v1/projects/${projectId}/retention`;
const WRITE = ['projects:read', 'projects:write', 'metrics:delete', 'traces:delete', 'logs:delete', 'audit:read'];

describe.each(['sqlite', 'postgres'] as const)('telemetry retention windows (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ dialect });
  });
  afterAll(async () => t.close());

  const put = (projectId: string, payload: unknown, key?: string) => t.call({ method: 'PUT', url: url(projectId), key, payload: payload as object });
  const get = (projectId: string, key?: string) => t.call({ method: 'GET', url: url(projectId), key });
  const audits = async (projectId: string) =>
    (await t.call({ method: 'GET', url: `/api/v1/account/audit-events?action=retention&limit=200` })).json().audit_events.filter(
      (e: { project_id: string; affected_object: string }) => e.project_id === projectId || e.affected_object === projectId,
    );

  it('no window by default: every signal is kept, none is made up', async () => {
    const { projectId, key } = await projectWithKey(t, WRITE);
    const r = await get(projectId, key);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ project_id: projectId, windows: [] });
  });

  it('PUT replaces the whole set; windows come back in signal order with who set them, from the credential; the change is audited with the windows before and after', async () => {
    const { projectId, key, keyId } = await projectWithKey(t, WRITE);
    const r = await put(projectId, { windows: [{ signal: 'SIGNAL_LOGS', retention_days: 7 }, { signal: 'SIGNAL_METRICS', retention_days: 3650 }, { signal: 'SIGNAL_SPANS', retention_days: 1 }] }, key);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    expect(body.windows.map((w: { signal: string; retention_days: number }) => [w.signal, w.retention_days])).toEqual([
      ['SIGNAL_METRICS', 3650],
      ['SIGNAL_SPANS', 1],
      ['SIGNAL_LOGS', 7],
    ]);
    expect(body.windows[0].updated_by).toEqual({ api_key_id: keyId });
    expect((await get(projectId, key)).json()).toEqual(body);
    // A signal not listed loses its window.
    const two = await put(projectId, { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 30 }] }, key);
    expect(two.json().windows.map((w: { signal: string }) => w.signal)).toEqual(['SIGNAL_SPANS']);
    const events = await audits(projectId);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      resource: 'projects',
      action: 'retention',
      result: 'success',
      affected_object: projectId,
      actor: { api_key_id: keyId },
      metadata: { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 30 }], previous_windows: [{ signal: 'SIGNAL_METRICS', retention_days: 3650 }, { signal: 'SIGNAL_SPANS', retention_days: 1 }, { signal: 'SIGNAL_LOGS', retention_days: 7 }] },
    });
    expect((await put(projectId, { windows: [] }, key)).json().windows).toEqual([]);
  });

  it('bad input is refused with 400 in the error shape, and nothing changes (nor is audited)', async () => {
    const { projectId, key } = await projectWithKey(t, WRITE);
    await put(projectId, { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 14 }] }, key);
    const before = (await get(projectId, key)).json();
    const w = (signal: unknown, retention_days: unknown) => ({ windows: [{ signal, retention_days }] });
    const bad: unknown[] = [
      {},
      [],
      { windows: null },
      { windows: {} },
      { windows: 'SIGNAL_SPANS' },
      { windows: [null] },
      { windows: [[]] },
      { windows: [{}] },
      { windows: [{ signal: 'SIGNAL_SPANS' }] },
      { windows: [{ retention_days: 3 }] },
      w('SIGNAL_SPANS', 0),
      w('SIGNAL_SPANS', -1),
      w('SIGNAL_SPANS', 3651),
      w('SIGNAL_SPANS', 1e308),
      w('SIGNAL_SPANS', 1.5),
      w('SIGNAL_SPANS', '30'),
      w('SIGNAL_SPANS', null),
      w('SIGNAL_SPANS', true),
      w('SIGNAL_SPANS', [30]),
      w('SIGNAL_UNSPECIFIED', 3),
      w('SIGNAL_EVENTS', 3),
      w('SIGNAL_ERRORS', 3),
      w('signal_spans', 3),
      w('spans', 3),
      w('', 3),
      w(1, 3),
      w(null, 3),
      w('SIGNAL_SPANS ', 3),
      { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 3 }, { signal: 'SIGNAL_SPANS', retention_days: 3 }] },
      { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 3 }, { signal: 'SIGNAL_SPANS', retention_days: 9 }] },
      { windows: [{ signal: 'SIGNAL_METRICS', retention_days: 3 }, { signal: 'SIGNAL_SPANS', retention_days: 3 }, { signal: 'SIGNAL_LOGS', retention_days: 3 }, { signal: 'SIGNAL_LOGS', retention_days: 3 }] },
      { windows: Array.from({ length: 10_000 }, () => ({ signal: 'SIGNAL_SPANS', retention_days: 1 })) },
      { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 3, extra: true }] },
      { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 3, updated_by: 'someone' }] },
      { windows: [], project_id: projectId },
      { windows: [], updated_by: { user_id: 'u' } },
      { windows: [], updated_at: '2020-01-01T00:00:00Z' },
      { windows: [], expected_version: 1 },
    ];
    for (const payload of bad) {
      const r = await put(projectId, payload, key);
      expect(r.statusCode, JSON.stringify(payload)?.slice(0, 200)).toBe(400);
      expect(Object.keys(r.json()).sort().filter((k) => k !== 'details'), JSON.stringify(payload)?.slice(0, 200)).toEqual(['error', 'message']);
      expect(r.json().error).toBe('invalid_request');
    }
    // Not JSON at all, malformed JSON, another media type, a body past the limit.
    const raw = async (payload: string, type: string) => t.call({ method: 'PUT', url: url(projectId), key, payload, headers: { 'content-type': type } });
    expect((await raw('{"windows": [', 'application/json')).statusCode).toBe(400);
    expect((await raw('', 'application/json')).statusCode).toBe(400);
    expect((await raw('{"windows":[],"__proto__":{"polluted":true}}', 'application/json')).statusCode).toBe(400);
    expect((await raw('windows=1', 'application/x-www-form-urlencoded')).statusCode).toBe(415);
    expect((await raw('{"windows": []}', 'text/plain')).statusCode).toBe(415);
    const huge = await raw(JSON.stringify({ windows: [], pad: 'x'.repeat(2 * 1024 * 1024) }), 'application/json');
    expect(huge.statusCode).toBe(413);
    expect(huge.json().error).toBe('payload_too_large');
    // A query string the route does not take.
    expect((await t.call({ method: 'PUT', url: `${url(projectId)}?retention_days=1`, key, payload: { windows: [] } })).statusCode).toBe(400);
    expect((await get(projectId, key)).json()).toEqual(before);
    expect(await audits(projectId)).toHaveLength(1);
    // A refused SIGNAL_UNSPECIFIED names the accepted values.
    const unspecified = await put(projectId, w('SIGNAL_UNSPECIFIED', 3), key);
    expect(unspecified.json().message).toMatch(/SIGNAL_METRICS/);
  });

  it("another project's id is 404 like a missing one (project-scoped credential); another organization's too; nothing changes", async () => {
    const a = await projectWithKey(t, WRITE);
    const b = await projectWithKey(t, WRITE);
    await put(b.projectId, { windows: [{ signal: 'SIGNAL_LOGS', retention_days: 5 }] }, b.key);
    const missing = await put('00000000-0000-0000-0000-000000000000', { windows: [] }, a.key);
    expect(missing.statusCode).toBe(404);
    for (const r of [await put(b.projectId, { windows: [] }, a.key), await get(b.projectId, a.key)]) {
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual(missing.json());
    }
    const other = await secondOrganization(t);
    expect((await put(b.projectId, { windows: [] }, other.ownerKey)).statusCode).toBe(404);
    expect((await get(b.projectId, other.ownerKey)).statusCode).toBe(404);
    expect((await get(b.projectId, b.key)).json().windows).toHaveLength(1);
    // An organization-wide key reaches every project of its organization.
    expect((await get(b.projectId)).json().windows).toHaveLength(1);
  });

  it('scopes: projects:read to read, projects:write to write; a new or shorter window also needs the delete scope of its signal, a longer or removed one does not', async () => {
    const { projectId, key } = await projectWithKey(t, WRITE);
    const reader = (await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'r', scopes: ['metrics:read'], project_id: projectId } })).json().key;
    expect((await get(projectId, reader)).statusCode).toBe(403);
    const writeOnly = (await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'w', scopes: ['projects:read', 'projects:write', 'logs:delete'], project_id: projectId } })).json().key;
    const refused = await put(projectId, { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 30 }] }, writeOnly);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'permission_denied', message: expect.stringContaining('traces:delete') });
    expect((await get(projectId, writeOnly)).json().windows).toEqual([]);
    expect((await audits(projectId)).map((e: { result: string }) => e.result)).toEqual(['denied', 'denied']); // the read without projects:read, the write without traces:delete
    // logs:delete is held: a logs window may be set.
    expect((await put(projectId, { windows: [{ signal: 'SIGNAL_LOGS', retention_days: 30 }] }, writeOnly)).statusCode).toBe(200);
    await put(projectId, { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 30 }, { signal: 'SIGNAL_METRICS', retention_days: 30 }] }, key);
    // Lengthening or removing deletes nothing: projects:write is enough.
    expect((await put(projectId, { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 60 }] }, writeOnly)).statusCode).toBe(200);
    expect((await put(projectId, { windows: [{ signal: 'SIGNAL_SPANS', retention_days: 59 }] }, writeOnly)).statusCode).toBe(403);
    expect((await put(projectId, { windows: [] }, writeOnly)).statusCode).toBe(200);
    expect((await get(projectId, writeOnly)).json().windows).toEqual([]);
    const noWrite = (await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'nw', scopes: ['projects:read', 'traces:delete'], project_id: projectId } })).json().key;
    expect((await put(projectId, { windows: [] }, noWrite)).statusCode).toBe(403);
  });

  it('concurrent identical PUTs all succeed and leave that one set; concurrent different PUTs leave one of them whole', async () => {
    const { projectId, key } = await projectWithKey(t, WRITE);
    const body = { windows: [{ signal: 'SIGNAL_METRICS', retention_days: 9 }, { signal: 'SIGNAL_LOGS', retention_days: 3 }] };
    const all = await Promise.all(Array.from({ length: 8 }, () => put(projectId, body, key)));
    expect(all.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const shape = (r: { windows: { signal: string; retention_days: number }[] }) => r.windows.map((w) => [w.signal, w.retention_days]);
    expect(shape((await get(projectId, key)).json())).toEqual([['SIGNAL_METRICS', 9], ['SIGNAL_LOGS', 3]]);
    const sets = [[{ signal: 'SIGNAL_SPANS', retention_days: 2 }], [{ signal: 'SIGNAL_METRICS', retention_days: 4 }, { signal: 'SIGNAL_LOGS', retention_days: 4 }], []];
    await Promise.all(Array.from({ length: 9 }, (_, i) => put(projectId, { windows: sets[i % 3] }, key)));
    const now = shape((await get(projectId, key)).json());
    expect(sets.map((s) => JSON.stringify(s.map((w) => [w.signal, w.retention_days])))).toContain(JSON.stringify(now));
  });

  it("a deleted project's windows go with it", async () => {
    const { projectId, key } = await projectWithKey(t, WRITE);
    await put(projectId, { windows: [{ signal: 'SIGNAL_LOGS', retention_days: 5 }] }, key);
    expect((await t.ctx.control.telemetryRetention.live()).some((w) => w.projectId === projectId)).toBe(true);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${projectId}` })).statusCode).toBe(204);
    expect(await t.ctx.control.telemetryRetention.windows(projectId)).toEqual([]);
    expect((await get(projectId)).statusCode).toBe(404);
  });
});

describe('SVC_RETENTION_TTL_SECONDS', () => {
  it('accepts 0 to 30 only (default 30): a change applies everywhere within 30 s in any case', () => {
    expect(loadConfig({}).retentionTtlSeconds).toBe(30);
    expect(loadConfig({ SVC_RETENTION_TTL_SECONDS: '0' }).retentionTtlSeconds).toBe(0);
    for (const bad of ['31', '-1', '1.5', 'x']) expect(() => loadConfig({ SVC_RETENTION_TTL_SECONDS: bad }), bad).toThrow(/SVC_RETENTION_TTL_SECONDS/);
  });
});
