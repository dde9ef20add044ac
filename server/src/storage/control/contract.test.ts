/** The control store's contract, run against both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestControl } from '../../testing/app.js';
import type { ApiKeyRecord } from '../../domains/api-keys/store.js';
import type { ControlStore } from './stores.js';

const key = (over: Partial<ApiKeyRecord>): ApiKeyRecord => ({
  id: 'k1',
  orgId: 'o1',
  projectId: null,
  name: 'n',
  keyHash: `h-${over.id ?? 'k1'}`,
  keyPrefix: 'svc_',
  scopes: ['metrics:read'],
  status: 'active',
  expiresAt: '2027-01-01T00:00:00.000Z',
  lastUsedAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  revokedAt: null,
  userId: null,
  createdByApiKeyId: null,
  createdByState: 'system',
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('control store contract on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
    await store.organizations.insert({ id: 'o1', name: 'one', createdAt: '2026-01-01T00:00:00.000Z' });
    await store.organizations.insert({ id: 'o2', name: 'two', createdAt: '2026-01-01T00:00:00.000Z' });
  });
  afterAll(async () => drop());

  it('reports its dialect and answers a ping', async () => {
    expect(store.dialect).toBe(dialect);
    await expect(store.ping()).resolves.toBeUndefined();
  });

  it('projects: insert, find within the organization only, update, soft delete', async () => {
    await store.projects.insert({ id: 'p1', orgId: 'o1', name: 'a', samplingRate: 0, createdAt: '2026-01-01T00:00:01.000Z', deletedAt: null });
    expect(await store.projects.find('o1', 'p1')).toMatchObject({ id: 'p1', samplingRate: 0 });
    expect(await store.projects.find('o2', 'p1')).toBeUndefined();
    await store.projects.update('p1', { samplingRate: 0.25, name: 'b' });
    expect(await store.projects.find('o1', 'p1')).toMatchObject({ name: 'b', samplingRate: 0.25 });
    await store.projects.markDeleted('p1', '2026-01-02T00:00:00.000Z');
    expect(await store.projects.find('o1', 'p1')).toBeUndefined();
  });

  it('projects: list is oldest first and continues after a position', async () => {
    for (const i of [1, 2, 3])
      await store.projects.insert({ id: `l${i}`, orgId: 'o2', name: `l${i}`, samplingRate: 1, createdAt: `2026-02-0${i}T00:00:00.000Z`, deletedAt: null });
    const first = await store.projects.list('o2', { limit: 2 });
    expect(first.map((p) => p.id)).toEqual(['l1', 'l2', 'l3']); // limit + 1 rows
    const rest = await store.projects.list('o2', { limit: 2, after: { createdAt: first[1].createdAt, id: first[1].id } });
    expect(rest.map((p) => p.id)).toEqual(['l3']);
  });

  it('api keys: found by hash and by id within the organization; scopes round-trip', async () => {
    await store.apiKeys.insert(key({ id: 'k1', scopes: ['metrics:read', 'audit:read'] }));
    expect(await store.apiKeys.findByHash('h-k1')).toMatchObject({ id: 'k1', scopes: ['metrics:read', 'audit:read'] });
    expect(await store.apiKeys.findById('o2', 'k1')).toBeUndefined();
  });

  it('api keys: the hash is unique', async () => {
    await expect(store.apiKeys.insert(key({ id: 'k-dup', keyHash: 'h-k1' }))).rejects.toThrow();
  });

  it('api keys: list newest first, filtered by project, continued after a position', async () => {
    await store.apiKeys.insert(key({ id: 'ka', projectId: 'px', createdAt: '2026-03-01T00:00:00.000Z' }));
    await store.apiKeys.insert(key({ id: 'kb', projectId: 'px', createdAt: '2026-03-02T00:00:00.000Z' }));
    const rows = await store.apiKeys.list({ orgId: 'o1', projectId: 'px', limit: 1 });
    expect(rows.map((k) => k.id)).toEqual(['kb', 'ka']);
    const next = await store.apiKeys.list({ orgId: 'o1', projectId: 'px', limit: 1, after: { createdAt: rows[0].createdAt, id: rows[0].id } });
    expect(next.map((k) => k.id)).toEqual(['ka']);
  });

  it('api keys: revoking by project touches only active keys of that project', async () => {
    const ids = await store.apiKeys.revokeByProject('px', '2026-04-01T00:00:00.000Z');
    expect(ids.sort()).toEqual(['ka', 'kb']);
    expect(await store.apiKeys.findById('o1', 'ka')).toMatchObject({ status: 'revoked', revokedAt: '2026-04-01T00:00:00.000Z' });
    expect(await store.apiKeys.findById('o1', 'k1')).toMatchObject({ status: 'active' });
  });

  it('a transaction is all or nothing', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.apiKeys.insert(key({ id: 'k-tx' }));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.apiKeys.findById('o1', 'k-tx')).toBeUndefined();
  });

  it('audit: newest first by sequence, with every filter', async () => {
    const base = {
      orgId: 'o1',
      projectId: null,
      actorKind: 'api_key' as const,
      actorId: 'k1',
      actorUserId: null,
      resource: 'api_key',
      toolName: null,
      targetId: 't',
      metadata: { scopes: ['a'] },
    };
    await store.audit.insert({ ...base, id: 'a1', seq: 1, occurredAt: 'x', eventType: 'api_key_created', action: 'create', result: 'success', targetApiKeyId: 't1' });
    await store.audit.insert({ ...base, id: 'a2', seq: 2, occurredAt: 'x', eventType: 'api_key_revoked', action: 'revoke', result: 'success', targetApiKeyId: 't1' });
    await store.audit.insert({ ...base, id: 'a3', seq: 3, occurredAt: 'x', eventType: null, action: 'read', result: 'denied', targetApiKeyId: null });
    const ids = async (q: object) => (await store.audit.list({ orgId: 'o1', limit: 10, ...q })).map((r) => r.id);
    expect(await ids({})).toEqual(['a3', 'a2', 'a1']);
    expect(await ids({ targetApiKeyId: 't1' })).toEqual(['a2', 'a1']);
    expect(await ids({ eventTypes: ['api_key_created'] })).toEqual(['a1']);
    expect(await ids({ results: ['denied'] })).toEqual(['a3']);
    expect(await ids({ actions: ['revoke', 'read'] })).toEqual(['a3', 'a2']);
    expect(await ids({ beforeSeq: 3 })).toEqual(['a2', 'a1']);
    expect((await store.audit.list({ orgId: 'o1', limit: 10 }))[0].metadata).toEqual({ scopes: ['a'] });
  });

  it('meta values are kept', async () => {
    await store.organizations.setMeta('k', 'v');
    expect(await store.organizations.getMeta('k')).toBe('v');
    expect(await store.organizations.getMeta('missing')).toBeUndefined();
  });
});
