/**
 * Several API nodes (docs/several-nodes.md): two real server processes on one machine, each on its own
 * port and with its own data dir (embedded telemetry is per node), sharing
 * one PostgreSQL schema and one key-hash secret. A change made through node A is enforced by node B within
 * one second: a revoked key, a signed-out session, a content policy change, a containment freeze, and the
 * end of a live tail open on B (whose periodic re-check is set to its 25-second maximum, so only the change
 * feed can end it in time). Each bound is measured from A's answer to B's first enforcing answer, polled.
 * Scheduled jobs run once per period across both nodes. On the ClickHouse run (SVC_TEST_TELEMETRY=clickhouse)
 * the nodes share telemetry too: what is ingested through A is read, and tailed, through B.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TEST_DATABASE_URL } from '../server/src/testing/app.js';
import { startServer, type ServerProcess } from '../server/src/testing/server-process.js';

const OWNER = `svc_nodes_e2e_owner_${randomBytes(8).toString('hex')}`;
const PROJECT = '5d2c7a9e-3f1b-4c8d-9e0a-1b2c3d4e5f60';
const EMAIL = `nodes-e2e-${randomBytes(3).toString('hex')}@example.com`;
const PASSWORD = 'correct horse battery staple';
const BOUND_MS = 1000;
/** The ClickHouse run of the suite: telemetry is shared as well (see vitest.config.ts; docs/scale-out.md). */
const SHARED_TELEMETRY = process.env.SVC_TEST_TELEMETRY === 'clickhouse';
const USER_MESSAGE = 'Ada asked: what is my balance?';

type Obj = Record<string, any>;

/** The database URL whose connections use `schema` (the search_path option, as an operator would write it). */
function urlWithSchema(url: string, schema: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** Polls `probe` (every 20 ms) until it returns true; returns the milliseconds since `since`. Throws after 5 s. */
async function within(since: number, what: string, probe: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await probe()) return Date.now() - since;
    if (Date.now() - since > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A live tail read as Server-Sent Events: its blocks as they arrive, and whether it ended. */
async function openTail(url: string, headers: Record<string, string>) {
  const ac = new AbortController();
  const res = await fetch(url, { headers, signal: ac.signal });
  expect(res.status, await (res.status === 200 ? Promise.resolve('') : res.clone().text())).toBe(200);
  const blocks: string[] = [];
  let ended = false;
  void (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          blocks.push(buffer.slice(0, i));
          buffer = buffer.slice(i + 2);
        }
      }
    } catch {
      /* aborted */
    }
    ended = true;
  })();
  const finalError = () => blocks.find((b) => /^event: error$/m.test(b));
  return {
    blocks,
    get ended() {
      return ended;
    },
    finalError,
    opened: () => within(Date.now(), 'the tail to open', async () => blocks.some((b) => b.includes('stream open'))),
    close: () => ac.abort(),
  };
}

