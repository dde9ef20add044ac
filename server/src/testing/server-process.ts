/**
 * The real server in a child process, on a free loopback port, for end-to-end tests: the built file `npm start`
 * runs (`server/dist/main.cjs`, which loads the bundle `server/dist/main.js`; built once per test run by
 * test/global-setup.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** What `npm start` runs (built by `node server/scripts/build.mjs`). */
export const SERVER_MAIN = 'server/dist/main.cjs';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  base: string;
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the server with `env` (plus SVC_HOST/SVC_PORT) and waits until /healthz answers. `nodeArgs` go before
 * the script (the benchmarks' `--cpu-prof`, which NODE_OPTIONS refuses).
 */
export async function startServer(env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerProcess> {
  if (!fs.existsSync(path.join(REPO_ROOT, SERVER_MAIN))) throw new Error(`${SERVER_MAIN} is not built: run node server/scripts/build.mjs`);
  const port = await freePort();
  const scaledOut = process.env.SVC_TEST_TELEMETRY === 'clickhouse' && env.SVC_DATA_DIR ? await scaleOutEnv(env.SVC_DATA_DIR) : {};
  const child = spawn(process.execPath, [...nodeArgs, SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_LOG_LEVEL: 'warn', ...scaledOut, ...env, SVC_HOST: '127.0.0.1', SVC_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  child.stdout!.on('data', (d) => (out += String(d)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${err}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, base, stderr: () => err, stdout: () => out, exited };
}

/** The name of a data dir's PostgreSQL schema and ClickHouse database when the end-to-end run is scaled out. */
const scaleOutName = (dataDir: string) => `e2e_${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}`;

/**
 * The end-to-end run on PostgreSQL + ClickHouse (SVC_TEST_TELEMETRY=clickhouse): a server started on a data
 * dir keeps its control data in a PostgreSQL schema and its telemetry in a ClickHouse database of that data
 * dir's own (the same on a restart), on the test run's endpoints. `clickhouseUrl` given (the benchmarks, outside
 * vitest): that endpoint instead of the test run's; PostgreSQL is TEST_DATABASE_URL or the local server either way.
 */
export async function scaleOutEnv(dataDir: string, clickhouseUrl?: string): Promise<Record<string, string>> {
  const url = clickhouseUrl ?? (await testClickHouseUrl());
  const name = scaleOutName(dataDir);
  const pgUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    await c.query(`CREATE SCHEMA IF NOT EXISTS ${name}`);
  } finally {
    await c.end();
  }
  const sep = pgUrl.includes('?') ? '&' : '?';
  return { DATABASE_URL: `${pgUrl}${sep}options=${encodeURIComponent(`-c search_path=${name}`)}`, SVC_CLICKHOUSE_URL: url, SVC_CLICKHOUSE_DATABASE: name };
}

/** The test run's ClickHouse endpoint (test/global-setup.ts); vitest is imported only here, so the benchmarks can use this file. */
async function testClickHouseUrl(): Promise<string> {
  const { inject } = await import('vitest');
  const url = inject('clickhouseUrl');
  if (!url) throw new Error(`no ClickHouse endpoint for the end-to-end tests: ${inject('clickhouseProblem') || 'unknown reason'}`);
  return url;
}

/**
 * Drops what scaleOutEnv made for a data dir (nothing when the run is embedded and no `clickhouseUrl` is given;
 * with one: on that endpoint, as scaleOutEnv's).
 */
export async function dropScaleOut(dataDir: string, clickhouseUrl?: string): Promise<void> {
  if (clickhouseUrl === undefined && process.env.SVC_TEST_TELEMETRY !== 'clickhouse') return;
  const name = scaleOutName(dataDir);
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres' });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  } finally {
    await c.end();
  }
  const url = clickhouseUrl ?? (await import('vitest')).inject('clickhouseUrl');
  await fetch(`${url}/?query=${encodeURIComponent(`DROP DATABASE IF EXISTS ${name}`)}`, { method: 'POST' }).catch(() => undefined);
}

/** The end of an end-to-end file: the server stopped gracefully (if it started) and its data dir removed. */
export async function stopServer(server: ServerProcess | undefined, dataDir: string): Promise<void> {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await dropScaleOut(dataDir);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
