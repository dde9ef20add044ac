/**
 * `npm run bench -- --engine duckdb|clickhouse`: which telemetry engine the benchmarks run on, and what differs.
 *
 * - `duckdb` (default): the embedded store in the run's temp data dir (SQLite for control data in-process).
 * - `clickhouse`: the ClickHouse engine. Unless SVC_CLICKHOUSE_URL is set (a real server; SVC_CLICKHOUSE_USER,
 *   _PASSWORD and _CLUSTER are passed on), the bench starts `tools/clickhouse-local` (ClickHouse over chdb,
 *   installing it first when missing, as `npm run clickhouse:local` does) on a free port with a temp `--path`
 *   and stops it at the end. Each benchmark run gets a database of its own, dropped at the end. The in-process
 *   run keeps its control data in SQLite (as with DuckDB); the server-process run (`--load`) runs as a
 *   scaled-out node does, control data in a throwaway PostgreSQL schema (server-process.ts scaleOutEnv).
 *
 * What the benchmarks did in DuckDB SQL has an engine-neutral form here: the bulk metric seed (`INSERT ...
 * SELECT ... FROM numbers(N)` on ClickHouse), row counts (from the engine used) and what follows a bulk load
 * (DuckDB: CHECKPOINT; ClickHouse: nothing to do, the active parts are reported).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clickhouseSettings, type ClickHouseSettings } from '../server/src/config.js';
import { chClient } from '../server/src/storage/telemetry/clickhouse/client.js';
import { ClickHouseTelemetry } from '../server/src/storage/telemetry/clickhouse/engine.js';
import { DuckDbTelemetry } from '../server/src/storage/telemetry/duckdb/engine.js';
import type { TelemetryEngine } from '../server/src/storage/telemetry/engine.js';
import { REPO_ROOT } from '../server/src/testing/server-process.js';

export type EngineName = 'duckdb' | 'clickhouse';

export class UsageError extends Error {}

/** `--engine duckdb|clickhouse` or `--engine=...` (default duckdb); anything else is a usage error. */
export function engineArg(argv: string[]): EngineName {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--engine') {
      value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError('--engine needs a value: duckdb or clickhouse');
    } else if (argv[i].startsWith('--engine=')) value = argv[i].slice('--engine='.length);
  }
  if (value === undefined) return 'duckdb';
  if (value !== 'duckdb' && value !== 'clickhouse') throw new UsageError(`--engine must be duckdb or clickhouse, got "${value}"`);
  return value;
}

/** The 1-, 5- and 15-minute load averages and the cores, for the lines printed at the start and end of a run. */
export const loadLine = () => `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (1/5/15 min, ${os.cpus().length} cores)`;

/** A ClickHouse HTTP endpoint the bench uses: its own clickhouse-local, or the server SVC_CLICKHOUSE_URL names. */
export interface ChEndpoint {
  /** As SVC_CLICKHOUSE_URL takes it. */
  url: string;
  /** The SVC_CLICKHOUSE_* companions to pass on (user, password, cluster of a real server). */
  env: Record<string, string>;
  /** For the table headers. */
  label: string;
  /** The clickhouse-local process (its CPU and RSS are reported next to the server's); undefined for a real server. */
  pid?: number;
  stop(): Promise<void>;
}

const CH_LOCAL = 'tools/clickhouse-local';

/** Starts tools/clickhouse-local on a free port and a temp --path (installed first when missing). */
async function startClickHouseLocal(): Promise<ChEndpoint> {
  if (!fs.existsSync(path.join(REPO_ROOT, CH_LOCAL, 'node_modules/chdb'))) {
    console.log(`bench: installing ${CH_LOCAL} (chdb, ~540 MB; once)`);
    execFileSync('npm', ['install', '--prefix', CH_LOCAL, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ch-'));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', `${CH_LOCAL}/main.ts`, '--port', '0', '--path', dataDir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = await new Promise<{ url: string; version: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`clickhouse-local did not start in 60 s: ${out}${err}`)), 60_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+) .*ClickHouse ([\d.]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], version: m[2] });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`clickhouse-local exited with ${code}: ${out}${err}`));
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    url: started.url,
    env: {},
    label: `ClickHouse ${started.version} (tools/clickhouse-local over chdb: one query at a time)`,
    pid: child.pid,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }
        fs.rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/** The endpoint of a `--engine clickhouse` run: SVC_CLICKHOUSE_URL when set, else a clickhouse-local of the bench's own. */
export async function clickHouseEndpoint(): Promise<ChEndpoint> {
  const url = process.env.SVC_CLICKHOUSE_URL;
  if (!url) return startClickHouseLocal();
  const env = Object.fromEntries(
    ['SVC_CLICKHOUSE_USER', 'SVC_CLICKHOUSE_PASSWORD', 'SVC_CLICKHOUSE_CLUSTER'].filter((k) => process.env[k]).map((k) => [k, process.env[k]!]),
  );
  const s = settingsOf({ url, env }, 'default');
  const client = chClient(s);
  let version = '?';
  try {
    version = String((await client.query<{ v: string }>('SELECT version() AS v'))[0]?.v);
  } finally {
    await client.close();
  }
  return { url, env, label: `ClickHouse ${version} at ${s.url}${s.cluster ? `, cluster ${s.cluster}` : ''}`, stop: async () => undefined };
}

/** The settings the service would parse from this endpoint, on `database`. */
function settingsOf(e: Pick<ChEndpoint, 'url' | 'env'>, database: string): ClickHouseSettings {
  return clickhouseSettings({ ...e.env, SVC_CLICKHOUSE_URL: e.url, SVC_CLICKHOUSE_DATABASE: database })!;
}

