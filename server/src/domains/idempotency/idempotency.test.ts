/**
 * Safe retries (spec 1, Authentication rule 7: "idempotency replays (about 10-minute window, keyed
 * to the credential) become unreachable" on revocation; Limits: "Idempotency replay window | about
 * 10 minutes"). Through HTTP, on both control stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, signIn } from '../../testing/people.js';
import { ABANDONED_AFTER_MS, REPLAY_WINDOW_MS } from './service.js';

describe.each(['sqlite', 'postgres'] as const)('Idempotency-Key (%s)', (dialect) => {
  let t: TestApp;
  const clock = fixedClock('2026-03-01T12:00:00Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
  });
  afterAll(async () => t.close());

  let n = 0;
  const fresh = () => `idem-${dialect}-${++n}`;
  const orgKey = async (scopes = ['projects:read', 'projects:write']) => {
    const res = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: `k${++n}`, scopes, org_wide: true } });
    expect(res.statusCode, res.body).toBe(201);
    return { key: res.json().key as string, id: res.json().id as string };
  };
  const createProject = (key: string, idem: string | undefined, name = 'idem') =>
    t.call({ method: 'POST', url: '/api/v1/projects', key, payload: { name }, headers: idem === undefined ? {} : { 'idempotency-key': idem } });
  const projectCount = async () => (await t.call({ method: 'GET', url: '/api/v1/projects?limit=200' })).json().projects.length as number;

  it('a retry with the same key returns the first answer and the write runs once', async () => {
    const { key } = await orgKey();
    const idem = fresh();
    const before = await projectCount();
    const first = await createProject(key, idem);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await createProject(key, idem);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(await projectCount()).toBe(before + 1);
  });

  it('without the header every request runs', async () => {
    const { key } = await orgKey();
    const a = await createProject(key, undefined);
    const b = await createProject(key, undefined);
    expect(a.json().id).not.toBe(b.json().id);
  });

  it('rule 7: replays are keyed to the credential: another credential with the same key runs its own request', async () => {
    const a = await orgKey();
    const b = await orgKey();
    const idem = fresh();
    const fromA = await createProject(a.key, idem);
    const fromB = await createProject(b.key, idem);
    expect(fromB.statusCode).toBe(201);
    expect(fromB.headers['idempotent-replayed']).toBeUndefined();
    expect(fromB.json().id).not.toBe(fromA.json().id);
  });

  it('rule 7: after revocation of the key, its replays are unreachable (401, not the stored answer)', async () => {
    const { key, id } = await orgKey();
    const idem = fresh();
    expect((await createProject(key, idem)).statusCode).toBe(201);
    expect((await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${id}/revoke` })).statusCode).toBe(200);
    const replay = await createProject(key, idem);
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
  });

  it('rule 7: after sign-out, the session\'s replays are unreachable', async () => {
    const person = await addPerson(t, 'owner');
    const b = await signIn(t, person);
    const idem = fresh();
    const first = await b.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'by-session' }, headers: { 'idempotency-key': idem } });
    expect(first.statusCode).toBe(201);
    const stolen = b.clone();
    expect((await b.call({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode).toBe(204);
    const replay = await stolen.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'by-session' }, headers: { 'idempotency-key': idem } });
    expect(replay.statusCode).toBe(401);
  });

  /** Every stored replay row as text, as a copy of the database would show it. */
  const rawReplays = async () => JSON.stringify(await t.db.selectFrom('idempotency_records').selectAll().execute());

  it('defect 7: a minted API key\'s secret is never at rest in clear in the replay table; the replay still returns it', async () => {
    const idem = fresh();
    const mint = () =>
      t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'sealed', scopes: ['projects:read'], org_wide: true }, headers: { 'idempotency-key': idem } });
    const first = await mint();
    expect(first.statusCode, first.body).toBe(201);
    const secret = first.json().key as string;
    const again = await mint();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().key).toBe(secret);
    const rows = await rawReplays();
    expect(rows).toContain(idem); // the record is there ...
    expect(rows).not.toContain(secret); // ... but not the secret
    expect(rows).not.toContain(secret.slice(4, 24));
    expect(rows).not.toContain(first.json().id); // nor anything else of the answer
  });

  it('defect 7: an invitation token is never at rest in clear in the replay table; the replay still returns it', async () => {
    const idem = fresh();
    const invite = () => t.call({ method: 'POST', url: '/api/v1/invitations', payload: { email: `sealed-${idem}@example.com`, role: 'member' }, headers: { 'idempotency-key': idem } });
    const first = await invite();
    expect(first.statusCode, first.body).toBe(201);
    const token = first.json().token as string;
    expect(token).toEqual(expect.any(String));
    const again = await invite();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().token).toBe(token);
    const rows = await rawReplays();
    expect(rows).toContain(idem);
    expect(rows).not.toContain(token);
    expect(rows).not.toContain(token.slice(4, 24));
  });

  it('defect 7: the request fingerprint is keyed too (a password in a body cannot be guessed from a copy)', async () => {
    const idem = fresh();
    const { key } = await orgKey();
    await createProject(key, idem, 'fp');
    const rows = (await t.db.selectFrom('idempotency_records').selectAll().where('idempotency_key', '=', idem).execute()) as { fingerprint: string }[];
    const { createHash } = await import('node:crypto');
    const unkeyed = createHash('sha256').update(JSON.stringify(['POST', '/api/v1/projects', '/api/v1/projects', { name: 'fp' }])).digest('base64url');
    expect(rows[0].fingerprint).not.toBe(unkeyed);
  });

  it('defect 7: another token of the same sign-in (after a refresh) cannot open the replay: 409, nothing runs twice', async () => {
    const b = await signIn(t, await addPerson(t, 'owner'));
    const idem = fresh();
    const body = { name: 'sealed-session' };
    expect((await b.call({ method: 'POST', url: '/api/v1/projects', payload: body, headers: { 'idempotency-key': idem } })).statusCode).toBe(201);
    expect((await b.call({ method: 'POST', url: '/api/v1/auth/refresh' })).statusCode).toBe(200);
    const before = await projectCount();
    const retry = await b.call({ method: 'POST', url: '/api/v1/projects', payload: body, headers: { 'idempotency-key': idem } });
    expect(retry.statusCode, retry.body).toBe(409);
    expect(retry.json().details).toEqual({ reason: 'IDEMPOTENCY_REPLAY_UNREADABLE' });
    expect(await projectCount()).toBe(before);
  });

  it('the same key with a different request is refused with 422 and changes nothing', async () => {
    const { key } = await orgKey();
    const idem = fresh();
    await createProject(key, idem, 'one');
    const before = await projectCount();
    const other = await createProject(key, idem, 'two');
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ error: 'idempotency_key_reused', details: { reason: 'IDEMPOTENCY_KEY_REUSED' } });
    expect(await projectCount()).toBe(before);
  });

  it('a refused write is not stored: the corrected retry with the same key runs', async () => {
    const { key } = await orgKey();
    const idem = fresh();
    const bad = await t.call({ method: 'POST', url: '/api/v1/projects', key, payload: { name: 'x', sampling_rate: 2 }, headers: { 'idempotency-key': idem } });
    expect(bad.statusCode).toBe(400);
    // The same bad request again is evaluated again (still 400, not a replay).
    const bad2 = await t.call({ method: 'POST', url: '/api/v1/projects', key, payload: { name: 'x', sampling_rate: 2 }, headers: { 'idempotency-key': idem } });
    expect(bad2.statusCode).toBe(400);
    expect(bad2.headers['idempotent-replayed']).toBeUndefined();
    const good = await createProject(key, idem, 'x');
    expect(good.statusCode).toBe(201);
  });

  it('a refusal for a missing scope is not stored either', async () => {
    const { key } = await orgKey(['projects:read']);
    const idem = fresh();
    expect((await createProject(key, idem)).statusCode).toBe(403);
    expect((await createProject(key, idem)).statusCode).toBe(403);
  });

  it('the replay window is about 10 minutes: after it the key is new again', async () => {
    const { key } = await orgKey();
    const idem = fresh();
    const first = await createProject(key, idem);
    clock.advance(REPLAY_WINDOW_MS - 1000);
    expect((await createProject(key, idem)).json().id).toBe(first.json().id);
    clock.advance(2000);
    const later = await createProject(key, idem);
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json().id).not.toBe(first.json().id);
  });

  it('a retry while the first request is still running gets 409 with Retry-After; an abandoned claim is taken over', async () => {
    const { key, id } = await orgKey();
    const idem = fresh();
    // The claim a request holds while it runs (or that its process left behind when it died).
    const now = clock.now();
    const fp = t.ctx.idempotency.fingerprint({ method: 'POST', route: '/api/v1/projects', url: '/api/v1/projects', body: { name: 'idem' } });
    const claimed = await t.ctx.control.idempotency.claim(
      { credential: `api_key:${id}`, key: idem, fingerprint: fp, state: 'pending', response: null, createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + REPLAY_WINDOW_MS).toISOString() },
      now.toISOString(),
      new Date(now.getTime() - ABANDONED_AFTER_MS).toISOString(),
    );
    expect(claimed).toBe('claimed');
    const busy = await createProject(key, idem);
    expect(busy.statusCode).toBe(409);
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.json()).toMatchObject({ error: 'conflict', details: { reason: 'IDEMPOTENCY_IN_PROGRESS' } });
    clock.advance(ABANDONED_AFTER_MS + 1000);
    expect((await createProject(key, idem)).statusCode).toBe(201);
  });

  it('a malformed Idempotency-Key is 400 and changes nothing', async () => {
    const { key } = await orgKey();
    const before = await projectCount();
    for (const bad of ['', 'x'.repeat(256), 'has space', 'tab\there']) {
      const res = await createProject(key, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    expect(await projectCount()).toBe(before);
  });

  it('a replay is not audited a second time', async () => {
    const { key, id } = await orgKey();
    const idem = fresh();
    const p = (await createProject(key, idem)).json();
    await createProject(key, idem);
    const res = await t.call({ method: 'GET', url: '/api/v1/account/audit-events?limit=200&resource=projects' });
    expect(res.statusCode, res.body).toBe(200);
    const mine = (res.json().audit_events as { actor: { api_key_id: string | null }; action: string; result: string }[]).filter(
      (e) => e.actor.api_key_id === id && e.action === 'create',
    );
    expect(mine.map((e) => e.result)).toEqual(['success']);
    expect(p.id).toBeTruthy();
  });
});
