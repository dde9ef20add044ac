/** Contract of the OAuth and agent-approval stores, run against both engines. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestControl } from '../../testing/app.js';
import type { AgentApprovalRecord } from '../../domains/agent-connections/store.js';
import type { OAuthPayloadRow } from '../../domains/oauth/store.js';
import type { ControlStore } from './stores.js';

const row = (over: Partial<OAuthPayloadRow>): OAuthPayloadRow => ({
  model: 'AccessToken',
  id: 'at1',
  payload: { jti: 'at1', kind: 'AccessToken' },
  grantId: null,
  userCode: null,
  uid: null,
  expiresAt: '2030-01-01T00:00:00.000Z',
  consumedAt: null,
  ...over,
});

const approval = (over: Partial<AgentApprovalRecord>): AgentApprovalRecord => ({
  id: 'a1',
  orgId: 'o1',
  userId: 'u1',
  projectId: null,
  clientId: 'c1',
  clientName: 'agent',
  clientHost: 'agent.example',
  scopes: ['metrics:read'],
  status: 'active',
  grantId: 'g-a1',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUsedAt: null,
  revokedAt: null,
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('oauth stores on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
    await store.organizations.insert({ id: 'o1', name: 'one', createdAt: '2026-01-01T00:00:00.000Z' });
  });
  afterAll(async () => drop());

  it('payloads: upsert replaces, find by id, user code and uid within a model', async () => {
    const p = store.oauthPayloads;
    await p.upsert(row({ id: 'x1', payload: { a: 1 } }));
    await p.upsert(row({ id: 'x1', payload: { a: 2 }, grantId: 'g1' }));
    expect(await p.find('AccessToken', 'x1')).toMatchObject({ payload: { a: 2 }, grantId: 'g1', consumedAt: null });
    expect(await p.find('RefreshToken', 'x1')).toBeUndefined();
    await p.upsert(row({ model: 'DeviceCode', id: 'd1', userCode: 'BCDFGHJK' }));
    expect((await p.findByUserCode('DeviceCode', 'BCDFGHJK'))?.id).toBe('d1');
    expect(await p.findByUserCode('AccessToken', 'BCDFGHJK')).toBeUndefined();
    await p.upsert(row({ model: 'Session', id: 's1', uid: 'u-1' }));
    expect((await p.findByUid('Session', 'u-1'))?.id).toBe('s1');
  });

  it('payloads: consume marks, destroy removes', async () => {
    const p = store.oauthPayloads;
    await p.upsert(row({ model: 'AuthorizationCode', id: 'c1' }));
    await p.consume('AuthorizationCode', 'c1', '2026-01-01T00:00:00.000Z');
    expect((await p.find('AuthorizationCode', 'c1'))?.consumedAt).toBe('2026-01-01T00:00:00.000Z');
    await p.destroy('AuthorizationCode', 'c1');
    expect(await p.find('AuthorizationCode', 'c1')).toBeUndefined();
  });

  it('payloads: revoking by grant touches one model; destroying a grant removes all of it', async () => {
    const p = store.oauthPayloads;
    await p.upsert(row({ model: 'Grant', id: 'g9' }));
    await p.upsert(row({ model: 'AccessToken', id: 't9', grantId: 'g9' }));
    await p.upsert(row({ model: 'RefreshToken', id: 'r9', grantId: 'g9' }));
    await p.upsert(row({ model: 'RefreshToken', id: 'r8', grantId: 'g8' }));
    await p.revokeByGrantId('AccessToken', 'g9');
    expect(await p.find('AccessToken', 't9')).toBeUndefined();
    expect(await p.find('RefreshToken', 'r9')).toBeDefined();
    await p.destroyGrant('g9');
    expect(await p.find('RefreshToken', 'r9')).toBeUndefined();
    expect(await p.find('Grant', 'g9')).toBeUndefined();
    expect(await p.find('RefreshToken', 'r8')).toBeDefined();
  });

  it('payloads: purging removes only expired rows; rows without expiry stay', async () => {
    const p = store.oauthPayloads;
    await p.upsert(row({ model: 'Interaction', id: 'old', expiresAt: '2020-01-01T00:00:00.000Z' }));
    await p.upsert(row({ model: 'Client', id: 'forever', expiresAt: null }));
    expect(await p.purgeExpired('2025-01-01T00:00:00.000Z')).toBe(1);
    expect(await p.find('Interaction', 'old')).toBeUndefined();
    expect(await p.find('Client', 'forever')).toBeDefined();
  });

  it('approvals: insert, find by id within the organization and by grant; scopes round-trip', async () => {
    const a = store.agentApprovals;
    await a.insert(approval({ scopes: ['metrics:read', 'audit:read'] }));
    expect(await a.findById('o1', 'a1')).toMatchObject({ scopes: ['metrics:read', 'audit:read'], status: 'active' });
    expect(await a.findById('o2', 'a1')).toBeUndefined();
    expect((await a.findByGrantId('g-a1'))?.id).toBe('a1');
    await expect(a.insert(approval({ id: 'a-dup' }))).rejects.toThrow(); // the grant is unique
  });

  it('approvals: list newest first, per person or whole organization, with offset', async () => {
    const a = store.agentApprovals;
    await a.insert(approval({ id: 'a2', grantId: 'g-a2', userId: 'u2', createdAt: '2026-01-02T00:00:00.000Z' }));
    await a.insert(approval({ id: 'a3', grantId: 'g-a3', createdAt: '2026-01-03T00:00:00.000Z' }));
    const ids = async (q: { userId?: string; limit: number; offset: number }) => (await a.list({ orgId: 'o1', ...q })).map((r) => r.id);
    expect(await ids({ limit: 10, offset: 0 })).toEqual(['a3', 'a2', 'a1']);
    expect(await ids({ userId: 'u1', limit: 10, offset: 0 })).toEqual(['a3', 'a1']);
    expect(await ids({ limit: 1, offset: 1 })).toEqual(['a2', 'a1']); // limit + 1 rows
  });

  it('approvals: touch, revoke once, revoke by project and by member', async () => {
    const a = store.agentApprovals;
    await a.touch('a1', '2026-02-01T00:00:00.000Z');
    expect((await a.findById('o1', 'a1'))?.lastUsedAt).toBe('2026-02-01T00:00:00.000Z');
    expect(await a.markRevoked('a1', '2026-02-02T00:00:00.000Z')).toBe(true);
    expect(await a.markRevoked('a1', '2026-02-03T00:00:00.000Z')).toBe(false);
    expect(await a.findById('o1', 'a1')).toMatchObject({ status: 'revoked', revokedAt: '2026-02-02T00:00:00.000Z' });
    await a.insert(approval({ id: 'p1', grantId: 'g-p1', projectId: 'px' }));
    expect((await a.revokeByProject('px', '2026-02-04T00:00:00.000Z')).map((r) => r.id)).toEqual(['p1']);
    expect((await a.revokeForMember('o1', 'u2', '2026-02-05T00:00:00.000Z')).map((r) => r.id)).toEqual(['a2']);
    expect((await a.findById('o1', 'a3'))?.status).toBe('active');
  });

  it('budgets: put replaces; unknown is undefined', async () => {
    const b = store.agentBudgets;
    expect(await b.find('a3')).toBeUndefined();
    await b.put({ connectionId: 'a3', orgId: 'o1', requestsPerDay: 5, writeActionsPerDay: null, updatedAt: 't1', updatedByUserId: 'u1' });
    await b.put({ connectionId: 'a3', orgId: 'o1', requestsPerDay: 3, writeActionsPerDay: 1, updatedAt: 't2', updatedByUserId: null });
    expect(await b.find('a3')).toEqual({ connectionId: 'a3', orgId: 'o1', requestsPerDay: 3, writeActionsPerDay: 1, updatedAt: 't2', updatedByUserId: null });
  });

  it('usage: admit counts within the limits per day and refuses past them', async () => {
    const b = store.agentBudgets;
    const limits = { requests: 3, writeActions: 1 };
    expect(await b.admit('c9', '2026-03-01', true, limits)).toBe(true);
    expect(await b.admit('c9', '2026-03-01', true, limits)).toBe(false); // second write
    expect(await b.admit('c9', '2026-03-01', false, limits)).toBe(true);
    expect(await b.admit('c9', '2026-03-01', false, limits)).toBe(true);
    expect(await b.admit('c9', '2026-03-01', false, limits)).toBe(false); // fourth request
    expect(await b.usage('c9', '2026-03-01')).toEqual({ requests: 3, writeActions: 1 });
    expect(await b.admit('c9', '2026-03-02', false, limits)).toBe(true); // a new day
    expect(await b.admit('c9', '2026-03-03', false, { requests: 0, writeActions: null })).toBe(false);
    expect(await b.admit('c9', '2026-03-03', true, { requests: null, writeActions: null })).toBe(true);
    expect(await b.usage('c9', '2026-03-04')).toEqual({ requests: 0, writeActions: 0 });
  });
});
