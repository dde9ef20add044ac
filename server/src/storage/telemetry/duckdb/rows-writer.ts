/**
 * Group commit for the trace and log writers, as in metrics-writer.ts: a request hands over its rows and
 * waits; one flush loop writes everything queued since the last flush in ONE transaction and answers
 * every waiter only after COMMIT returned (DuckDB has written the commit to its WAL by then, so a 2xx
 * built on it survives a `kill -9`). When a flush of several requests fails, each is retried in a
 * transaction of its own, so only a request that cannot be committed is refused. No timer: the batch
 * grows with the load while a commit runs.
 *
 * Each writer has its own connection (`instance.connect()`), opened on first use and closed by stop():
 * the `writer` connection of TelemetryDb belongs to the metrics writer, and DuckDB runs transactions of
 * different connections side by side (appends never conflict). A writer may pass a `Serialize` that runs
 * each of its transactions in turn with other writes (spans-writer.ts: with trace deletes).
 *
 * Rows go in as data chunks (column vectors) through an appender. The chunk layout is read from the table
 * itself (`SELECT * ... LIMIT 0`), so a column added to the table later (by another feature) is filled
 * with NULL instead of breaking the appender, which always needs every column in table order.
 */
import {
  DuckDBDataChunk,
  DuckDBTypeId,
  listValue,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { TelemetryDb } from './open.js';
import { LITTLE_ENDIAN, duckdb } from './metric-point-chunks.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';


interface Pending<P> {
  item: P;
  resolve(): void;
  reject(e: unknown): void;
}

/**
 * What a table's writer does inside the transaction for a batch of requests; it may return what to do once
 * the transaction committed (never run when it rolled back).
 */
export type CommitBatch<P> = (c: DuckDBConnection, batch: P[]) => Promise<void | (() => void)>;

/** Runs a whole transaction (BEGIN to COMMIT or ROLLBACK), e.g. one at a time with other writes (spans-writer.ts). */
export type Serialize = <T>(transaction: () => Promise<T>) => Promise<T>;

const direct: Serialize = (transaction) => transaction();

export class GroupCommitWriter<P> {
  private queue: Pending<P>[] = [];
  private running: Promise<void> | null = null;
  private stopped = false;
  private conn: Promise<DuckDBConnection> | null = null;

  constructor(
    private readonly db: TelemetryDb,
    private readonly what: string,
    private readonly commitBatch: CommitBatch<P>,
    private readonly serialize: Serialize = direct,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Resolves once the item is committed; rejects when the commit failed or the writer is stopped. */
  write(item: P): Promise<void> {
    if (this.stopped) return Promise.reject(new WriterStoppedError(this.what));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.running === null) this.running = this.loop();
    });
  }

  /** Waits until everything queued so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Refuses new writes, commits what is queued, closes the connection. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.flush();
    const conn = this.conn;
    this.conn = null;
    if (conn) (await conn.catch(() => null))?.closeSync();
  }

  private async loop(): Promise<void> {
    // Let the requests of the current tick join the first batch.
    await new Promise<void>((r) => setImmediate(r));
    for (;;) {
      // Checked and cleared with no await in between (see metrics-writer.ts).
      if (this.queue.length === 0) {
        this.running = null;
        return;
      }
      const batch = this.queue;
      this.queue = [];
      try {
        await this.commit(batch.map((p) => p.item));
        for (const p of batch) p.resolve();
      } catch (e) {
        if (batch.length === 1) {
          batch[0].reject(e);
          continue;
        }
        // One request's rows must not fail its neighbours: retry each alone.
        for (const p of batch) {
          try {
            await this.commit([p.item]);
            p.resolve();
          } catch (e2) {
            p.reject(e2);
          }
        }
      }
    }
  }

  private async commit(items: P[]): Promise<void> {
    this.conn ??= this.db.instance.connect().catch((e: unknown) => {
      this.conn = null; // the next commit tries again
      throw e;
    });
    const c = await this.conn;
    await this.serialize(() => this.db.busy(async () => {
      await c.run('BEGIN TRANSACTION');
      try {
        const after = await this.commitBatch(c, items);
        await c.run('COMMIT');
        if (after) after();
      } catch (e) {
        await c.run('ROLLBACK').catch(() => undefined);
        throw e;
      }
    }));
  }
}

// ---- data chunks

/** A column's value for a row: null for NULL; numbers for BIGINT and INTEGER columns, string[] for lists. */
export type CellValue = string | number | boolean | string[] | null;
export type ColumnGetters<R> = Record<string, (row: R) => CellValue>;

/** A table's columns in table order, with their DuckDB types. */
export interface TableLayout {
  names: string[];
  types: DuckDBType[];
}

