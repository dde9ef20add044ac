/**
 * Telemetry: every DuckDB table of the embedded store copied into the ClickHouse tables (created by
 * openChTelemetryDb), converted to the ClickHouse shapes, then the trace and run summaries rebuilt on ClickHouse
 * from the copied spans (refreshChSummaries), never copied: ClickHouse keeps them as versioned rows of its own,
 * and has no session table (sessions are read from the run summaries).
 *
 * Batches: one streamed DuckDB query per table in the table's natural key order (`ORDER BY key`, resumed with
 * `WHERE key > last`), cut into batches of whole key groups (all copies of a span, all samples of a series at
 * one time, ...), so that "everything with a key above K" is exactly the batches after the one ending at K.
 *
 * A batch is recorded (svc_move_progress.last_key) only after its insert returned. A crash between the two
 * leaves rows on ClickHouse that no record covers; so before a table's copy starts or resumes, and before an
 * insert that failed is retried, the rows with a key above the last recorded key are deleted (a lightweight
 * DELETE of one key range, run only when a count finds such rows). Why not `insert_deduplication_token`: on a
 * plain MergeTree it needs `non_replicated_deduplication_window` set on the tables (a schema change that would
 * also deduplicate the service's own identical inserts afterwards), a re-sent batch must then be cut exactly as
 * before, and an insert that failed half way (parts of some partitions stored) is not covered; the delete works
 * the same on a single server and on a cluster (the local tables ON CLUSTER), costs nothing unless a move was
 * interrupted, and leaves the schema as the service made it.
 *
 * The summaries need no such care: a re-sent batch writes the same versioned rows again (the version is the
 * number of stored copies of the trace), which a read with FINAL sees once.
 */
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { DuckDBConnection } from '@duckdb/node-api';
import type pg from 'pg';
import type { ClickHouseSettings } from '../config.js';
import type { ChTelemetryDb } from '../storage/telemetry/clickhouse/db.js';
import { TABLES } from '../storage/telemetry/clickhouse/schema.js';
import { refreshChSummaries } from '../storage/telemetry/clickhouse/summaries.js';
import type { TelemetryDb } from '../storage/telemetry/duckdb/open.js';
import { recordBatch, type KeyValue, type ProgressRow } from './progress.js';
import type { CountRow, MoveHook } from './types.js';

type KeyType = 'String' | 'UInt64' | 'Int64' | 'Int32';

export interface TelemetryTableSpec {
  name: string;
  /** The natural key, in order: the copy order and the batch boundaries. Every column is NOT NULL on DuckDB. */
  key: [string, KeyType][];
  /** ClickHouse columns DuckDB does not have, with the value every copied row gets. */
  fill?: Record<string, unknown>;
  note?: string;
}

const S = (c: string): [string, KeyType] => [c, 'String'];

/** The copied tables, in copy order. */
export const TELEMETRY_TABLES: TelemetryTableSpec[] = [
  { name: 'metric_series', key: [S('project_id'), ['series_id', 'UInt64']] },
  { name: 'metric_points', key: [S('project_id'), S('name'), ['series_id', 'UInt64'], ['ts', 'Int64']] },
  { name: 'metric_histograms', key: [S('project_id'), S('name'), ['series_id', 'UInt64'], ['ts', 'Int64']] },
  // version 1: older than any row the service writes after the move (it versions by ingest time in µs), so a
  // unit or description sent later wins, as it would have on DuckDB.
  { name: 'metric_metadata', key: [S('project_id'), S('name')], fill: { version: '1' } },
  { name: 'metric_tombstones', key: [S('project_id'), S('name')], note: 'aggregate rows: one per (project, name), as on DuckDB' },
  { name: 'spans', key: [S('project_id'), S('trace_id'), S('span_id')] },
  { name: 'span_events', key: [S('project_id'), S('trace_id'), S('span_id'), ['event_index', 'Int32']] },
  { name: 'agent_sightings', key: [S('project_id'), S('observation_key'), S('source'), S('api_key_id')], note: 'aggregate rows (min/max/sum): one per key, as on DuckDB' },
  { name: 'agent_sighting_environments', key: [S('project_id'), S('observation_key'), S('environment')], note: 'aggregate rows (min/max): one per key' },
  { name: 'logs', key: [S('project_id'), ['ts_us', 'Int64'], S('log_id')] },
  { name: 'trace_tombstones', key: [S('project_id'), S('trace_id')], note: 'aggregate rows (min): one per trace' },
];

