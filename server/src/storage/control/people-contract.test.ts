/** The control store's contract for people and browser sessions, run against SQLite and PostgreSQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestControl } from '../../testing/app.js';
import type { SignInCredentialRecord } from '../../domains/sessions/store.js';
import type { ControlStore } from './stores.js';

const T0 = '2026-01-01T00:00:00.000Z';

describe.each(['sqlite', 'postgres'] as const)('people and sessions store contract on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  const user = (id: string) => ({ id, email: `${id}@example.com`, name: id, passwordHash: 'scrypt$x', createdAt: T0 });
  const cred = (id: string, signInId: string, kind: SignInCredentialRecord['kind']): SignInCredentialRecord => ({
    id, signInId, kind, tokenHash: `h-${id}`, status: 'active', createdAt: T0, expiresAt: '2027-01-01T00:00:00.000Z',
  });

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
    await store.organizations.insert({ id: 'o1', name: 'one', createdAt: T0 });
    for (const id of ['u1', 'u2', 'u3']) await store.users.insert(user(id));
  });
  afterAll(async () => drop());

  it('an email belongs to one user', async () => {
    await expect(store.users.insert({ ...user('u9'), email: 'u1@example.com' })).rejects.toThrow();
    expect((await store.users.findByEmail('u1@example.com'))?.id).toBe('u1');
  });

  it('a person is a member of an organization at most once', async () => {
    await store.memberships.insert({ orgId: 'o1', userId: 'u1', role: 'owner', createdAt: T0 });
    await expect(store.memberships.insert({ orgId: 'o1', userId: 'u1', role: 'member', createdAt: T0 })).rejects.toThrow();
  });

  it('the owner check waits for a concurrent owner change, so the last owner cannot be lost', async () => {
    await store.memberships.insert({ orgId: 'o1', userId: 'u2', role: 'owner', createdAt: T0 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const hasLock = new Promise<void>((r) => (locked = r));
    const first = store.transaction(async (tx) => {
      expect((await tx.memberships.lockOwners('o1')).sort()).toEqual(['u1', 'u2']);
      locked();
      await gate;
      await tx.memberships.updateRole('o1', 'u1', 'member');
    });
    await hasLock;
    const second = store.transaction(async (tx) => tx.memberships.lockOwners('o1'));
    // Give the second transaction time to read, were it not made to wait.
    await new Promise((r) => setTimeout(r, 100));
    release();
    await first;
    expect(await second).toEqual(['u2']);
  });

  it('an invitation is accepted at most once', async () => {
    await store.invitations.insert({
      id: 'i1', orgId: 'o1', email: 'x@example.com', role: 'member', tokenHash: 'ih1', status: 'pending', createdAt: T0,
      expiresAt: '2026-01-08T00:00:00.000Z', acceptedAt: null, acceptedUserId: null, revokedAt: null, createdByUserId: null, createdByApiKeyId: null,
    });
    const results = await Promise.all([store.invitations.markAccepted('i1', T0, 'u3'), store.invitations.markAccepted('i1', T0, 'u3')]);
    expect(results.sort()).toEqual([false, true]);
    expect((await store.invitations.findByTokenHash('ih1'))?.status).toBe('accepted');
  });

  it('a refresh credential rotates once; revoking a family revokes the sign-in and every credential', async () => {
    await store.sessions.insertSignIn({ id: 's1', userId: 'u3', orgId: 'o1', createdAt: T0, revokedAt: null });
    await store.sessions.insertCredential(cred('c1', 's1', 'access'));
    await store.sessions.insertCredential(cred('c2', 's1', 'refresh'));
    expect(await store.sessions.markRotated('c2')).toBe(true);
    expect(await store.sessions.markRotated('c2')).toBe(false);
    await store.sessions.revokeFamily('s1', '2026-01-02T00:00:00.000Z');
    const a = await store.sessions.findCredential('h-c1');
    const r = await store.sessions.findCredential('h-c2');
    expect(a?.credential.status).toBe('revoked');
    expect(r?.credential.status).toBe('revoked');
    expect(a?.signIn).toEqual({ id: 's1', userId: 'u3', orgId: 'o1', createdAt: T0, revokedAt: '2026-01-02T00:00:00.000Z' });
  });

  it("revoking a member's sign-ins touches only that person in that organization", async () => {
    await store.organizations.insert({ id: 'o2', name: 'two', createdAt: T0 });
    await store.sessions.insertSignIn({ id: 's2', userId: 'u2', orgId: 'o1', createdAt: T0, revokedAt: null });
    await store.sessions.insertSignIn({ id: 's3', userId: 'u2', orgId: 'o2', createdAt: T0, revokedAt: null });
    await store.sessions.insertCredential(cred('c3', 's2', 'access'));
    await store.sessions.insertCredential(cred('c4', 's3', 'access'));
    expect(await store.sessions.revokeForMember('o1', 'u2', T0)).toEqual(['s2']);
    expect((await store.sessions.findCredential('h-c3'))?.credential.status).toBe('revoked');
    expect((await store.sessions.findCredential('h-c4'))?.credential.status).toBe('active');
  });
});
