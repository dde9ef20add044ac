/**
 * Builds the server file the end-to-end tests start, makes sure the PostgreSQL server the store contract tests
 * use is up (this machine runs one; start it if it is down), and gives the telemetry tests a ClickHouse
 * endpoint: SVC_TEST_CLICKHOUSE_URL when set (a real server: the live suite), else one `clickhouse:local`
 * (ClickHouse over chdb, tools/clickhouse-local) for the whole run. Each test file makes its own database there.
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The ClickHouse HTTP endpoint of the telemetry tests ('' when none could be started: those tests fail and say why). */
    clickhouseUrl: string;
    clickhouseProblem: string;
  }
}

const url = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

let clickhouse: ChildProcess | undefined;

/** Starts `tools/clickhouse-local` on a free port and resolves with its URL once it listens. */
function startClickHouseLocal(): Promise<string> {
  if (!fs.existsSync('tools/clickhouse-local/node_modules/chdb')) return Promise.reject(new Error('chdb is not installed: run `npm install --prefix tools/clickhouse-local` (npm test does it first)'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tools/clickhouse-local/main.ts', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    clickhouse = child;
    let out = '';
    const timer = setTimeout(() => reject(new Error(`clickhouse-local did not start in 60 s: ${out}`)), 60_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`clickhouse-local exited with ${code}: ${out}`));
    });
  });
}

export default async function setup(project: TestProject) {
  // The end-to-end tests start the server as `npm start` does: the built file (server/src/testing/server-process.ts).
  execSync('node server/scripts/build.mjs', { stdio: 'inherit' });
  let chUrl = process.env.SVC_TEST_CLICKHOUSE_URL ?? '';
  let chProblem = '';
  if (!chUrl) {
    try {
      chUrl = await startClickHouseLocal();
    } catch (e) {
      chProblem = (e as Error).message;
    }
  }
  project.provide('clickhouseUrl', chUrl);
  project.provide('clickhouseProblem', chProblem);
  // Vitest runs what setup returns at the end of the run (a separate `teardown` export is ignored with a default export).
  const teardown = async () => {
    const child = clickhouse;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  if (await reachable()) return teardown;
  try {
    execSync('pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start', { stdio: 'inherit', shell: '/bin/bash' });
  } catch {
    /* reported below */
  }
  for (let i = 0; i < 30 && !(await reachable()); i++) await new Promise((r) => setTimeout(r, 500));
  if (!(await reachable())) throw new Error(`PostgreSQL is not reachable at ${url}; the store contract tests need it (set TEST_DATABASE_URL)`);
  return teardown;
}
