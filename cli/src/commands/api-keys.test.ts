import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';
import { stderrJson } from '../testing/fake-api.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const K1 = {
  id: 'k1',
  name: 'ci',
  status: 'active',
  project_id: 'p1',
  org_wide: false,
  key_prefix: 'svc_ab12',
  scopes: ['metrics:read', 'traces:read'],
  expires_at: '2024-07-01T12:00:00.000Z',
  last_used_at: null,
  created_at: '2024-06-01T12:00:00.000Z',
  revoked_at: null,
  user_id: null,
  created_by_api_key_id: 'k0',
  created_by_state: 'api_key',
};

const { t, svc } = useCliTestEnv(NOW);

describe('svc api-keys create', () => {
  it('posts name, scopes, the active project and expires_in_days (default 30); JSON is the whole answer with the secret', async () => {
    const created = { ...K1, key: 'svc_ab12_secret' };
    t.api.on('POST', '/account/api-keys', { status: 201, body: created });
    const r = await svc(['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--scope', 'traces:read,metrics:read', '--project', 'p1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(created);
    expect(t.api.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/account/api-keys', search: '' });
    expect(t.api.requests[0].body).toEqual({ name: 'ci', scopes: ['metrics:read', 'traces:read'], expires_in_days: 30, project_id: 'p1' });

    // SVC_PROJECT is the active project too; --org-wide binds to none; --expires-in / --expires-at set the days.
    await svc(['api-keys', 'create', 'env key', '--scope', 'logs:read', '--expires-in', '4w'], { env: { ...t.env, SVC_PROJECT: 'p2' } });
    expect(t.api.requests[1].body).toEqual({ name: 'env key', scopes: ['logs:read'], expires_in_days: 28, project_id: 'p2' });
    await svc(['api-keys', 'create', 'org', '--scope', 'projects:read', '--org-wide', '--expires-in', '365d']);
    expect(t.api.requests[2].body).toEqual({ name: 'org', scopes: ['projects:read'], expires_in_days: 365, org_wide: true });
    // 2024-06-11T18:00Z is 10.25 days after NOW: rounded down to 10 whole days (never outlives the time asked for)
    await svc(['api-keys', 'create', 'at', '--scope', 'logs:read', '--project', 'p1', '--expires-at', '2024-06-11T18:00:00Z']);
    expect(t.api.requests[3].body).toMatchObject({ expires_in_days: 10 });
    await svc(['api-keys', 'create', 'at', '--scope', 'logs:read', '--project', 'p1', '--expires-at', '2025-06-01T12:00:00Z']);
    expect(t.api.requests[4].body).toMatchObject({ expires_in_days: 365 });
  });

  it('on a terminal: the secret first in a FIELD/VALUE table and a note that it is shown once', async () => {
    t.api.on('POST', '/account/api-keys', { status: 201, body: { ...K1, key: 'svc_ab12_secret' } });
    const r = await svc(['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--no-color'], { stdoutTTY: true, stderrTTY: true });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^FIELD\s+VALUE$/);
    expect(lines[1]).toMatch(/^key\s+svc_ab12_secret$/);
    expect(r.stdout).toMatch(/scopes\s+metrics:read, traces:read/);
    expect(r.stderr).toContain('shown only this once');
  });

  it('usage errors exit 2 and send nothing: missing name, no scope, unknown scope, bad or too long expiry, project conflicts', async () => {
    const cases: [string[], RegExp][] = [
      [['api-keys', 'create', '--scope', 'metrics:read', '--project', 'p1'], /missing required argument 'name'/],
      [['api-keys', 'create', '', '--scope', 'metrics:read', '--project', 'p1'], /must not be empty/],
      [['api-keys', 'create', 'ci', '--project', 'p1'], /at least one --scope/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:write', '--project', 'p1'], /unknown scope "metrics:write"/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read,', '--project', 'p1'], /unknown scope ""/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-in', 'soon'], /--expires-in/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-in', '12h'], /whole days/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-in', '366d'], /at most 365 days/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-in', '53w'], /at most 365 days/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-in', '99999999999999999999d'], /--expires-in/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-at', '2025-06-01T12:00:01Z'], /at most 365 days/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-at', '2024-06-01T18:00:00Z'], /at least one day/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-at', '2020-01-01T00:00:00Z'], /at least one day/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-at', '2024-07-01'], /RFC 3339/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--expires-at', '2024-07-01T00:00:00Z', '--expires-in', '7d'], /not both/],
      [['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1', '--org-wide'], /contradict/],
      [['api-keys', 'revoke', 'k1'], /--yes/],
      [['api-keys', 'revoke'], /missing required argument 'id'/],
      [['api-keys', 'update', 'k1'], /nothing to update/],
      [['api-keys', 'update', 'k1', '--scope', 'root'], /unknown scope/],
      [['api-keys', 'update', 'k1', '--name', ''], /--name must not be empty/],
      [['api-keys', 'list', '--limit', '201'], /at most 200/],
      [['api-keys', 'list', '--limit', '0'], /positive integer/],
    ];
    for (const [args, message] of cases) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      const err = stderrJson(r);
      expect(err, args.join(' ')).toMatchObject({ exit_code: 2 });
      expect(err.message, args.join(' ')).toMatch(message);
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('without a project and without --org-wide: exit 2, and the message says how to choose a project', async () => {
    const r = await svc(['api-keys', 'create', 'ci', '--scope', 'metrics:read']);
    expect(r.code).toBe(2);
    const err = stderrJson(r);
    expect(err).toMatchObject({ error: 'project_required', exit_code: 2 });
    for (const hint of ['--project', 'SVC_PROJECT', 'svc projects use', 'svc projects list', '--org-wide']) expect(err.message).toContain(hint);
    expect(t.api.requests).toHaveLength(0);
  });

  it('API errors keep their status and map to exit codes (400 -> 1, 401 -> 3, 403 -> 4, 404 -> 5)', async () => {
    for (const [status, error, code] of [
      [400, 'invalid_request', 1],
      [401, 'unauthorized', 3],
      [403, 'permission_denied', 4],
      [404, 'not_found', 5],
    ] as const) {
      t.api.on('POST', '/account/api-keys', { status, body: { error, message: `said ${status}` } });
      const r = await svc(['api-keys', 'create', 'ci', '--scope', 'metrics:read', '--project', 'p1']);
      expect(r.code, String(status)).toBe(code);
      expect(stderrJson(r)).toEqual({ error, message: `said ${status}`, exit_code: code, status });
    }
    t.api.on('POST', '/account/api-keys/k1/revoke', { status: 429, body: { error: 'rate_limited', message: 'slow down' }, headers: { 'retry-after': '7' } });
    const limited = await svc(['api-keys', 'revoke', 'k1', '--yes']);
    expect(limited.code).toBe(1);
    expect(stderrJson(limited)).toEqual({ error: 'rate_limited', message: 'slow down', exit_code: 1, status: 429, retry_after: 7 });
  });
});