/** Reads the layout on a short-lived connection of its own (the writer's may be inside a transaction). */
export async function tableLayout(db: TelemetryDb, table: string): Promise<TableLayout> {
  const c = await db.instance.connect();
  try {
    const r = await c.run(`SELECT * FROM ${table} LIMIT 0`);
    return { names: r.columnNames(), types: r.columnTypes() };
  } finally {
    c.closeSync();
  }
}

/** DuckDB's vector size: the most rows one chunk holds. */
const CHUNK_ROWS = 2048;

interface Vector {
  setItem(i: number, v: DuckDBValue): void;
  flush(): void;
}

function converter(type: DuckDBType): (v: Exclude<CellValue, null>) => DuckDBValue {
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
      return (v) => BigInt(v as number);
    case DuckDBTypeId.LIST:
      return (v) => listValue(v as string[]);
    default:
      return (v) => v as DuckDBValue;
  }
}

/**
 * Clears the validity bits of the rows flagged in `nulls`. `setItem(i, null)` costs a few BigInt
 * operations per row, so the words are written at once when the vector's validity has the shape
 * @duckdb/node-api 1.5 gives it (a BigUint64Array at offset 0, created by the first NULL and written by
 * flush()); any other shape takes the per-row path.
 */
function setNulls(v: Vector, n: number, nulls: Uint8Array, first: number): void {
  v.setItem(first, null);
  const validity = (v as unknown as { validity?: { data?: unknown; offset?: number } }).validity;
  const words = validity?.data;
  if (words instanceof BigUint64Array && validity?.offset === 0 && words.length * 64 >= n) {
    for (let w = 0; w * 64 < n; w++) {
      let lo = 0;
      let hi = 0;
      const base = w * 64;
      for (let b = 0; b < 32 && base + b < n; b++) if (!nulls[base + b]) lo |= 1 << b;
      for (let b = 0; b < 32 && base + 32 + b < n; b++) if (!nulls[base + 32 + b]) hi |= 1 << b;
      words[w] = (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
    }
  } else for (let i = first + 1; i < n; i++) if (nulls[i]) v.setItem(i, null);
}

// Scratch buffers of the fixed-width columns, filled and copied into a chunk synchronously (never across an await).
const words = new Uint32Array(CHUNK_ROWS * 2); // 8 bytes a row: int64 as (low, high), or a double
const doubles = new Float64Array(words.buffer);
const int32s = new Int32Array(words.buffer, 0, CHUNK_ROWS);
const bytes = new Uint8Array(words.buffer, 0, CHUNK_ROWS);
const validity = new Uint32Array(Math.ceil(CHUNK_ROWS / 64) * 2);
const TWO_32 = 4294967296;

/** Bytes per row of the column types written at once (0: row by row through the node-api vector). */
function fixedWidth(type: DuckDBType): number {
  if (!LITTLE_ENDIAN) return 0;
  switch (type.typeId) {
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.DOUBLE:
      return 8;
    case DuckDBTypeId.INTEGER:
      return 4;
    case DuckDBTypeId.BOOLEAN:
      return 1;
    default:
      return 0;
  }
}

/**
 * Rows [off, off + n) of a BIGINT, DOUBLE, INTEGER or BOOLEAN column, written into the chunk's vector in one
 * copy (and its validity in another when a row is NULL): no BigInt and no native call per value. A BIGINT's
 * number is integral (times in µs, counts), so the (low, high) words are exact.
 */
function fillFixed<R>(chunk: DuckDBDataChunk, col: number, type: DuckDBType, get: (row: R) => CellValue, rows: readonly R[], off: number, n: number): void {
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, col);
  const words64 = Math.ceil(n / 64) * 2;
  validity.fill(0, 0, words64);
  let nulls = 0;
  const id = type.typeId;
  for (let i = 0; i < n; i++) {
    const v = get(rows[off + i]);
    if (v === null) {
      nulls++;
      if (id === DuckDBTypeId.BOOLEAN) bytes[i] = 0;
      else if (id === DuckDBTypeId.INTEGER) int32s[i] = 0;
      else doubles[i] = 0;
      continue;
    }
    validity[i >>> 5] |= 1 << (i & 31);
    if (id === DuckDBTypeId.BIGINT) {
      const x = v as number;
      const hi = Math.floor(x / TWO_32);
      words[2 * i] = x - hi * TWO_32;
      words[2 * i + 1] = hi; // two's complement when negative
    } else if (id === DuckDBTypeId.DOUBLE) doubles[i] = v as number;
    else if (id === DuckDBTypeId.INTEGER) int32s[i] = v as number;
    else bytes[i] = v ? 1 : 0;
  }
  duckdb.copy_data_to_vector(vector, 0, words.buffer, 0, n * fixedWidth(type));
  if (nulls > 0) {
    duckdb.vector_ensure_validity_writable(vector);
    duckdb.copy_data_to_vector_validity(vector, 0, validity.buffer, 0, words64 * 4);
  }
}

