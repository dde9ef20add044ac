/**
 * The real server runs background jobs: main.ts starts the runner (its own purge job is scheduled
 * and runs at start), and SIGTERM stops it before the stores close, with a clean exit.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, stopServer, type ServerProcess } from '../server/src/testing/server-process.js';
import { waitFor } from '../server/src/jobs/testing.js';

describe('background jobs in the real server', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-jobs-e2e-'));
  let server: ServerProcess | undefined;
  afterAll(() => stopServer(server, dataDir));

  it('runs its scheduled purge at start, keeps the next occurrence, and shuts down cleanly on SIGTERM', async () => {
    server = await startServer({ SVC_DATA_DIR: dataDir, SVC_JOBS_POLL_INTERVAL_MS: '100' });
    const rows = () => {
      const db = new Database(path.join(dataDir, 'control.sqlite'), { readonly: true, fileMustExist: true });
      try {
        return db.prepare(`SELECT status, every_seconds AS every FROM jobs WHERE kind = 'jobs.purge' ORDER BY run_at`).all() as { status: string; every: number }[];
      } finally {
        db.close();
      }
    };
    await waitFor(() => rows().some((r) => r.status === 'done'), 'the purge job to run', 20_000);
    expect(rows()).toEqual([
      { status: 'done', every: 3600 },
      { status: 'pending', every: 3600 },
    ]);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    server = undefined;
    expect(rows()).toHaveLength(2);
  });

  it('refuses to start with an invalid SVC_JOBS_* value, naming it', async () => {
    await expect(startServer({ SVC_DATA_DIR: dataDir, SVC_JOBS_LEASE_SECONDS: '1' })).rejects.toThrow(/SVC_JOBS_LEASE_SECONDS must be an integer between 5 and 3600/);
  });
});