/** A fresh database name for one benchmark run. */
export const benchDatabase = (what: string) => `svc_bench_${what}_${randomBytes(4).toString('hex')}`;

/** Drops a benchmark run's database (ON CLUSTER on a cluster). */
export async function dropDatabase(e: ChEndpoint, database: string): Promise<void> {
  const s = settingsOf(e, 'default');
  const client = chClient(s, { database: 'default' });
  try {
    await client.command(`DROP DATABASE IF EXISTS ${database}${s.cluster ? ` ON CLUSTER ${s.cluster}` : ''}`);
  } finally {
    await client.close();
  }
}

/** The engine's label for the table headers. */
export function engineLabel(telemetry: TelemetryEngine, endpoint?: ChEndpoint): string {
  return telemetry instanceof ClickHouseTelemetry ? `engine: ${endpoint?.label ?? 'ClickHouse'}, database ${telemetry.ch.schema.database}` : 'engine: DuckDB (embedded)';
}

const TABLES = new Set(['spans', 'span_events', 'logs', 'metric_points', 'metric_series']);

/** Rows of `table` of one project, counted by the engine that stores them. */
export async function countRows(telemetry: TelemetryEngine, table: string, projectId: string): Promise<number> {
  if (!TABLES.has(table)) throw new Error(`countRows: unknown table ${table}`);
  if (telemetry instanceof ClickHouseTelemetry) {
    const r = await telemetry.ch.client.query<{ n: string }>(`SELECT count() AS n FROM ${table} WHERE project_id = {p:String}`, { p: projectId });
    return Number(r[0].n);
  }
  if (telemetry instanceof DuckDbTelemetry)
    return telemetry.db.read(async (c) => Number((await c.runAndReadAll(`SELECT count(*) FROM ${table} WHERE project_id = $p`, { p: projectId })).getRowsJS()[0][0] as bigint));
  throw new Error('unknown telemetry engine');
}

/**
 * What follows a bulk load, timed: DuckDB folds its WAL into the file (CHECKPOINT); ClickHouse has nothing to
 * fold (each insert is a part, merged in the background): its active parts of `tables` are reported instead.
 */
export async function afterBulkLoad(telemetry: TelemetryEngine, tables: string[]): Promise<string> {
  const t0 = performance.now();
  if (telemetry instanceof DuckDbTelemetry) {
    await telemetry.db.writer.run('CHECKPOINT');
    return `CHECKPOINT after the load ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  }
  if (telemetry instanceof ClickHouseTelemetry) {
    const r = await telemetry.ch.client.query<{ table: string; parts: string }>(
      `SELECT table, count() AS parts FROM system.parts WHERE database = currentDatabase() AND active AND table IN {t:Array(String)} GROUP BY table ORDER BY table`,
      { t: tables },
    );
    return `no CHECKPOINT on ClickHouse; active parts after the load: ${r.map((x) => `${x.table} ${x.parts}`).join(', ') || 'none'}`;
  }
  throw new Error('unknown telemetry engine');
}

/**
 * The aggregate section's bulk seed, in the engine's own SQL: `series` series of one gauge (labels host and
 * region, 10 regions) and `perSeries` points each, `stepMs` apart from `startMs`, uniform random values in
 * [0, 100). The row count stored is checked against what was meant.
 */
export async function seedMetricPoints(
  telemetry: TelemetryEngine,
  o: { projectId: string; name: string; series: number; perSeries: number; startMs: number; stepMs: number },
): Promise<void> {
  const { projectId, name, series, perSeries, startMs, stepMs } = o;
  if (!/^[\w-]+$/.test(projectId) || !/^[\w.]+$/.test(name)) throw new Error('seedMetricPoints: unexpected project id or metric name');
  if (telemetry instanceof DuckDbTelemetry) {
    const duck = telemetry.db;
    await duck.writer.run(`
      INSERT INTO metric_series
      SELECT '${projectId}', s, '${name}', 'gauge', 'bench', 'prod', '{"host":"host-' || s || '","region":"r' || (s % 10) || '"}'
      FROM range(${series}) t(s)`);
    await duck.writer.run(`
      INSERT INTO metric_points (project_id, name, series_id, ts, value)
      SELECT '${projectId}', '${name}', s, ${startMs} + i * ${stepMs}, random() * 100
      FROM range(${series}) a(s), range(${perSeries}) b(i)`);
  } else if (telemetry instanceof ClickHouseTelemetry) {
    const c = telemetry.ch.client;
    const p = { p: projectId, n: name };
    await c.command(
      `INSERT INTO metric_series (project_id, series_id, name, type, service_name, environment, labels)
       SELECT {p:String}, number, {n:String}, 'gauge', 'bench', 'prod', concat('{"host":"host-', toString(number), '","region":"r', toString(number % 10), '"}')
       FROM numbers(${series})`,
      p,
    );
    // In series order, as the table's key (project, name, series, ts) keeps them.
    await c.command(
      `INSERT INTO metric_points (project_id, name, series_id, ts, value)
       SELECT {p:String}, {n:String}, intDiv(number, ${perSeries}), ${startMs} + (number % ${perSeries}) * ${stepMs}, randCanonical() * 100
       FROM numbers(${series * perSeries})`,
      p,
    );
  } else throw new Error('unknown telemetry engine');
  const stored = await countRows(telemetry, 'metric_points', projectId);
  if (stored !== series * perSeries) throw new Error(`seeded ${series * perSeries} points, the engine stores ${stored}`);
}