/** DuckDB tables whose content ClickHouse derives from the copied spans instead. */
const REBUILT = ['trace_summaries', 'run_summaries', 'session_summaries'];
/** DuckDB bookkeeping of its own one-time upgrades: nothing to move. */
const NOT_MOVED = ['telemetry_upgrades'];

const SUMMARIES_ITEM = 'telemetry:summaries';

export interface TelemetryPlanTable extends TelemetryTableSpec {
  /** Columns read from DuckDB and sent under the same name. */
  columns: string[];
  /** ClickHouse Array columns: NULL on DuckDB is [] there. */
  arrays: Set<string>;
}

/** The copy plan: checks that every DuckDB table and column has a place on ClickHouse. */
export async function planTelemetry(duck: TelemetryDb, log: (line: string) => void): Promise<TelemetryPlanTable[]> {
  const cols = await duck.read((c) => rowsOf(c, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main' ORDER BY table_name, ordinal_position`));
  const duckCols = new Map<string, string[]>();
  for (const r of cols) {
    const t = String(r.table_name);
    if (!duckCols.has(t)) duckCols.set(t, []);
    duckCols.get(t)!.push(String(r.column_name));
  }
  const known = new Set([...TELEMETRY_TABLES.map((t) => t.name), ...REBUILT, ...NOT_MOVED]);
  const unknown = [...duckCols.keys()].filter((t) => !known.has(t));
  if (unknown.length) throw new Error(`the embedded telemetry store has table(s) this move does not know: ${unknown.join(', ')}; move with the version of the service that wrote it`);
  return TELEMETRY_TABLES.map((spec) => {
    const ch = TABLES.find((t) => t.name === spec.name);
    if (!ch) throw new Error(`ClickHouse has no table ${spec.name}`);
    const chCols = ch.columns.map((c) => {
      const [name, ...type] = c.trim().split(/\s+/);
      return { name, type: type.join(' ') };
    });
    const have = duckCols.get(spec.name) ?? [];
    const lost = have.filter((c) => !chCols.some((x) => x.name === c));
    if (lost.length) throw new Error(`the ClickHouse table ${spec.name} has no column(s) ${lost.join(', ')} of the embedded store: the move would lose them`);
    const columns = chCols.filter((c) => have.includes(c.name)).map((c) => c.name);
    const defaulted = chCols.filter((c) => !have.includes(c.name) && !(spec.fill && c.name in spec.fill)).map((c) => c.name);
    if (defaulted.length) log(`telemetry: ${spec.name}: ClickHouse column(s) ${defaulted.join(', ')} are not on DuckDB: they take their defaults`);
    for (const [k] of spec.key) if (!columns.includes(k)) throw new Error(`telemetry: ${spec.name}: key column ${k} is missing`);
    return { ...spec, columns, arrays: new Set(chCols.filter((c) => c.type.startsWith('Array(')).map((c) => c.name)) };
  });
}

async function rowsOf(c: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  const r = await c.runAndReadAll(sql);
  return r.getRowObjectsJson() as Record<string, unknown>[];
}

const qd = (id: string) => `"${id.replace(/"/g, '""')}"`;
const qc = (id: string) => `\`${id.replace(/`/g, '\\`')}\``;

/** A key value as DuckDB SQL text (the values come from the progress table: quoted and checked here). */
function duckLiteral(v: KeyValue, type: KeyType): string {
  if (type === 'String') return `'${String(v).replace(/'/g, "''")}'`;
  const s = String(v);
  if (!/^-?\d+$/.test(s)) throw new Error(`not an integer key value: ${s}`);
  return `CAST('${s}' AS ${type === 'UInt64' ? 'UBIGINT' : type === 'Int64' ? 'BIGINT' : 'INTEGER'})`;
}