describe('svc api-keys create: hostile input', () => {
  it('a scope repeated a thousand times is sent once; odd expiry text is refused; a huge name reaches the server, whose 400 exits 1', async () => {
    t.api.on('POST', '/account/api-keys', (req) =>
      (req.body as { name: string }).name.length > 200
        ? { status: 400, body: { error: 'invalid_request', message: 'body/name must NOT have more than 200 characters' } }
        : { status: 201, body: { ...K1, key: 'svc_x' } },
    );
    const many = Array.from({ length: 1000 }, () => ['--scope', 'metrics:read']).flat();
    expect((await svc(['api-keys', 'create', 'ci', '--project', 'p1', ...many])).code).toBe(0);
    expect(t.api.requests[0].body).toMatchObject({ scopes: ['metrics:read'] });
    for (const bad of ['３０d', '30 d', '1e2', '0x10', '30d;rm', '-30d', '0d']) {
      const r = await svc(['api-keys', 'create', 'ci', '--project', 'p1', '--scope', 'metrics:read', '--expires-in', bad]);
      expect(r.code, bad).toBe(2);
    }
    expect(t.api.requests).toHaveLength(1);
    const huge = await svc(['api-keys', 'create', 'n'.repeat(100_000), '--project', 'p1', '--scope', 'metrics:read']);
    expect(huge.code).toBe(1);
    expect(stderrJson(huge)).toMatchObject({ error: 'invalid_request', status: 400, exit_code: 1 });
  });
});

