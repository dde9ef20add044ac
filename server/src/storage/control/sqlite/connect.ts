import Database from 'better-sqlite3';

/** How many distinct SQL texts keep a prepared statement (least recently used ones are dropped). */
export const STATEMENT_CACHE_SIZE = 500;

export function openSqlite(file: string): Database.Database {
  const db = new Database(file);
  // WAL + full sync: a committed write survives a crash of the process or the machine.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return withStatementCache(db, STATEMENT_CACHE_SIZE);
}

/**
 * Kysely's SQLite driver prepares every query anew; compiling the SQL was ~6 % of the ingest path's main
 * thread at 1,000 points a request (the key and project lookups of each request). A statement is reusable:
 * better-sqlite3 runs `all`/`run`/`get` synchronously, so one statement is never busy when the next query
 * with the same text asks for it, and SQLite recompiles a statement itself after a schema change. Nothing
 * here streams (`iterate`) from the control store; a statement that is still iterating is not handed out
 * again (a fresh one is prepared instead).
 */
export function withStatementCache(db: Database.Database, size: number): Database.Database {
  const cache = new Map<string, Database.Statement>();
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const hit = cache.get(source);
    if (hit !== undefined && !hit.busy) {
      // Most recently used last: Map keeps insertion order.
      cache.delete(source);
      cache.set(source, hit);
      return hit;
    }
    const stmt = prepare(source);
    if (hit === undefined) {
      cache.set(source, stmt);
      if (cache.size > size) cache.delete(cache.keys().next().value as string);
    }
    return stmt;
  }) as typeof db.prepare;
  return db;
}
