/**
 * Moves an embedded install (a stopped server's data dir: control data in SQLite, telemetry in DuckDB) into
 * PostgreSQL + ClickHouse (docs/scale-out.md "Moving an embedded install"). `npm run move` (main.ts) runs it.
 *
 * 1. Takes the data dir's lock (cluster/data-dir-lock.ts): a running server holds it, and the move refuses.
 * 2. Opens the source stores as the server would (bringing them to this version's schema), the destination
 *    PostgreSQL schema through the normal migrations, the ClickHouse tables through openChTelemetryDb.
 * 3. Refuses a destination that already holds an organization or telemetry, unless it is this same move being
 *    resumed (svc_move_progress names the source's organizations).
 * 4. Copies control data (control.ts), then telemetry (telemetry.ts), then rebuilds the summaries on ClickHouse;
 *    every step records its progress in PostgreSQL, so running the same command again after an interruption
 *    continues where it stopped.
 * 5. Counts both sides per table and says how API keys keep verifying (the key-hash secret).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { ClickHouseSettings } from '../config.js';
import { DataDirInUseError, lockDataDir, type DataDirLock } from '../cluster/data-dir-lock.js';
import { KEY_HASH_SECRET_BYTES, KEY_HASH_SECRET_FILE } from '../lib/keyed-hash.js';
import { openControlStore } from '../storage/control/open.js';
import { openPostgresPool } from '../storage/control/postgres/connect.js';
import { openChTelemetryDb } from '../storage/telemetry/clickhouse/db.js';
import { openTelemetryDb } from '../storage/telemetry/duckdb/open.js';
import { advanceSequences, copyControlTable, countPg, countSqlite, planControl, sqliteTables } from './control.js';
import { ensureProgressTable, readProgress, recordDetail } from './progress.js';
import { chRowsPresent, copyTelemetryTable, moveClient, planTelemetry, rebuildSummaries, telemetryCounts } from './telemetry.js';
import type { CountRow, MoveHook } from './types.js';

export type { CountRow, MoveHook } from './types.js';

export interface MoveOptions {
  /** The embedded install's data dir (control.sqlite, telemetry.duckdb, key-hash.secret). */
  dataDir: string;
  /** PostgreSQL: the schema is the URL's search_path (options=-c search_path=...) or the user's default. */
  databaseUrl: string;
  /** A PostgreSQL schema to use (created when missing) instead of the URL's search_path. */
  pgSchema?: string;
  clickhouse: ClickHouseSettings;
  /** Control rows per batch (default 1,000; fewer for wide tables: PostgreSQL takes 65,535 parameters). */
  controlBatchRows?: number;
  /** Telemetry rows per ClickHouse insert (default 20,000), and bytes (default 32 MiB), whichever comes first. */
  telemetryBatchRows?: number;
  telemetryBatchBytes?: number;
  /**
   * Traces per summary rebuild (default 200). refreshChSummaries sends a batch's trace ids as one URL parameter
   * (~35 bytes each): 200 keep the request line near 7 KB, under the 8-16 KB URL limits of common proxies and of
   * tools/clickhouse-local (a ClickHouse server itself takes 1 MB).
   */
  summaryBatchTraces?: number;
  hook?: MoveHook;
  log?: (line: string) => void;
}

export interface KeyHashAdvice {
  /** The file the embedded install keyed its API-key hashes with, when it has one. */
  file?: string;
  /** Its content as SVC_KEY_HASH_SECRET takes it (base64); undefined without a file. */
  secretBase64?: string;
  /** What to do, in words (printed by main.ts). */
  text: string;
}

export interface MoveResult {
  /** Whether this run continued an earlier, interrupted one. */
  resumed: boolean;
  /** Whether an earlier run had already finished (this one only counted). */
  alreadyComplete: boolean;
  counts: CountRow[];
  /** Whether every copied table has as many rows on both sides (and the rebuilt summaries as many visible rows). */
  ok: boolean;
  keyHash: KeyHashAdvice;
  seconds: number;
}

export class MoveRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MoveRefusedError';
  }
}

const MOVE_ITEM = 'move';

