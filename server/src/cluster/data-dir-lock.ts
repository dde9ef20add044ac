/**
 * One process per data dir (docs/several-nodes.md "The embedded mode is one process per data dir"). The data
 * dir's embedded stores admit one process: control data in SQLite (without DATABASE_URL) and telemetry in
 * DuckDB (without SVC_CLICKHOUSE_URL).
 * DuckDB refuses a second process by itself, but only when the telemetry store opens, after the key-hash
 * secret was read and the SQLite store opened and migrated; a second process of another version would have
 * migrated the live store. So the lock is taken first, before anything in the data dir is touched.
 *
 * The lock is an operating-system lock, released by the kernel when the process ends however it ends (a
 * kill -9 leaves no lock behind, and no pid is trusted to say whether the holder lives): the lock file
 * `svc.lock` is a small SQLite database whose write lock (a POSIX advisory lock, the one SQLite itself
 * relies on) the holder keeps for its whole life by leaving a write transaction open. Before taking it, the
 * holder records its pid, host and start time there, so a refused process can say who holds it. A data dir on
 * a network file system without working POSIX locks is not supported (nor is it for SQLite or DuckDB).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

export const LOCK_FILE = 'svc.lock';

export interface DataDirLock {
  /** The lock file; null when nothing in the data dir needed one. */
  readonly file: string | null;
  /** Lets the data dir go (after the stores closed). The process ending does the same. */
  release(): void;
}

export class DataDirInUseError extends Error {
  constructor(
    message: string,
    readonly holder?: { pid: number; host: string; startedAt: string },
  ) {
    super(message);
    this.name = 'DataDirInUseError';
  }
}

/**
 * Where the stores are: what is not in a server (PostgreSQL, ClickHouse) is embedded in the data dir and
 * admits one process (SQLite: a second process would not hear the first one's changes; DuckDB: one writer).
 */
export interface StoreLocations {
  controlInPostgres: boolean;
  telemetryInClickHouse?: boolean;
}

function inUseMessage(dataDir: string, file: string, holder: DataDirInUseError['holder'], stores: StoreLocations): string {
  const who = holder
    ? `another svc process (pid ${holder.pid}${holder.host !== os.hostname() ? ` on host ${holder.host}` : ''}, started ${holder.startedAt})`
    : 'another svc process';
  const why = stores.controlInPostgres
    ? 'its embedded telemetry store (DuckDB) admits one process. Nodes sharing PostgreSQL (DATABASE_URL) each need their own SVC_DATA_DIR (or telemetry in ClickHouse, SVC_CLICKHOUSE_URL)'
    : stores.telemetryInClickHouse
      ? 'its embedded control store (SQLite) serves one process. To run several API nodes, keep control data in PostgreSQL (DATABASE_URL)'
      : 'its embedded stores (control data in SQLite, telemetry in DuckDB) admit one process. To run several API nodes, keep control data in PostgreSQL (DATABASE_URL) and give each node its own SVC_DATA_DIR';
  return `data dir ${dataDir} is in use by ${who} (lock file ${file}): one process per data dir, because ${why}. Nothing was changed.`;
}

const isBusy = (e: unknown) => {
  const code = (e as { code?: string }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
};

/**
 * Takes the data dir's lock for this process's life, or throws DataDirInUseError naming the holder. Two
 * processes starting at the same instant: exactly one gets it (the lock decides, not the recorded pid).
 * With control data in PostgreSQL and telemetry in ClickHouse the data dir holds no store (at most the
 * key-hash secret's file): nothing is locked, and nodes may share it.
 */
export function lockDataDir(dataDir: string, stores: StoreLocations): DataDirLock {
  if (stores.controlInPostgres && stores.telemetryInClickHouse) return { file: null, release() {} };
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  // timeout 0: a held lock answers at once instead of being waited for.
  const db = new Database(file, { timeout: 0 });
  const refuse = (): never => {
    let holder: DataDirInUseError['holder'];
    try {
      const row = db.prepare('SELECT pid, host, started_at AS startedAt FROM holder WHERE id = 1').get() as DataDirInUseError['holder'];
      holder = row ?? undefined;
    } catch {
      /* the holder is creating the file right now: it is named without its pid */
    }
    db.close();
    throw new DataDirInUseError(inUseMessage(dataDir, file, holder, stores), holder);
  };
  try {
    db.exec('CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, host TEXT NOT NULL, started_at TEXT NOT NULL)');
    // Record who holds it (committed, so a refused process can read it)...
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT OR REPLACE INTO holder (id, pid, host, started_at) VALUES (1, ?, ?, ?)').run(process.pid, os.hostname(), new Date().toISOString());
    // (a refused process reading the holder at this instant delays the commit by a moment, never refuses it)
    db.pragma('busy_timeout = 2000');
    db.exec('COMMIT');
    db.pragma('busy_timeout = 0');
    // ...then hold the write lock for good. Another process that took it in between wins; this one is refused.
    db.exec('BEGIN IMMEDIATE');
  } catch (e) {
    if (db.inTransaction) db.exec('ROLLBACK');
    if (isBusy(e)) refuse();
    db.close();
    throw e;
  }
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}