/** `(k1, ..., kn) > (v1, ..., vn)` spelt out, so both engines use their ordering key for it. */
function keyAbove(cols: string[], values: string[]): string {
  const n = cols.length;
  let e = `${cols[n - 1]} > ${values[n - 1]}`;
  for (let i = n - 2; i >= 0; i--) e = `${cols[i]} > ${values[i]} OR (${cols[i]} = ${values[i]} AND (${e}))`;
  return `(${e})`;
}

function duckAbove(spec: TelemetryTableSpec, last: KeyValue[]): string {
  return keyAbove(
    spec.key.map(([c]) => qd(c)),
    spec.key.map(([, t], i) => duckLiteral(last[i], t)),
  );
}

/** The condition and parameters of "key above `last`" on ClickHouse (every row when `last` is null). */
function chAbove(spec: TelemetryTableSpec, last: KeyValue[] | null): { where: string; params: Record<string, unknown> } {
  if (!last) return { where: '1 = 1', params: {} };
  const params: Record<string, unknown> = {};
  const values = spec.key.map(([, t], i) => {
    params[`k${i}`] = String(last[i]);
    return `{k${i}:${t}}`;
  });
  return { where: keyAbove(spec.key.map(([c]) => qc(c)), values), params };
}

/** A rough size of a row in a JSON insert, to keep requests far below the HTTP and memory limits. */
function approxBytes(r: Record<string, unknown>): number {
  let n = 0;
  for (const k in r) {
    const v = r[k];
    n += typeof v === 'string' ? v.length + 8 : Array.isArray(v) ? 16 * v.length + 8 : 16;
  }
  return n;
}

export interface ChTarget {
  db: ChTelemetryDb;
  /** The move's own client for inserts and counts (settings below). */
  client: ClickHouseClient;
}

/**
 * A client for the move's inserts: the service's settings (synchronous inserts, 64-bit integers as strings,
 * UTC, deletes that return once applied), no limit on the partitions one batch touches (a batch in key order
 * may span many months), and on a cluster, inserts into the Distributed tables that return only once every
 * shard stored its rows (so "the insert returned" means stored, as the progress record needs).
 */
export function moveClient(settings: ClickHouseSettings): ClickHouseClient {
  return createClient({
    url: settings.url,
    username: settings.user,
    password: settings.password,
    database: settings.database,
    request_timeout: 300_000,
    application: 'svc-move',
    clickhouse_settings: {
      async_insert: 0,
      output_format_json_quote_64bit_integers: 1,
      session_timezone: 'UTC',
      lightweight_deletes_sync: '2',
      mutations_sync: '2',
      max_partitions_per_insert_block: '0',
      // A long DELETE or insert keeps the connection busy: progress headers keep idle-timeout proxies from cutting it.
      send_progress_in_http_headers: 1,
      http_headers_progress_interval_ms: '10000',
      ...(settings.cluster ? { distributed_foreground_insert: 1 } : {}),
    },
  });
}

async function chQuery<T = Record<string, unknown>>(ch: ClickHouseClient, sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await ch.query({ query: sql, format: 'JSONEachRow', query_params: params });
  return (await rs.json()) as T[];
}

/** Deletes the rows above the last recorded key (an unrecorded batch of an interrupted run); returns how many there were. */
async function dropUnrecorded(target: ChTarget, spec: TelemetryTableSpec, last: KeyValue[] | null): Promise<number> {
  const { where, params } = chAbove(spec, last);
  const [{ n }] = await chQuery<{ n: string }>(target.client, `SELECT count() AS n FROM ${qc(spec.name)} WHERE ${where}`, params);
  if (Number(n) === 0) return 0;
  await target.client.command({ query: `DELETE FROM ${target.db.deleteTarget(spec.name)} WHERE ${where}`, query_params: params });
  return Number(n);
}

export interface CopyTelemetryOptions {
  duck: TelemetryDb;
  target: ChTarget;
  pool: pg.Pool;
  progress: Map<string, ProgressRow>;
  batchRows: number;
  batchBytes: number;
  hook?: MoveHook;
  log(line: string): void;
}

