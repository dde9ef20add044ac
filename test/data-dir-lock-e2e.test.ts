/**
 * The embedded mode is one process per data dir (docs/several-nodes.md), with real server processes: a
 * second process on the same data dir is refused at start with a clear error and touches nothing; the first
 * serves on unharmed; after a kill -9 of the first (no clean shutdown, the lock file left behind) the next
 * start succeeds with the data intact; two processes started at the same instant on an empty data dir end with
 * exactly one running. With control data in PostgreSQL, the data dir (its DuckDB) still admits one process.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../server/src/testing/app.js';
import { freePort, REPO_ROOT, SERVER_MAIN, startServer, type ServerProcess } from '../server/src/testing/server-process.js';

const KEY = 'svc_lock_e2e_owner_key_0123456789abcdef';
const PROJECT = '7a1e2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b';

/** Runs the server until it exits on its own (killed after 20 s): its exit code and stderr. */
async function runUntilExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string; pid: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_LOG_LEVEL: 'warn', ...env, SVC_HOST: '127.0.0.1', SVC_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  child.stdout!.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stderr, pid: child.pid! };
}

const inUse = (dataDir: string) =>
  new RegExp(
    `^svc failed to start: data dir ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another svc process (\\(pid (\\d+), started [^)]+\\) )?` +
      `\\(lock file ${path.join(dataDir, 'svc.lock').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): one process per data dir, because `,
    'm', // (a library's warning may come first on stderr)
  );

async function ingestAndRead(server: ServerProcess, body: string): Promise<string[]> {
  const sent = await fetch(`${server.base}/v1/logs?project_id=${PROJECT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-api-key': KEY },
    body: JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'lock-e2e' } }] }, scopeLogs: [{ logRecords: [{ timeUnixNano: String(Date.now() * 1_000_000), severityNumber: 9, body: { stringValue: body } }] }] }] }),
  });
  expect(sent.status, await sent.clone().text()).toBe(200);
  return readBodies(server);
}

async function readBodies(server: ServerProcess): Promise<string[]> {
  const res = await fetch(`${server.base}/api/v1/logs?project_id=${PROJECT}&since=1h`, { headers: { 'x-svc-api-key': KEY } });
  expect(res.status).toBe(200);
  return ((await res.json()).logs as { body: string }[]).map((l) => l.body).sort();
}

describe('one process per data dir', () => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const tmp = (label: string) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `svc-lock-e2e-${label}-`));
    dirs.push(d);
    return d;
  };
  const start = async (env: Record<string, string>) => {
    const s = await startServer(env);
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of servers) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await s.exited;
      }
    }
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a second process is refused with a clear error, the first serves on unharmed, and after a kill -9 of the first the next start succeeds with the data intact', async () => {
    const dataDir = tmp('embedded');
    const env = { SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: KEY, SVC_INIT_PROJECT_ID: PROJECT };
    const first = await start(env);
    expect(await ingestAndRead(first, 'before the second')).toEqual(['before the second']);

    const second = await runUntilExit(env);
    expect(second.code).toBe(1);
    const m = inUse(dataDir).exec(second.stderr);
    expect(m, second.stderr).not.toBeNull();
    expect(Number(m![2])).toBe(first.child.pid);
    expect(second.stderr).toContain('its embedded stores (control data in SQLite, telemetry in DuckDB) admit one process. To run several API nodes, keep control data in PostgreSQL (DATABASE_URL) and give each node its own SVC_DATA_DIR. Nothing was changed.');

    // The first one never noticed: it reads, writes and is ready.
    expect((await fetch(`${first.base}/readyz`)).status).toBe(200);
    expect(await ingestAndRead(first, 'after the second')).toEqual(['after the second', 'before the second']);

    // kill -9: no shutdown, no checkpoint, the lock file stays. The kernel released the lock with the process.
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(fs.existsSync(path.join(dataDir, 'svc.lock'))).toBe(true);
    const third = await start(env);
    expect(await readBodies(third)).toEqual(['after the second', 'before the second']);
    third.child.kill('SIGTERM');
    expect(await third.exited).toEqual({ code: 0, signal: null });
  });

  it('two processes started at the same instant on an empty data dir: exactly one runs', async () => {
    const dataDir = tmp('race');
    const env = { SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: KEY, SVC_INIT_PROJECT_ID: PROJECT };
    const [x, y] = await Promise.allSettled([start(env), start(env)]);
    const ran = [x, y].filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<ServerProcess>[];
    const refused = [x, y].filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(ran).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(String(refused[0].reason)).toContain(`data dir ${dataDir} is in use by another svc process`);
    expect(await ingestAndRead(ran[0].value, 'one of two')).toEqual(['one of two']);
  });

  it('with control data in PostgreSQL, a data dir still admits one process (its telemetry store), and the error says so', async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA ${schema}`);
      const dataDir = tmp('pg');
      const env = {
        SVC_DATA_DIR: dataDir,
        SVC_INIT_API_KEY: KEY,
        SVC_INIT_PROJECT_ID: PROJECT,
        SVC_KEY_HASH_SECRET: randomBytes(32).toString('base64'),
        DATABASE_URL: `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      };
      const first = await start(env);
      const second = await runUntilExit(env);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(inUse(dataDir));
      expect(second.stderr).toContain(
        'because its embedded telemetry store (DuckDB) admits one process. Nodes sharing PostgreSQL (DATABASE_URL) each need their own SVC_DATA_DIR (or telemetry in ClickHouse, SVC_CLICKHOUSE_URL). Nothing was changed.',
      );
      expect(await ingestAndRead(first, 'still here')).toEqual(['still here']);
      first.child.kill('SIGTERM');
      expect(await first.exited).toEqual({ code: 0, signal: null });
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await admin.end();
    }
  });
});
