/** Opens the control store: PostgreSQL when a URL is given (server mode), SQLite in the data dir otherwise. */
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { migrateToLatest } from './migrations/index.js';
import type { ControlDatabase } from './schema.js';
import { openSqlite } from './sqlite/connect.js';
import { openPostgresPool } from './postgres/connect.js';

export type ControlDb = Kysely<ControlDatabase>;

export interface ControlStoreOptions {
  databaseUrl?: string;
  dataDir?: string;
  /** PostgreSQL schema to use (tests isolate themselves this way). */
  pgSchema?: string;
  /** SQLite file path; ':memory:' for a throwaway store. */
  sqlitePath?: string;
}

export async function openControlStore(opts: ControlStoreOptions): Promise<{ db: ControlDb; dialect: 'sqlite' | 'postgres' }> {
  if (opts.databaseUrl) {
    const pool = await openPostgresPool(opts.databaseUrl, opts.pgSchema);
    const db = new Kysely<ControlDatabase>({ dialect: new PostgresDialect({ pool }) });
    const { rows } = await pool.query<{ schema: string | null }>('SELECT current_schema() AS schema');
    if (!rows[0]?.schema) throw new Error('PostgreSQL has no current schema: set search_path in DATABASE_URL (options=-c search_path=...)');
    await migrateToLatest(db, rows[0].schema);
    return { db, dialect: 'postgres' };
  }
  let file = opts.sqlitePath;
  if (!file) {
    if (!opts.dataDir) throw new Error('either databaseUrl, sqlitePath or dataDir is required');
    fs.mkdirSync(opts.dataDir, { recursive: true });
    file = path.join(opts.dataDir, 'control.sqlite');
  }
  const db = new Kysely<ControlDatabase>({ dialect: new SqliteDialect({ database: openSqlite(file) }) });
  await migrateToLatest(db);
  return { db, dialect: 'sqlite' };
}
