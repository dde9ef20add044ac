/**
 * Control data: every table of the embedded SQLite store copied into PostgreSQL, whose schema the normal
 * migrations created first (same migration list, so same tables and columns).
 *
 * - Order: parents before children (the destination's foreign keys, read from its catalog), so every row's
 *   references exist when it is inserted; the constraints stay on.
 * - Batches: keyset pages in primary-key order (`WHERE (pk) > (last) ORDER BY pk LIMIT n`); each page is
 *   inserted and its progress row (svc_move_progress: the last key copied) updated in ONE PostgreSQL
 *   transaction, so after a kill a page is either stored and recorded or neither: a re-run continues after the
 *   recorded key and never inserts a row twice.
 * - Values exactly: SQLite integers are read as BigInt (safeIntegers) and sent as decimal text, REALs as JS
 *   numbers (shortest round-trip text), text as is (JSON columns are text in both stores), blobs as bytea.
 * - Sequences and identity columns (none today) are set past the copied values at the end.
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';
import { recordBatch, type KeyValue, type ProgressRow, type Sql } from './progress.js';
import type { MoveHook } from './types.js';

/** SQLite bookkeeping that is not control data (each store's migrator keeps its own). */
const NOT_COPIED = new Set(['kysely_migration', 'kysely_migration_lock']);
/** PostgreSQL's parameter limit is 65,535 per statement. */
const MAX_PARAMS = 60_000;

const qi = (id: string) => `"${id.replace(/"/g, '""')}"`;

export interface ControlTable {
  name: string;
  columns: string[];
  /** Primary-key columns in key order; ['rowid'] for a table without one (none today). */
  key: string[];
  /** Whether `key` is SQLite's rowid (not a column of the row). */
  byRowid: boolean;
}

/** The control tables of the SQLite store with their columns and keys, in name order. */
export function sqliteTables(sqlite: Database.Database): ControlTable[] {
  const names = (sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[])
    .map((r) => r.name)
    .filter((n) => !NOT_COPIED.has(n));
  return names.map((name) => {
    const info = sqlite.prepare(`PRAGMA table_info(${qi(name)})`).all() as { name: string; pk: number }[];
    const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    return { name, columns: info.map((c) => c.name), key: pk.length ? pk : ['rowid'], byRowid: pk.length === 0 };
  });
}

/**
 * Checks the destination has every table and column of the source (a destination migrated by another version
 * of the service would not) and orders the tables parents first.
 */
export async function planControl(pool: Sql, tables: ControlTable[]): Promise<ControlTable[]> {
  const { rows: cols } = await pool.query(
    `SELECT table_name, column_name, is_nullable, column_default FROM information_schema.columns WHERE table_schema = current_schema()`,
  );
  const dest = new Map<string, Map<string, { nullable: boolean; hasDefault: boolean }>>();
  for (const c of cols) {
    let t = dest.get(c.table_name);
    if (!t) dest.set(c.table_name, (t = new Map()));
    t.set(c.column_name, { nullable: c.is_nullable === 'YES', hasDefault: c.column_default !== null });
  }
  for (const t of tables) {
    const d = dest.get(t.name);
    if (!d) throw new Error(`the destination PostgreSQL schema has no table ${t.name}: was it migrated by another version of the service? Move with the version that last ran the embedded install.`);
    const missing = t.columns.filter((c) => !d.has(c));
    if (missing.length) throw new Error(`the destination table ${t.name} lacks the column(s) ${missing.join(', ')}: was it migrated by another version of the service?`);
    const required = [...d].filter(([c, m]) => !m.nullable && !m.hasDefault && !t.columns.includes(c)).map(([c]) => c);
    if (required.length) throw new Error(`the destination table ${t.name} requires column(s) ${required.join(', ')} the source does not have: was it migrated by another version of the service?`);
  }
  const { rows: fks } = await pool.query(
    `SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND k.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`,
  );
  return parentsFirst(tables, fks as { child: string; parent: string }[]);
}

/** Kahn's order, ties by name; a self-reference does not constrain the order (none today). */
export function parentsFirst(tables: ControlTable[], fks: { child: string; parent: string }[]): ControlTable[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const parents = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set()]));
  for (const { child, parent } of fks) if (child !== parent && byName.has(child) && byName.has(parent)) parents.get(child)!.add(parent);
  const out: ControlTable[] = [];
  const left = new Set(byName.keys());
  while (left.size) {
    const ready = [...left].filter((n) => [...parents.get(n)!].every((p) => !left.has(p))).sort();
    if (!ready.length) throw new Error(`the control tables' foreign keys form a cycle among ${[...left].join(', ')}`);
    for (const n of ready) {
      out.push(byName.get(n)!);
      left.delete(n);
    }
  }
  return out;
}