describe('two server processes sharing one PostgreSQL', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const dirs = [0, 1].map((i) => fs.mkdtempSync(path.join(os.tmpdir(), `svc-node-${i}-`)));
  let a: ServerProcess;
  let b: ServerProcess;
  let admin: pg.Client;
  const tails: { close(): void }[] = [];

  const call = (node: ServerProcess, method: string, url: string, opts: { key?: string | null; cookie?: string; body?: unknown } = {}) =>
    fetch(`${node.base}${url}`, {
      method,
      headers: {
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(opts.key === null || opts.cookie ? {} : { 'x-svc-api-key': opts.key ?? OWNER }),
        ...(opts.cookie ? { cookie: opts.cookie, 'x-svc-csrf': '1' } : {}),
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  const json = async (res: Response, status: number) => {
    const text = await res.text();
    expect(res.status, text).toBe(status);
    return text ? (JSON.parse(text) as Obj) : {};
  };
  const mintKey = async (scopes: string[], where: { project_id: string } | { org_wide: true } = { project_id: PROJECT }) =>
    json(await call(a, 'POST', '/api/v1/account/api-keys', { body: { name: `k-${scopes.join('-')}`, scopes, ...where } }), 201) as Promise<{ id: string; key: string }>;
  /** One OTLP/JSON log record through `node`: a GenAI user message (recorded content of class model_transcript), or a plain log. */
  const sendLog = (node: ServerProcess, key: string, body = USER_MESSAGE, event = 'gen_ai.user.message') =>
    call(node, 'POST', `/v1/logs${key === OWNER ? `?project_id=${PROJECT}` : ''}`, {
      key,
      body: {
        resourceLogs: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'nodes-e2e' } }] },
            scopeLogs: [{ logRecords: [{ timeUnixNano: String(Date.now() * 1_000_000), severityNumber: 9, body: { stringValue: body }, attributes: event ? [{ key: 'event.name', value: { stringValue: event } }] : [] }] }],
          },
        ],
      },
    });
  const policy = (cell: (cls: string, sink: string) => string) => ({
    rules: ['model_transcript', 'tool_arguments', 'replay_dom', 'person_properties', 'memory_item', 'group_properties'].flatMap((c) =>
      ['store', 'read', 'export', 'judge_transfer'].map((s) => ({ content_class: c, sink: s, decision: cell(c, s) })),
    ),
  });

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const shared = {
      DATABASE_URL: urlWithSchema(TEST_DATABASE_URL, schema),
      SVC_KEY_HASH_SECRET: randomBytes(32).toString('base64'),
      SVC_INIT_API_KEY: OWNER,
      SVC_INIT_PROJECT_ID: PROJECT,
      // Only the change feed can end a tail within the bound: the periodic re-check waits its maximum.
      SVC_STREAM_RECHECK_MS: '25000',
      SVC_LOG_TAIL_POLL_MS: '100',
      SVC_CONTENT_POLICY_TTL_SECONDS: '30',
      SVC_JOBS_POLL_INTERVAL_MS: '200',
      // On the ClickHouse run (SVC_TEST_TELEMETRY=clickhouse) both nodes share one telemetry database too.
      ...(SHARED_TELEMETRY ? { SVC_CLICKHOUSE_DATABASE: schema } : {}),
    };
    // A first (it creates the organization), then B on the same database.
    a = await startServer({ ...shared, SVC_DATA_DIR: dirs[0] });
    b = await startServer({ ...shared, SVC_DATA_DIR: dirs[1] });
  });

  afterAll(async () => {
    for (const t of tails) t.close();
    for (const node of [a, b]) {
      if (!node) continue;
      node.child.kill('SIGTERM');
      await node.exited;
    }
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin?.end();
    if (SHARED_TELEMETRY) await fetch(`${inject('clickhouseUrl')}/?query=${encodeURIComponent(`DROP DATABASE IF EXISTS ${schema}`)}`, { method: 'POST' }).catch(() => undefined);
  });

  it.runIf(SHARED_TELEMETRY)('with shared telemetry (ClickHouse): ingested through A, read through B, and seen by a live tail open on B', async () => {
    const k = await mintKey(['ingest:write', 'logs:read']);
    const tail = await openTail(`${b.base}/api/v1/stream/logs`, { 'x-svc-api-key': k.key });
    tails.push(tail);
    await tail.opened();
    expect((await sendLog(a, k.key, 'ingested through A', '')).status).toBe(200);
    const t0 = Date.now();
    await within(t0, 'B to read it', async () => {
      const logs = (await json(await call(b, 'GET', '/api/v1/logs?since=1h', { key: k.key }), 200)).logs as Obj[];
      return logs.some((l) => l.body === 'ingested through A');
    });
    await within(t0, 'the tail on B to send it', async () => tail.blocks.some((x) => /^event: log$/m.test(x) && x.includes('ingested through A')));
  });

  it('both nodes serve one organization: a key minted on A works on B', async () => {
    const k = await mintKey(['projects:read']);
    expect((await call(b, 'GET', '/api/v1/projects', { key: k.key })).status).toBe(200);
    expect((await json(await call(b, 'GET', '/api/v1/projects'), 200)).projects.map((p: Obj) => p.id)).toEqual([PROJECT]);
  });

  it('a key revoked on A is refused by B within one second', async () => {
    const k = await mintKey(['logs:read']);
    expect((await call(b, 'GET', '/api/v1/logs?since=1h', { key: k.key })).status).toBe(200);
    await json(await call(a, 'POST', `/api/v1/account/api-keys/${k.id}/revoke`), 200);
    const t0 = Date.now();
    const ms = await within(t0, 'B to refuse the revoked key', async () => (await call(b, 'GET', '/api/v1/logs?since=1h', { key: k.key })).status === 401);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('a live tail open on B ends (final `unauthorized`) within one second of its key being revoked on A', async () => {
    const k = await mintKey(['logs:read']);
    const tail = await openTail(`${b.base}/api/v1/stream/logs`, { 'x-svc-api-key': k.key });
    tails.push(tail);
    await tail.opened();
    await json(await call(a, 'POST', `/api/v1/account/api-keys/${k.id}/revoke`), 200);
    const t0 = Date.now();
    const ms = await within(t0, 'the tail on B to end', async () => tail.finalError() !== undefined);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(JSON.parse(tail.finalError()!.split('data: ')[1])).toEqual({ error: 'unauthorized', message: 'authentication required', final: true });
  });

  it('a session signed out on A: B refuses it, and B ends the live tail it opened, within one second', async () => {
    const inv = await json(await call(a, 'POST', '/api/v1/invitations', { body: { email: EMAIL, role: 'member' } }), 201);
    await json(await call(a, 'POST', '/api/v1/invitations/accept', { key: null, body: { token: inv.token, name: 'Ada', password: PASSWORD } }), 201);
    const login = await call(a, 'POST', '/api/v1/auth/login', { key: null, body: { email: EMAIL, password: PASSWORD } });
    expect(login.status).toBe(200);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    expect(cookie).toMatch(/svc_session=.*svc_refresh=|svc_refresh=.*svc_session=/);
    expect((await call(b, 'GET', '/api/v1/users/me', { cookie })).status).toBe(200);
    const tail = await openTail(`${b.base}/api/v1/stream/logs?project_id=${PROJECT}`, { cookie });
    tails.push(tail);
    await tail.opened();

    expect((await call(a, 'POST', '/api/v1/auth/logout', { cookie })).status).toBe(204);
    const t0 = Date.now();
    const refused = await within(t0, 'B to refuse the session', async () => (await call(b, 'GET', '/api/v1/users/me', { cookie })).status === 401);
    const ended = await within(t0, 'the tail on B to end', async () => tail.finalError() !== undefined);
    expect(Math.max(refused, ended)).toBeLessThan(BOUND_MS);
    expect(JSON.parse(tail.finalError()!.split('data: ')[1])).toMatchObject({ error: 'unauthorized', final: true });
  });

  it('a content policy changed on A applies on B within one second (B had the old one cached)', async () => {
    await json(await call(a, 'PUT', `/api/v1/projects/${PROJECT}/content-policy`, { body: policy((c, s) => (c === 'model_transcript' && s === 'read' ? 'deny' : 'allow')) }), 200);
    expect((await sendLog(b, OWNER)).status).toBe(200);
    const bodyOnB = async () => {
      const logs = (await json(await call(b, 'GET', `/api/v1/logs?project_id=${PROJECT}&since=1h`), 200)).logs as Obj[];
      return logs.find((l) => l.service_name === 'nodes-e2e');
    };
    // B reads (and caches) the old policy: the body is withheld.
    expect(await bodyOnB()).toMatchObject({ body: null, body_withheld: true });
    await json(await call(a, 'PUT', `/api/v1/projects/${PROJECT}/content-policy`, { body: policy(() => 'allow') }), 200);
    const t0 = Date.now();
    const ms = await within(t0, 'B to serve the body', async () => (await bodyOnB())?.body === USER_MESSAGE);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('a containment frozen on A: B refuses the key\'s telemetry within one second (its reads go on)', async () => {
    const agent = await mintKey(['ingest:write', 'logs:read']);
    const approver = await mintKey(['quarantine:approve', 'agents:read'], { org_wide: true });
    expect((await sendLog(b, agent.key, 'before the freeze')).status).toBe(200);
    const q = await json(await call(a, 'POST', `/api/v1/quarantines?project_id=${PROJECT}`, { body: { api_key_id: agent.id, reason: 'two-node freeze' } }), 201);
    // The two-person rule: another identity approves (a key with no person behind it is its own).
    await json(await call(a, 'POST', `/api/v1/quarantines/${q.id}/approve`, { key: approver.key }), 200);
    const t0 = Date.now();
    const ms = await within(t0, 'B to refuse the frozen key', async () => (await sendLog(b, agent.key, 'after the freeze')).status === 401);
    expect(ms).toBeLessThan(BOUND_MS);
    expect((await call(b, 'GET', '/api/v1/logs?since=1h', { key: agent.key })).status).toBe(200);
  });

  it('a project deleted on A ends the live tails of that project open on B', async () => {
    const p = await json(await call(a, 'POST', '/api/v1/projects', { body: { name: 'doomed' } }), 201);
    const tail = await openTail(`${b.base}/api/v1/stream/logs?project_id=${p.id}`, { 'x-svc-api-key': OWNER });
    tails.push(tail);
    await tail.opened();
    expect((await call(a, 'DELETE', `/api/v1/projects/${p.id}`)).status).toBe(204);
    const t0 = Date.now();
    const ms = await within(t0, 'the tail on B to end', async () => tail.ended);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(tail.blocks.some((x) => x.includes('project deleted'))).toBe(true);
  });

  it('each recurring job is scheduled once and runs once per period across both nodes', async () => {
    interface Occurrence {
      kind: string;
      status: string;
      run_at: string;
      every_seconds: number;
    }
    const rows = async () =>
      (await admin.query<Occurrence>(`SELECT kind, status, run_at, every_seconds FROM ${schema}.jobs WHERE every_seconds IS NOT NULL ORDER BY kind, run_at`)).rows;
    await within(Date.now(), 'the purge job to run at start', async () => (await rows()).some((r) => r.kind === 'jobs.purge' && r.status === 'done'));
    const byKind = new Map<string, Occurrence[]>();
    for (const r of await rows()) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), r]);
    expect(byKind.size).toBeGreaterThan(3);
    for (const [kind, list] of byKind) {
      // One schedule per kind: at most one occurrence waiting or running...
      expect(list.filter((r) => r.status === 'pending' || r.status === 'running').length, kind).toBeLessThanOrEqual(1);
      // ...and the occurrences that ran are a period apart (two nodes never ran the same period).
      const done = list.filter((r) => r.status === 'done').map((r) => Date.parse(r.run_at));
      for (let i = 1; i < done.length; i++) expect(done[i] - done[i - 1], kind).toBeGreaterThanOrEqual(list[0].every_seconds * 1000);
    }
    expect(byKind.get('jobs.purge')!.filter((r) => r.status === 'done')).toHaveLength(1);
  });
});