const INSERT_ATTEMPTS = 3;

export async function copyTelemetryTable(spec: TelemetryPlanTable, opts: CopyTelemetryOptions): Promise<void> {
  const item = `telemetry:${spec.name}`;
  const p = opts.progress.get(item);
  if (p?.done) return;
  let last: KeyValue[] | null = p?.lastKey ?? null;
  let copied = p?.rows ?? 0;
  const removed = await dropUnrecorded(opts.target, spec, last);
  if (removed) opts.log(`telemetry: ${spec.name}: removed ${removed} rows of a batch the interrupted run had not recorded`);
  if (last) opts.log(`telemetry: ${spec.name}: resuming after ${copied} rows`);
  const keyCols = spec.key.map(([c]) => c);
  const groupOf = (r: Record<string, unknown>) => JSON.stringify(keyCols.map((c) => r[c]));
  const sql = `SELECT ${spec.columns.map(qd).join(', ')} FROM ${qd(spec.name)}${last ? ` WHERE ${duckAbove(spec, last)}` : ''} ORDER BY ${keyCols.map(qd).join(', ')}`;
  let batch = 0;

  const flush = async (rows: Record<string, unknown>[]) => {
    for (const r of rows) {
      for (const c of spec.arrays) if (r[c] === null) r[c] = [];
      if (spec.fill) Object.assign(r, spec.fill);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await opts.target.client.insert({ table: spec.name, values: rows, format: 'JSONEachRow' });
        break;
      } catch (e) {
        if (attempt >= INSERT_ATTEMPTS) throw e;
        opts.log(`telemetry: ${spec.name}: insert failed (${(e as Error).message}); retrying`);
        await new Promise((r) => setTimeout(r, 1000 * attempt));
        // Whatever part of the failed insert was stored goes first.
        await dropUnrecorded(opts.target, spec, last);
      }
    }
    batch++;
    await opts.hook?.({ phase: 'telemetry', table: spec.name, batch, rows: rows.length });
    const lastRow = rows[rows.length - 1];
    const key = keyCols.map((c) => lastRow[c] as KeyValue);
    await recordBatch(opts.pool, item, key, rows.length, false);
    last = key;
    copied += rows.length;
  };

  await opts.duck.read(async (c) => {
    const result = await c.stream(sql);
    let pending: Record<string, unknown>[] = [];
    /** Sends batches of whole key groups from `pending`; before the end of the stream, keeps back the last group (it may go on in the next chunk). */
    const drain = async (final: boolean) => {
      while (pending.length) {
        let end = 0;
        let bytes = 0;
        while (end < pending.length && end < opts.batchRows && bytes < opts.batchBytes) bytes += approxBytes(pending[end++]);
        const group = groupOf(pending[end - 1]);
        while (end < pending.length && groupOf(pending[end]) === group) end++;
        if (end === pending.length && !final) return;
        const out = pending.slice(0, end);
        pending = pending.slice(end);
        await flush(out);
      }
    };
    for await (const chunk of result.yieldRowObjectJson()) {
      for (const r of chunk as Record<string, unknown>[]) pending.push(r);
      await drain(false);
    }
    await drain(true);
  });
  await recordBatch(opts.pool, item, null, 0, true);
  opts.log(`telemetry: ${spec.name}: ${copied} rows`);
}

