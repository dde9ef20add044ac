/**
 * Running parameterised statements on DuckDB: each value is bound by name, and only the names the
 * statement uses (DuckDB refuses a bound name the statement does not mention).
 */
import { BIGINT, type DuckDBConnection, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

export type Params = Record<string, DuckDBValue>;

/**
 * The parameters a statement names (DuckDB refuses a bound name the statement does not use), with their
 * types: a JS bigint would otherwise be bound as HUGEINT; every integer here (times, steps, limits) is a BIGINT.
 */
export function bound(sql: string, all: Params): [Params, Record<string, DuckDBType>] {
  const values: Params = {};
  const types: Record<string, DuckDBType> = {};
  for (const m of sql.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const k = m[1];
    if (!(k in all)) continue;
    values[k] = all[k];
    if (typeof all[k] === 'bigint') types[k] = BIGINT;
  }
  return [values, types];
}

export async function rows(c: DuckDBConnection, sql: string, all: Params): Promise<unknown[][]> {
  const reader = await c.runAndReadAll(sql, ...bound(sql, all));
  return reader.getRowsJS() as unknown[][];
}

/** Runs a write; returns the rows it changed. */
export async function exec(c: DuckDBConnection, sql: string, all: Params): Promise<number> {
  const r = await c.run(sql, ...bound(sql, all));
  return Number(r.rowsChanged);
}

/** Runs tasks one at a time, in arrival order; a failed task does not stop the next. */
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const out = this.tail.then(fn);
    this.tail = out.catch(() => undefined);
    return out;
  }
}

const deleteQueues = new WeakMap<object, OneAtATime>();

/**
 * The deletes of one telemetry store (metric tombstones, log deletes) run one at a time, so identical
 * concurrent deletes never race on the same rows or tombstone (DuckDB refuses the second writer of a row
 * instead of waiting). A task takes its connection inside the queue, so waiting deletes hold none.
 */
export function deleteQueue(db: object): OneAtATime {
  let q = deleteQueues.get(db);
  if (!q) deleteQueues.set(db, (q = new OneAtATime()));
  return q;
}