function keyHashAdvice(dataDir: string): KeyHashAdvice {
  const file = path.join(dataDir, KEY_HASH_SECRET_FILE);
  if (!fs.existsSync(file)) {
    return {
      text:
        `The data dir has no ${KEY_HASH_SECRET_FILE}: the embedded install ran with SVC_KEY_HASH_SECRET set. Set that same ` +
        'SVC_KEY_HASH_SECRET on every node that serves the moved stores, or no API key will authenticate.',
    };
  }
  const secret = fs.readFileSync(file);
  if (secret.length < KEY_HASH_SECRET_BYTES) throw new Error(`${file} holds ${secret.length} bytes, fewer than the ${KEY_HASH_SECRET_BYTES} of a key-hash secret`);
  const b64 = secret.toString('base64');
  return {
    file,
    secretBase64: b64,
    text: [
      `API keys are stored as hashes keyed with the embedded install's secret (${file}). Every node serving the`,
      'moved stores needs the same secret, or no API key will authenticate. Set on every node:',
      '',
      `  SVC_KEY_HASH_SECRET=${b64}`,
      '',
      `(or copy ${KEY_HASH_SECRET_FILE} into each node's SVC_DATA_DIR, mode 0600: a node reads it there when`,
      'SVC_KEY_HASH_SECRET is unset, and creates a NEW random one if it is missing). If the embedded install ran with',
      'SVC_KEY_HASH_SECRET set, that value took precedence over the file: keep using it instead. This is a secret:',
      'keep it out of logs and shell history.',
    ].join('\n'),
  };
}