/** Rebuilds the trace and run summaries on ClickHouse from the copied spans, `batchTraces` traces at a time. */
export async function rebuildSummaries(opts: CopyTelemetryOptions & { batchTraces: number }): Promise<void> {
  const p = opts.progress.get(SUMMARIES_ITEM);
  if (p?.done) return;
  const spec: TelemetryTableSpec = { name: 'spans', key: [S('project_id'), S('trace_id')] };
  let last: KeyValue[] | null = p?.lastKey ?? null;
  let done = p?.rows ?? 0;
  if (last) opts.log(`telemetry: summaries: resuming after ${done} traces`);
  const sql = `SELECT DISTINCT project_id, trace_id FROM spans${last ? ` WHERE ${duckAbove(spec, last)}` : ''} ORDER BY project_id, trace_id`;
  let batch = 0;
  const flush = async (traces: Record<string, unknown>[]) => {
    const touched = new Map<string, Set<string>>();
    for (const t of traces) {
      const pid = String(t.project_id);
      if (!touched.has(pid)) touched.set(pid, new Set());
      touched.get(pid)!.add(String(t.trace_id));
    }
    await refreshChSummaries(opts.target.db, touched);
    batch++;
    await opts.hook?.({ phase: 'summaries', table: 'trace_summaries+run_summaries', batch, rows: traces.length });
    const l = traces[traces.length - 1];
    last = [String(l.project_id), String(l.trace_id)];
    await recordBatch(opts.pool, SUMMARIES_ITEM, last, traces.length, false);
    done += traces.length;
  };
  await opts.duck.read(async (c) => {
    const result = await c.stream(sql);
    let pending: Record<string, unknown>[] = [];
    for await (const chunk of result.yieldRowObjectJson()) {
      pending.push(...(chunk as Record<string, unknown>[]));
      while (pending.length >= opts.batchTraces) {
        await flush(pending.slice(0, opts.batchTraces));
        pending = pending.slice(opts.batchTraces);
      }
    }
    if (pending.length) await flush(pending);
  });
  await recordBatch(opts.pool, SUMMARIES_ITEM, null, 0, true);
  opts.log(`telemetry: summaries of ${done} traces rebuilt`);
}

/** Rows in any ClickHouse table of the schema (a fresh move refuses a database that already holds telemetry). */
export async function chRowsPresent(client: ClickHouseClient): Promise<string[]> {
  const out: string[] = [];
  for (const t of TABLES) {
    const [{ n }] = await chQuery<{ n: string }>(client, `SELECT count() AS n FROM ${qc(t.name)}`);
    if (Number(n) > 0) out.push(`${t.name} (${n} rows)`);
  }
  return out;
}

/** Per table: rows on DuckDB and on ClickHouse. */
export async function telemetryCounts(duck: TelemetryDb, client: ClickHouseClient, plan: TelemetryPlanTable[]): Promise<CountRow[]> {
  const duckCount = (t: string) => duck.read(async (c) => Number((await rowsOf(c, `SELECT count(*) AS n FROM ${qd(t)}`))[0].n));
  const chCount = async (sql: string) => Number((await chQuery<{ n: string }>(client, sql))[0].n);
  const out: CountRow[] = [];
  for (const t of plan) {
    const source = await duckCount(t.name);
    const destination = await chCount(`SELECT count() AS n FROM ${qc(t.name)}`);
    out.push({ store: 'telemetry', table: t.name, source, destination, ok: source === destination, ...(t.note ? { note: t.note } : {}) });
  }
  for (const t of ['trace_summaries', 'run_summaries']) {
    const source = await duckCount(t);
    const destination = await chCount(`SELECT count() AS n FROM ${qc(t)}`);
    const visible = await chCount(`SELECT count() AS n FROM ${qc(t)} FINAL WHERE is_deleted = 0`);
    out.push({
      store: 'telemetry',
      table: t,
      source,
      destination,
      visible,
      ok: source === visible,
      note: `rebuilt from the copied spans; versioned rows read with FINAL (${visible} visible)${destination !== visible ? ', older versions merge away' : ''}`,
    });
  }
  const sessions = await duckCount('session_summaries');
  const chSessions = await chCount(`SELECT count() AS n FROM (SELECT DISTINCT project_id, session_key FROM run_summaries FINAL WHERE is_deleted = 0 AND session_key IS NOT NULL)`);
  out.push({
    store: 'telemetry',
    table: 'session_summaries',
    source: sessions,
    destination: null,
    visible: chSessions,
    ok: sessions === chSessions,
    note: `no table on ClickHouse: sessions are read from the run summaries (${chSessions} sessions there)`,
  });
  out.push({ store: 'telemetry', table: 'telemetry_upgrades', source: await duckCount('telemetry_upgrades'), destination: null, ok: true, note: "DuckDB's own upgrade bookkeeping: not moved" });
  return out;
}