const stringTs = new Uint32Array(CHUNK_ROWS * 4); // DuckDB string_t: 16 bytes a row
const firstRows = new Int32Array(CHUNK_ROWS);

/**
 * Rows [off, off + n) of a VARCHAR column: each distinct string of the chunk is assigned once through DuckDB
 * (into the vector's own string heap when longer than 12 bytes) and every other row holding it gets a copy
 * of that row's 16-byte string_t, so they share the one string the vector owns (project ids, services,
 * operations and statuses repeat on nearly every row). NULL rows are marked in the validity.
 */
function fillVarchar<R>(chunk: DuckDBDataChunk, col: number, get: (row: R) => CellValue, rows: readonly R[], off: number, n: number): void {
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, col);
  const words64 = Math.ceil(n / 64) * 2;
  validity.fill(0, 0, words64);
  const first = new Map<string, number>();
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = get(rows[off + i]);
    if (v === null) {
      nulls++;
      firstRows[i] = -1;
      continue;
    }
    validity[i >>> 5] |= 1 << (i & 31);
    const str = v as string;
    const f = first.get(str);
    if (f === undefined) {
      first.set(str, i);
      firstRows[i] = i;
      duckdb.vector_assign_string_element(vector, i, str);
    } else firstRows[i] = f;
  }
  const data = duckdb.vector_get_data(vector, n * 16);
  const assigned = new Uint32Array(data.buffer, data.byteOffset, n * 4);
  for (let i = 0; i < n; i++) {
    const f = firstRows[i] * 4;
    const t = i * 4;
    if (f < 0) {
      stringTs[t] = stringTs[t + 1] = stringTs[t + 2] = stringTs[t + 3] = 0;
      continue;
    }
    stringTs[t] = assigned[f];
    stringTs[t + 1] = assigned[f + 1];
    stringTs[t + 2] = assigned[f + 2];
    stringTs[t + 3] = assigned[f + 3];
  }
  duckdb.copy_data_to_vector(vector, 0, stringTs.buffer, 0, n * 16);
  if (nulls > 0) {
    duckdb.vector_ensure_validity_writable(vector);
    duckdb.copy_data_to_vector_validity(vector, 0, validity.buffer, 0, words64 * 4);
  }
}

/** The rows as data chunks laid out like the table; a column with no getter is all NULL. */
export function rowChunks<R>(layout: TableLayout, getters: ColumnGetters<R>, rows: readonly R[]): DuckDBDataChunk[] {
  const chunks: DuckDBDataChunk[] = [];
  const nulls = new Uint8Array(CHUNK_ROWS);
  const convert = layout.types.map(converter);
  const fixed = layout.types.map(fixedWidth);
  const varchar = layout.types.map((t) => LITTLE_ENDIAN && t.typeId === DuckDBTypeId.VARCHAR);
  for (let off = 0; off < rows.length; off += CHUNK_ROWS) {
    const n = Math.min(CHUNK_ROWS, rows.length - off);
    const chunk = DuckDBDataChunk.create(layout.types, n);
    for (let col = 0; col < layout.names.length; col++) {
      const get = getters[layout.names[col]];
      if (get && fixed[col] > 0) {
        fillFixed(chunk, col, layout.types[col], get, rows, off, n);
        continue;
      }
      if (get && varchar[col]) {
        fillVarchar(chunk, col, get, rows, off, n);
        continue;
      }
      const v = chunk.getColumnVector(col) as unknown as Vector;
      nulls.fill(0, 0, n);
      let first = -1;
      if (get) {
        const conv = convert[col];
        for (let i = 0; i < n; i++) {
          const x = get(rows[off + i]);
          if (x === null) {
            nulls[i] = 1;
            if (first < 0) first = i;
          } else v.setItem(i, conv(x));
        }
      } else {
        nulls.fill(1, 0, n);
        first = 0;
      }
      if (first >= 0) setNulls(v, n, nulls, first);
      v.flush();
    }
    chunks.push(chunk);
  }
  return chunks;
}

/** Appends chunks to a table on the connection (inside the caller's transaction). */
export async function appendChunks(c: DuckDBConnection, table: string, chunks: readonly DuckDBDataChunk[]): Promise<void> {
  if (chunks.length === 0) return;
  const appender = await c.createAppender(table);
  try {
    for (const chunk of chunks) appender.appendDataChunk(chunk);
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}
