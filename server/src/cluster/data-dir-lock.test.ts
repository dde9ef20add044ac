/**
 * The data dir's lock in one process (the process-level rule, with real processes and a kill -9, is
 * test/data-dir-lock-e2e.test.ts): a second holder is refused with a message naming the holder and what to
 * do; a released lock is taken again; nothing else is created in the data dir.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from './data-dir-lock.js';

describe('the data dir lock', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lock-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is held by one holder: a second is refused naming the holder, and gets it once it is released', () => {
    const data = path.join(dir, 'data'); // created by the lock
    const first = lockDataDir(data, { controlInPostgres: false });
    expect(fs.readdirSync(data)).toEqual([LOCK_FILE]);
    let refused: unknown;
    try {
      lockDataDir(data, { controlInPostgres: false });
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(DataDirInUseError);
    const err = refused as DataDirInUseError;
    expect(err.holder).toMatchObject({ pid: process.pid, host: os.hostname() });
    expect(err.message).toBe(
      `data dir ${data} is in use by another svc process (pid ${process.pid}, started ${err.holder!.startedAt}) (lock file ${path.join(data, LOCK_FILE)}): ` +
        'one process per data dir, because its embedded stores (control data in SQLite, telemetry in DuckDB) admit one process. ' +
        'To run several API nodes, keep control data in PostgreSQL (DATABASE_URL) and give each node its own SVC_DATA_DIR. Nothing was changed.',
    );
    first.release();
    first.release(); // idempotent
    const again = lockDataDir(data, { controlInPostgres: true });
    try {
      // With control data in PostgreSQL, the telemetry store alone is why.
      expect(() => lockDataDir(data, { controlInPostgres: true })).toThrow(
        /because its embedded telemetry store \(DuckDB\) admits one process\. Nodes sharing PostgreSQL \(DATABASE_URL\) each need their own SVC_DATA_DIR \(or telemetry in ClickHouse, SVC_CLICKHOUSE_URL\)\. Nothing was changed\.$/,
      );
      // With telemetry in ClickHouse, the control store (SQLite) alone.
      expect(() => lockDataDir(data, { controlInPostgres: false, telemetryInClickHouse: true })).toThrow(
        /because its embedded control store \(SQLite\) serves one process\. To run several API nodes, keep control data in PostgreSQL \(DATABASE_URL\)\. Nothing was changed\.$/,
      );
    } finally {
      again.release();
    }
  });

  it('with control data in PostgreSQL and telemetry in ClickHouse, nothing is locked: the data dir holds no store', () => {
    const data = path.join(dir, 'servers');
    const one = lockDataDir(data, { controlInPostgres: true, telemetryInClickHouse: true });
    const two = lockDataDir(data, { controlInPostgres: true, telemetryInClickHouse: true });
    expect([one.file, two.file]).toEqual([null, null]);
    expect(fs.existsSync(data)).toBe(false);
    one.release();
    two.release();
  });
});
