import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, stderrJson } from '../testing/fake-api.js';

const M1 = { user_id: 'u1', email: 'a@example.com', name: 'Ada', role: 'owner', created_at: '2026-01-01T00:00:00Z' };
const M2 = { user_id: 'u2', email: 'b@example.com', name: 'Bo', role: 'member', created_at: '2026-01-02T00:00:00Z' };
const INV = { id: 'i1', email: 'c@example.com', role: 'admin', status: 'pending', expires_at: '2026-01-08T00:00:00Z', created_at: '2026-01-01T00:00:00Z' };

let t: CliTestEnv;
beforeEach(async () => {
  t = await startCliTestEnv();
});
afterEach(() => stopCliTestEnv(t));

describe('svc members', () => {
  it('list follows cursors with --all and prints a table on request', async () => {
    t.api.on('GET', '/members', (req) =>
      req.query.cursor?.[0] === 'c2' ? { body: { members: [M2], next_cursor: null } } : { body: { members: [M1], next_cursor: 'c2' } },
    );
    const all = await runInProcess(['members', 'list', '--all'], { env: t.env });
    expect(JSON.parse(all.stdout)).toEqual({ members: [M1, M2], next_cursor: null });
    const table = await runInProcess(['members', 'list', '-o', 'table'], { env: t.env });
    expect(table.stdout.split('\n')[0]).toBe('USER_ID  EMAIL          NAME  ROLE   JOINED');
  });

  it('remove is destructive: it needs --yes, then sends DELETE', async () => {
    t.api.on('DELETE', '/members/u2', { status: 204 });
    const refused = await runInProcess(['members', 'remove', 'u2'], { env: t.env });
    expect(refused.code).toBe(2);
    expect(t.api.requests).toHaveLength(0);
    const ok = await runInProcess(['members', 'remove', 'u2', '--yes'], { env: t.env });
    expect(ok.code).toBe(0);
    expect(t.api.requests[0]).toMatchObject({ method: 'DELETE', path: '/api/v1/members/u2' });
  });

  it('set-role sends {role} and refuses an unknown role before sending anything', async () => {
    t.api.on('PATCH', '/members/u2', (req) => ({ body: { ...M2, ...(req.body as object) } }));
    const ok = await runInProcess(['members', 'set-role', 'u2', 'admin'], { env: t.env });
    expect(JSON.parse(ok.stdout).role).toBe('admin');
    expect(t.api.requests[0].body).toEqual({ role: 'admin' });
    const bad = await runInProcess(['members', 'set-role', 'u2', 'boss'], { env: t.env });
    expect(bad.code).toBe(2);
    expect(stderrJson(bad)).toMatchObject({ error: 'usage_error' });
    expect(t.api.requests).toHaveLength(1);
  });

  it('the last-owner refusal of the server keeps its status and exits 1', async () => {
    t.api.on('PATCH', '/members/u1', { status: 409, body: { error: 'conflict', message: 'the last owner cannot be demoted' } });
    const r = await runInProcess(['members', 'set-role', 'u1', 'member'], { env: t.env });
    expect(r.code).toBe(1);
    expect(stderrJson(r)).toMatchObject({ error: 'conflict', status: 409, exit_code: 1 });
  });
});

describe('svc invitations', () => {
  it('create sends {email, role} (role defaults to member) and prints the token', async () => {
    t.api.on('POST', '/invitations', (req) => ({ status: 201, body: { ...INV, ...(req.body as object), token: 'tok' } }));
    const r = await runInProcess(['invitations', 'create', '--email', 'c@example.com', '--role', 'admin'], { env: t.env });
    expect(t.api.requests[0].body).toEqual({ email: 'c@example.com', role: 'admin' });
    expect(JSON.parse(r.stdout).token).toBe('tok');
    await runInProcess(['invitations', 'create', '--email', 'd@example.com'], { env: t.env });
    expect(t.api.requests[1].body).toEqual({ email: 'd@example.com', role: 'member' });
  });

  it('list reads the invitations page', async () => {
    t.api.on('GET', '/invitations', { body: { invitations: [INV], next_cursor: null } });
    const r = await runInProcess(['invitations', 'list', '--limit', '5'], { env: t.env });
    expect(JSON.parse(r.stdout)).toEqual({ invitations: [INV], next_cursor: null });
    expect(t.api.requests[0].search).toBe('limit=5');
  });

  it('revoke needs --yes, then posts to /invitations/{id}/revoke', async () => {
    t.api.on('POST', '/invitations/i1/revoke', { body: { ...INV, status: 'revoked' } });
    expect((await runInProcess(['invitations', 'revoke', 'i1'], { env: t.env })).code).toBe(2);
    const r = await runInProcess(['invitations', 'revoke', 'i1', '--yes'], { env: t.env });
    expect(JSON.parse(r.stdout).status).toBe('revoked');
  });
});
