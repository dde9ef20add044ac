/**
 * What a move has done so far, kept in the destination PostgreSQL schema (`svc_move_progress`), so that a move
 * that was interrupted (a kill, a lost connection, a full disk) continues where it stopped when it is run again.
 *
 * One row per item: `move` (which install is being moved: the source's organization ids), `control:<table>`,
 * `telemetry:<table>` and `telemetry:summaries`. `last_key` is the key (JSON) of the last source row whose batch
 * is stored; `done` says the item is complete. A control batch and its progress row commit in one transaction;
 * a ClickHouse batch is recorded only after its insert returned (move.ts says how a re-sent one is undone).
 */
import type pg from 'pg';

export const PROGRESS_TABLE = 'svc_move_progress';

/** A key value as stored: JSON, with integers beyond JSON numbers and bytes tagged. */
export type KeyValue = string | number | bigint | Buffer | null;

export interface ProgressRow {
  item: string;
  lastKey: KeyValue[] | null;
  rows: number;
  done: boolean;
  detail: string | null;
}

/** Something that runs SQL: the pool or a client inside a transaction. */
export type Sql = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

export function encodeKey(values: readonly KeyValue[]): string {
  return JSON.stringify(values.map((v) => (typeof v === 'bigint' ? { i: v.toString() } : Buffer.isBuffer(v) ? { b: v.toString('base64') } : v)));
}

export function decodeKey(text: string): KeyValue[] {
  const raw = JSON.parse(text) as unknown[];
  return raw.map((v) => {
    if (v !== null && typeof v === 'object') {
      const o = v as { i?: string; b?: string };
      if (typeof o.i === 'string') return BigInt(o.i);
      if (typeof o.b === 'string') return Buffer.from(o.b, 'base64');
      throw new Error(`${PROGRESS_TABLE}: unreadable key value ${JSON.stringify(v)}`);
    }
    return v as KeyValue;
  });
}

export async function ensureProgressTable(db: Sql): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS ${PROGRESS_TABLE} (
    item text PRIMARY KEY,
    last_key text,
    rows_copied bigint NOT NULL DEFAULT 0,
    done boolean NOT NULL DEFAULT false,
    detail text,
    updated_at text NOT NULL)`);
}

export async function progressTableExists(db: Sql): Promise<boolean> {
  const { rows } = await db.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [PROGRESS_TABLE]);
  return rows[0]?.present === true;
}

export async function readProgress(db: Sql): Promise<Map<string, ProgressRow>> {
  const out = new Map<string, ProgressRow>();
  const { rows } = await db.query(`SELECT item, last_key, rows_copied, done, detail FROM ${PROGRESS_TABLE}`);
  for (const r of rows) out.set(r.item, { item: r.item, lastKey: r.last_key === null ? null : decodeKey(r.last_key), rows: Number(r.rows_copied), done: r.done, detail: r.detail });
  return out;
}

/** Records a stored batch: the key of its last row, `rows` more rows, and whether the item is complete. */
export async function recordBatch(db: Sql, item: string, lastKey: readonly KeyValue[] | null, rows: number, done: boolean): Promise<void> {
  await db.query(
    `INSERT INTO ${PROGRESS_TABLE} (item, last_key, rows_copied, done, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (item) DO UPDATE SET last_key = COALESCE(EXCLUDED.last_key, ${PROGRESS_TABLE}.last_key),
       rows_copied = ${PROGRESS_TABLE}.rows_copied + EXCLUDED.rows_copied, done = EXCLUDED.done, updated_at = EXCLUDED.updated_at`,
    [item, lastKey === null ? null : encodeKey(lastKey), rows, done, new Date().toISOString()],
  );
}

export async function recordDetail(db: Sql, item: string, detail: string): Promise<void> {
  await db.query(
    `INSERT INTO ${PROGRESS_TABLE} (item, detail, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (item) DO UPDATE SET detail = EXCLUDED.detail, updated_at = EXCLUDED.updated_at`,
    [item, detail, new Date().toISOString()],
  );
}