/** A SQLite value as a PostgreSQL parameter, exactly. */
function pgValue(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  return v;
}

export interface CopyControlOptions {
  sqlite: Database.Database;
  pool: pg.Pool;
  progress: Map<string, ProgressRow>;
  batchRows: number;
  hook?: MoveHook;
  log(line: string): void;
}

export async function copyControlTable(t: ControlTable, opts: CopyControlOptions): Promise<void> {
  const item = `control:${t.name}`;
  const p = opts.progress.get(item);
  if (p?.done) return;
  const limit = Math.max(1, Math.min(opts.batchRows, Math.floor(MAX_PARAMS / t.columns.length)));
  const keyList = t.key.map(qi).join(', ');
  const select = [...t.columns.map(qi), ...(t.byRowid ? ['rowid'] : [])].join(', ');
  const first = opts.sqlite.prepare(`SELECT ${select} FROM ${qi(t.name)} ORDER BY ${keyList} LIMIT ?`).safeIntegers(true).raw(true);
  // Row values compare in key order (SQLite >= 3.15); the primary key's index serves both the filter and the order.
  const next = opts.sqlite
    .prepare(`SELECT ${select} FROM ${qi(t.name)} WHERE (${keyList}) > (${t.key.map(() => '?').join(', ')}) ORDER BY ${keyList} LIMIT ?`)
    .safeIntegers(true)
    .raw(true);
  const keyIdx = t.byRowid ? [t.columns.length] : t.key.map((k) => t.columns.indexOf(k));
  let last: KeyValue[] | null = p?.lastKey ?? null;
  let batch = 0;
  let copied = p?.rows ?? 0;
  if (last) opts.log(`control: ${t.name}: resuming after ${copied} rows`);
  for (;;) {
    const rows = (last ? next.all(...(last as unknown[]), limit) : first.all(limit)) as unknown[][];
    const done = rows.length < limit;
    if (rows.length === 0) {
      await recordBatch(opts.pool, item, null, 0, true);
      break;
    }
    const lastRow = rows[rows.length - 1];
    const key = keyIdx.map((i) => lastRow[i] as KeyValue);
    const params: unknown[] = [];
    const tuples = rows.map((r) => {
      const ph = t.columns.map((_, i) => {
        params.push(pgValue(r[i]));
        return `$${params.length}`;
      });
      return `(${ph.join(', ')})`;
    });
    batch++;
    await inTransaction(opts.pool, async (c) => {
      await c.query(`INSERT INTO ${qi(t.name)} (${t.columns.map(qi).join(', ')}) VALUES ${tuples.join(', ')}`, params);
      await opts.hook?.({ phase: 'control', table: t.name, batch, rows: rows.length });
      await recordBatch(c, item, key, rows.length, done);
    });
    copied += rows.length;
    last = key;
    if (done) break;
  }
  opts.log(`control: ${t.name}: ${copied} rows`);
}

async function inTransaction(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<void>): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await fn(c);
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

/** Sets every sequence behind a serial or identity column of the schema past the largest copied value. */
export async function advanceSequences(pool: Sql): Promise<string[]> {
  const { rows } = await pool.query(
    `SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) AS seq
       FROM information_schema.columns
      WHERE table_schema = current_schema() AND (column_default LIKE 'nextval(%' OR is_identity = 'YES')`,
  );
  const out: string[] = [];
  for (const r of rows) {
    if (!r.seq) continue;
    await pool.query(`SELECT setval($1, GREATEST((SELECT max(${qi(r.column_name)}) FROM ${qi(r.table_name)}), 1))`, [r.seq]);
    out.push(`${r.table_name}.${r.column_name}`);
  }
  return out;
}

export function countSqlite(sqlite: Database.Database, table: string): number {
  return Number((sqlite.prepare(`SELECT count(*) AS n FROM ${qi(table)}`).get() as { n: number }).n);
}

export async function countPg(pool: Sql, table: string): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*) AS n FROM ${qi(table)}`);
  return Number(rows[0].n);
}