/** Moves the install; resolves with the counts. Throws MoveRefusedError when the source or destination is not fit. */
export async function moveInstall(opts: MoveOptions): Promise<MoveResult> {
  const started = Date.now();
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const dataDir = path.resolve(opts.dataDir);
  const sqlitePath = path.join(dataDir, 'control.sqlite');
  const duckPath = path.join(dataDir, 'telemetry.duckdb');
  if (!fs.existsSync(dataDir)) throw new MoveRefusedError(`no data dir at ${dataDir}`);
  for (const f of [sqlitePath, duckPath])
    if (!fs.existsSync(f)) throw new MoveRefusedError(`${dataDir} is not an embedded install: ${path.basename(f)} is missing (the move copies a data dir holding control.sqlite and telemetry.duckdb)`);
  const keyHash = keyHashAdvice(dataDir);

  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir, { controlInPostgres: false });
  } catch (e) {
    if (e instanceof DataDirInUseError)
      throw new MoveRefusedError(`${e.message}\nStop the server first: the move copies a stopped install (nothing may write to the data dir while it runs).`);
    throw e;
  }

  const closers: (() => Promise<void> | void)[] = [() => lock.release()];
  try {
    // The source, brought to this version's schema as the server would at start.
    log(`source: ${dataDir}`);
    const migrated = await openControlStore({ sqlitePath });
    await migrated.db.destroy();
    const sqlite = new Database(sqlitePath, { fileMustExist: true });
    closers.push(() => void sqlite.close());
    const duck = await openTelemetryDb({ dataDir, readers: 2, log });
    closers.push(() => duck.close());

    // The destination: PostgreSQL through the normal migrations, ClickHouse tables created.
    log(`destination: PostgreSQL ${redact(opts.databaseUrl)}${opts.pgSchema ? ` (schema ${opts.pgSchema})` : ''}, ClickHouse ${opts.clickhouse.url} database ${opts.clickhouse.database}${opts.clickhouse.cluster ? ` cluster ${opts.clickhouse.cluster}` : ''}`);
    const control = await openControlStore({ databaseUrl: opts.databaseUrl, pgSchema: opts.pgSchema });
    await control.db.destroy();
    const pool = await openPostgresPool(opts.databaseUrl, opts.pgSchema);
    closers.push(() => pool.end());
    const chDb = await openChTelemetryDb(opts.clickhouse);
    closers.push(() => chDb.close());
    const client = moveClient(opts.clickhouse);
    closers.push(() => client.close());

    // This move, or a fresh destination.
    const sourceOrgs = (sqlite.prepare('SELECT id FROM organizations ORDER BY id').all() as { id: string }[]).map((r) => r.id);
    const identity = JSON.stringify({ organizations: sourceOrgs });
    await ensureProgressTable(pool);
    let progress = await readProgress(pool);
    const mine = progress.get(MOVE_ITEM);
    let resumed = false;
    const alreadyComplete = progress.has('finished');
    if (mine) {
      const theirs = mine.detail ? (JSON.parse(mine.detail) as { organizations?: string[] }) : {};
      if (JSON.stringify({ organizations: theirs.organizations ?? [] }) !== identity)
        throw new MoveRefusedError(
          `the destination PostgreSQL schema holds another move (of organization(s) ${(theirs.organizations ?? []).join(', ') || 'none'}; this data dir has ${sourceOrgs.join(', ') || 'none'}): move into an empty database or schema`,
        );
      resumed = [...progress.values()].some((p) => p.item !== MOVE_ITEM && (p.rows > 0 || p.done));
      if (alreadyComplete) log('the move recorded in svc_move_progress is complete: counting both sides');
      else if (resumed) log('resuming the move recorded in svc_move_progress');
    } else {
      const orgs = await countPg(pool, 'organizations');
      if (orgs > 0)
        throw new MoveRefusedError(
          `the destination PostgreSQL schema already holds ${orgs} organization(s): the move copies into an empty one (a server started on it creates one: do not start it before the move)`,
        );
      const present = await chRowsPresent(client);
      if (present.length)
        throw new MoveRefusedError(`the ClickHouse database ${opts.clickhouse.database} already holds telemetry (${present.join(', ')}): move into an empty database`);
      await recordDetail(pool, MOVE_ITEM, JSON.stringify({ organizations: sourceOrgs, dataDir, startedAt: new Date().toISOString() }));
      progress = await readProgress(pool);
    }

    // Control data.
    const tables = await planControl(pool, sqliteTables(sqlite));
    for (const t of tables)
      await copyControlTable(t, { sqlite, pool, progress, batchRows: opts.controlBatchRows ?? 1000, hook: opts.hook, log });
    const sequences = await advanceSequences(pool);
    if (sequences.length) log(`control: sequences set past the copied values: ${sequences.join(', ')}`);

    // Telemetry.
    const plan = await planTelemetry(duck, log);
    const topts = {
      duck,
      target: { db: chDb, client },
      pool,
      progress,
      batchRows: opts.telemetryBatchRows ?? 20_000,
      batchBytes: opts.telemetryBatchBytes ?? 32 * 1024 * 1024,
      hook: opts.hook,
      log,
    };
    for (const t of plan) await copyTelemetryTable(t, topts);
    await rebuildSummaries({ ...topts, batchTraces: opts.summaryBatchTraces ?? 200 });

    // Both sides.
    const counts: CountRow[] = [];
    for (const t of [...tables].sort((a, b) => a.name.localeCompare(b.name))) {
      const source = countSqlite(sqlite, t.name);
      const destination = await countPg(pool, t.name);
      counts.push({ store: 'control', table: t.name, source, destination, ok: source === destination });
    }
    counts.push(...(await telemetryCounts(duck, client, plan)));
    await recordDetail(pool, 'finished', new Date().toISOString());
    return { resumed: resumed && !alreadyComplete, alreadyComplete, counts, ok: counts.every((c) => c.ok), keyHash, seconds: (Date.now() - started) / 1000 };
  } finally {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
  }
}

/** The URL without its password (printed). */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** The table main.ts prints: per table, rows in the source and in the destination. */
export function formatCounts(counts: CountRow[]): string {
  const head = ['store', 'table', 'source rows', 'destination rows', 'note'];
  const rows = counts.map((c) => [
    c.store,
    c.table,
    c.source === null ? '-' : String(c.source),
    c.destination === null ? (c.visible !== undefined ? `(${c.visible})` : '-') : String(c.destination),
    `${c.ok ? '' : 'DIFFERS '}${c.note ?? ''}`.trim(),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => (i === 2 || i === 3 ? v.padStart(widths[i]) : i === r.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