describe('svc api-keys list|get|update|revoke', () => {
  it('list reads every page and prints the keys', async () => {
    const K2 = { ...K1, id: 'k2', name: 'org', project_id: null, org_wide: true, scopes: ['projects:read'] };
    t.api.on('GET', '/account/api-keys', (req) =>
      req.query.cursor?.[0] === 'c2' ? { body: { api_keys: [K2], next_cursor: null } } : { body: { api_keys: [K1], next_cursor: 'c2' } },
    );
    const r = await svc(['api-keys', 'list', '--limit', '1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ api_keys: [K1, K2], next_cursor: null });
    expect(t.api.requests.map((q) => q.search)).toEqual(['limit=1', 'limit=1&cursor=c2']);
    const tbl = await svc(['api-keys', 'list', '-o', 'table']);
    const lines = tbl.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+STATUS\s+PROJECT\s+SCOPES\s+PREFIX\s+EXPIRES_AT\s+LAST_USED_AT$/);
    expect(lines[1]).toMatch(/^k1\s+ci\s+active\s+p1\s+metrics:read,traces:read\s+svc_ab12/);
    expect(lines[2]).toMatch(/^k2\s+org\s+active\s+\(org-wide\)\s+projects:read/);
  });

  it('get and update address the key by its url-encoded id; update sends only what is given', async () => {
    t.api.on('GET', '/account/api-keys/k 1', { body: K1 });
    const g = await svc(['api-keys', 'get', 'k 1']);
    expect([g.code, JSON.parse(g.stdout)]).toEqual([0, K1]);
    expect(t.api.requests[0].path).toBe('/api/v1/account/api-keys/k%201');
    t.api.on('PATCH', '/account/api-keys/k1', (req) => ({ body: { ...K1, ...(req.body as object) } }));
    const u = await svc(['api-keys', 'update', 'k1', '--name', 'ci-2', '--scope', 'metrics:read']);
    expect(u.code).toBe(0);
    expect(t.api.requests[1].body).toEqual({ name: 'ci-2', scopes: ['metrics:read'] });
    await svc(['api-keys', 'update', 'k1', '--scope', 'traces:read', '--scope', 'metrics:read']);
    expect(t.api.requests[2].body).toEqual({ scopes: ['traces:read', 'metrics:read'] });
    t.api.on('PATCH', '/account/api-keys/k1', { status: 409, body: { error: 'conflict', message: 'the key is revoked' } });
    const c = await svc(['api-keys', 'update', 'k1', '--name', 'x']);
    expect(c.code).toBe(1);
    expect(stderrJson(c)).toMatchObject({ error: 'conflict', status: 409 });
  });

  it('revoke is destructive: refused without --yes (nothing sent), then POST .../revoke; an unknown key exits 5', async () => {
    t.api.on('POST', '/account/api-keys/k1/revoke', { body: { ...K1, status: 'revoked', revoked_at: NOW.toISOString() } });
    expect((await svc(['api-keys', 'revoke', 'k1'])).code).toBe(2);
    expect(t.api.requests).toHaveLength(0);
    const r = await svc(['api-keys', 'revoke', 'k1', '--yes']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'k1', status: 'revoked' });
    expect(t.api.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/account/api-keys/k1/revoke', rawBody: '' });
    const tbl = await svc(['api-keys', 'revoke', 'k1', '--yes', '-o', 'table']);
    expect(tbl.stdout).toBe('Revoked API key k1 (ci)\n');
    const nf = await svc(['api-keys', 'revoke', 'nope', '--yes']);
    expect(nf.code).toBe(5);
    expect(stderrJson(nf)).toMatchObject({ status: 404, exit_code: 5 });
  });
});
