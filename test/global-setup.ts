/**
 * Builds the server file the end-to-end tests start, and makes sure the PostgreSQL server the store contract tests
 * use is up (this machine runs one; start it if it is down).
 */
import { execSync } from 'node:child_process';
import pg from 'pg';

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

export default async function setup() {
  // The end-to-end tests start the server as `npm start` does: the built file (server/src/testing/server-process.ts).
  execSync('node server/scripts/build.mjs', { stdio: 'inherit' });
  if (await reachable()) return;
  try {
    execSync('pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start', { stdio: 'inherit', shell: '/bin/bash' });
  } catch {
    /* reported below */
  }
  for (let i = 0; i < 30 && !(await reachable()); i++) await new Promise((r) => setTimeout(r, 500));
  if (!(await reachable())) throw new Error(`PostgreSQL is not reachable at ${url}; the store contract tests need it (set TEST_DATABASE_URL)`);
}
