/**
 * `npm run bench -- --peer --inspect`: a look inside our telemetry file after the 1M-point ingest and its
 * checkpoint (bench/peer.ts calls this on a copy of telemetry.duckdb while the server is stopped):
 * - per column of metric_points, the bytes and compressions DuckDB chose (pragma storage_info);
 * - EXPLAIN ANALYZE of the SQL that q1 (avg per 1h by g) runs: the store's own aggregate, with the connection
 *   wrapped so the statements it sends are recorded and the last one is run again under EXPLAIN ANALYZE;
 * - the same file with metric_points rewritten in (series_id, ts) order: its size and q1's time, to show what
 *   the insertion order costs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { TelemetryDb } from '../server/src/storage/telemetry/duckdb/open.js';
import { DuckDbMetricsQuery } from '../server/src/storage/telemetry/duckdb/metrics-query.js';
import type { AggregateQuery } from '../server/src/domains/metrics/store.js';
import { table } from './lib.js';

interface Recorded {
  sql: string;
  args: unknown[];
}

/** A TelemetryDb over one connection that records what the store runs. */
function recordingDb(c: DuckDBConnection, log: Recorded[]): TelemetryDb {
  const proxy = new Proxy(c, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if ((prop === 'runAndReadAll' || prop === 'run') && typeof v === 'function')
        return (sql: string, ...args: unknown[]) => {
          log.push({ sql, args });
          return (v as (...a: unknown[]) => unknown).call(target, sql, ...args);
        };
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { read: (fn) => fn(proxy), busy: (fn) => fn(), writer: c, instance: undefined as never, ping: async () => undefined, close: async () => undefined } as TelemetryDb;
}

/**
 * Per column: segments, compressions and bytes. A segment's bytes are estimated as the distance to the next
 * segment in its 256 KiB block (or to the block's end): what DuckDB keeps, validity masks counted with their column.
 */
async function columnBytes(c: DuckDBConnection, tableName: string) {
  const r = await c.runAndReadAll(`
    WITH s AS (
      SELECT column_name, column_id, segment_type, compression, block_id,
             coalesce(lead(block_offset) OVER (PARTITION BY block_id ORDER BY block_offset), 262144) - block_offset AS bytes
      FROM pragma_storage_info('${tableName}') WHERE persistent AND block_id >= 0)
    SELECT column_name, count(*) FILTER (WHERE segment_type <> 'VALIDITY') AS segments,
           string_agg(DISTINCT compression, ',') FILTER (WHERE segment_type <> 'VALIDITY') AS compressions, sum(bytes) AS bytes
    FROM s GROUP BY column_name, column_id ORDER BY column_id`);
  return r.getRowsJS() as [string, bigint, string, bigint][];
}

const colRows = (cols: [string, bigint, string, bigint][], points: number) =>
  cols.map(([name, segs, comp, bytes]) => [name, Number(segs), comp, (Number(bytes) / 2 ** 20).toFixed(2), (Number(bytes) / points).toFixed(2)]);

interface PlanNode {
  operator_name?: string;
  operator_type?: string;
  name?: string;
  operator_timing?: number;
  operator_cardinality?: number;
  latency?: number;
  children?: PlanNode[];
}

function printPlan(n: PlanNode, depth: number) {
  const name = n.operator_name ?? n.operator_type ?? n.name ?? '(query)';
  const t = n.operator_timing ?? n.latency;
  if (depth === 0 || name.trim()) console.log(`${'  '.repeat(depth)}${name.trim()}  ${n.operator_cardinality ?? ''} rows  ${t === undefined ? '' : `${t.toFixed(3)} s`}`);
  for (const c of n.children ?? []) printPlan(c, depth + 1);
}

async function timeIt(fn: () => Promise<unknown>, runs: number): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

export async function inspectOurs(dataDir: string, q: AggregateQuery, points: number): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(dataDir, '..', 'svc-peer-inspect-'));
  try {
    const file = path.join(tmp, 'copy.duckdb');
    fs.copyFileSync(path.join(dataDir, 'telemetry.duckdb'), file);
    const sizeBefore = fs.statSync(file).size;
    const instance = await DuckDBInstance.create(file);
    const c = await instance.connect();

    const cols = await columnBytes(c, 'metric_points');
    const blocks = (await c.runAndReadAll(`SELECT count(DISTINCT block_id) FROM pragma_storage_info('metric_points') WHERE block_id >= 0`)).getRowsJS()[0][0] as bigint;
    const groups = (await c.runAndReadAll(`SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('metric_points')`)).getRowsJS()[0][0] as bigint;
    table(
      `metric_points in telemetry.duckdb after the checkpoint (${points.toLocaleString('en-US')} points; file ${(sizeBefore / 2 ** 20).toFixed(1)} MiB = ${(sizeBefore / points).toFixed(2)} B/point; ${groups} row groups, ${blocks} distinct 256 KiB blocks)`,
      ['column', 'segments', 'compression', 'MiB (est.)', 'B/point'],
      colRows(cols, points),
    );

    const log: Recorded[] = [];
    const store = new DuckDbMetricsQuery(recordingDb(c, log));
    const storeMs = await timeIt(() => store.aggregate(q), 5);
    const big = log[log.length - 1];
    const profFile = path.join(tmp, 'profile.json');
    await c.run(`PRAGMA enable_profiling = 'json'`);
    await c.run(`PRAGMA profiling_output = '${profFile}'`);
    await c.runAndReadAll(big.sql, ...(big.args as []));
    await c.run('PRAGMA disable_profiling');
    console.log(`\nq1 through the store's aggregate on this file, in-process: p50 ${storeMs.toFixed(1)} ms over 5 runs (${log.length / 6} statements a call)`);
    console.log(`its last statement:\n${big.sql.replace(/\s+/g, ' ')}`);
    console.log('EXPLAIN ANALYZE of it (DuckDB profiling, JSON): operator, rows out, seconds');
    printPlan(JSON.parse(fs.readFileSync(profFile, 'utf8')) as PlanNode, 0);

    // The same answer with the points first reduced per (series, bucket) to sum and count, so the join to the
    // groups sees 17,000 rows instead of 1M (what VM's per-series rollup does before its aggregation).
    const perSeriesFirst = big.sql.replace(
      /p AS \(\s*SELECT s\.gid, \(mp\.ts - \$origin\) \/\/ \$step AS b, mp\.value\s*FROM metric_points mp JOIN s ON mp\.series_id = s\.series_id\s*WHERE (.*?)\),\s*a AS \(SELECT gid, b, \(avg\(value\)\)::DOUBLE AS value FROM p GROUP BY gid, b\)/s,
      (_m, where: string) =>
        `ps AS (SELECT mp.series_id, (mp.ts - $origin) // $step AS b, sum(mp.value) AS sv, count(*) AS n FROM metric_points mp WHERE ${where} GROUP BY ALL),
         a AS (SELECT s.gid, ps.b, (sum(ps.sv) / sum(ps.n))::DOUBLE AS value FROM ps JOIN s ON ps.series_id = s.series_id GROUP BY s.gid, ps.b)`,
    );
    if (perSeriesFirst !== big.sql) {
      const same = JSON.stringify((await c.runAndReadAll(perSeriesFirst, ...(big.args as []))).getRowsJS().map((r) => [r[0], String(r[1]), Number(r[2]).toFixed(9)]));
      const orig = JSON.stringify((await c.runAndReadAll(big.sql, ...(big.args as []))).getRowsJS().map((r) => [r[0], String(r[1]), Number(r[2]).toFixed(9)]));
      if (same !== orig) throw new Error('the per-series-first q1 answers differently');
      const a = await timeIt(() => c.runAndReadAll(big.sql, ...(big.args as [])), 9);
      const b = await timeIt(() => c.runAndReadAll(perSeriesFirst, ...(big.args as [])), 9);
      console.log(`q1's last statement alone, p50 of 9: as the store writes it ${a.toFixed(1)} ms; reduced per series and bucket before the join ${b.toFixed(1)} ms (same answer)`);
    } else console.log('(the per-series-first rewrite of q1 did not match the SQL; skipped)');

    c.closeSync();
    instance.closeSync();

    // The same points stored in other orders, each in a fresh file holding only metric_points and metric_series.
    const variants = [
      { label: '(series_id, ts) order', select: 'SELECT * FROM src.metric_points ORDER BY project_id, name, series_id, ts' },
      { label: '(ts, series_id) order', select: 'SELECT * FROM src.metric_points ORDER BY project_id, name, ts, series_id' },
      {
        label: '(ts, series) order, series_id a dense 0..n-1 number instead of a 64-bit hash',
        select: `SELECT p.project_id, p.name, d.n::UBIGINT AS series_id, p.ts, p.value, p.start_ts FROM src.metric_points p
                 JOIN (SELECT series_id, row_number() OVER (ORDER BY series_id) - 1 AS n FROM src.metric_series) d USING (series_id)
                 ORDER BY p.project_id, p.name, p.ts, d.n`,
        series: `SELECT s.project_id, d.n::UBIGINT AS series_id, s.name, s.type, s.service_name, s.environment, s.labels FROM src.metric_series s
                 JOIN (SELECT series_id, row_number() OVER (ORDER BY series_id) - 1 AS n FROM src.metric_series) d USING (series_id)`,
      },
    ];
    const names = cols.map(([name]) => name);
    const perColumn = (cs: [string, bigint, string, bigint][]) => {
      const total = cs.reduce((a, [, , , b]) => a + Number(b), 0);
      return [(total / points).toFixed(2), ...names.map((n) => cs.find(([m]) => m === n)).map((x) => (x ? `${(Number(x[3]) / points).toFixed(2)} ${x[2]}` : 'n/a'))];
    };
    const rowsOut: (string | number)[][] = [['as ingested (insertion order)', ...perColumn(cols), storeMs.toFixed(1)]];
    for (const [k, v] of variants.entries()) {
      const f = path.join(tmp, `variant-${k}.duckdb`);
      const inst = await DuckDBInstance.create(f);
      const vc = await inst.connect();
      await vc.run(`ATTACH '${file}' AS src (READ_ONLY)`);
      await vc.run(`CREATE TABLE metric_series AS ${v.series ?? 'SELECT * FROM src.metric_series'}`);
      await vc.run('CREATE TABLE metric_tombstones AS SELECT * FROM src.metric_tombstones');
      await vc.run('CREATE TABLE metric_histograms AS SELECT * FROM src.metric_histograms');
      await vc.run(`CREATE TABLE metric_points AS ${v.select}`);
      await vc.run('DETACH src');
      await vc.run('CHECKPOINT');
      const vcols = await columnBytes(vc, 'metric_points');
      const vstore = new DuckDbMetricsQuery(recordingDb(vc, []));
      const vms = await timeIt(() => vstore.aggregate(q), 5);
      vc.closeSync();
      inst.closeSync();
      rowsOut.push([v.label, ...perColumn(vcols), vms.toFixed(1)]);
    }
    table(
      'metric_points stored in other orders (estimated B/point of the table, and per column with its compression; q1 in-process p50 ms over 5 runs)',
      ['order', 'table', ...names, 'q1 ms'],
      rowsOut,
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
