/**
 * npm run bench: OTLP protobuf ingest throughput (metrics points/s, and spans/s in bench/spans.ts),
 * aggregate query latency, and the agent, trace and log reads over a day of agent runs (bench/agent-reads.ts),
 * the cost of the containment check on the ingest path (bench/containment.ts), and evaluations
 * (bench/evaluations.ts), and the web UI's first-load size per page (bench/ui.ts), printed as small tables. `--only=ingest|query|spans|upkeep|agent|containment|evals|ui`
 * runs one section. `--peer` (`--only=peer`) compares our server with VictoriaMetrics, both as separate processes
 * (bench/peer.ts); `--load` (`--only=load`) drives our server process with many keep-alive clients
 * (bench/load.ts); neither runs by default.
 * Runs the real app (file-backed SQLite + DuckDB in a temp dir) on a loopback port; the client is
 * in the same process, so the ingest figure includes the client's share of the 2 cores.
 * `--engine clickhouse` (default `duckdb`) runs the same on the ClickHouse engine (bench/engine.ts): every table's
 * title names the engine; the load average is printed at the start and the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { buildApp } from '../server/src/app.js';
import { loadConfig, type Config } from '../server/src/config.js';
import type { ControlStore } from '../server/src/storage/control/stores.js';
import type { TelemetryEngine } from '../server/src/storage/telemetry/engine.js';
import { withKeyHashSecret } from '../server/src/lib/keyed-hash.js';
import { buildContext } from '../server/src/context.js';
import { bootstrap } from '../server/src/domains/organizations/bootstrap.js';
import { openStores } from '../server/src/stores.js';
import { ingestRun, otlpPoster, pct, perSecond, setTableSuffix, table } from './lib.js';
import { benchDatabase, clickHouseEndpoint, dropDatabase, engineArg, engineLabel, loadLine, seedMetricPoints, UsageError, type ChEndpoint, type EngineName } from './engine.js';
import { benchAgentReads } from './agent-reads.js';
import { benchSpans, benchSummaryUpkeep } from './spans.js';
import { benchContainment } from './containment.js';
import { benchEvaluations } from './evaluations.js';
import { benchPeer } from './peer.js';
import { benchLoad } from './load.js';
import { benchUi } from './ui.js';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportReq = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;

const SERIES = 1000;
const quick = process.argv.includes('--quick');
const SECTIONS = ['ingest', 'query', 'spans', 'upkeep', 'agent', 'containment', 'evals', 'ui', 'peer', 'load'] as const;
const USAGE = `usage: npm run bench -- [--engine duckdb|clickhouse] [--quick] [--only=${SECTIONS.join('|')}] [--peer | --load ...]`;
function usageError(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}
let engine: EngineName;
try {
  engine = engineArg(process.argv);
} catch (e) {
  if (e instanceof UsageError) usageError(e.message);
  throw e;
}
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
if (only !== undefined && !(SECTIONS as readonly string[]).includes(only)) usageError(`--only must be one of ${SECTIONS.join(', ')}`);
const separate = process.argv.includes('--peer') ? 'peer' : process.argv.includes('--load') ? 'load' : only === 'peer' || only === 'load' ? only : undefined;
// --peer compares the embedded store's file and WAL with VictoriaMetrics' data dir (bench/peer.ts): DuckDB only.
if (separate === 'peer' && engine !== 'duckdb') usageError('--peer measures the embedded engine (its file on disk, its CHECKPOINT): run it with --engine duckdb');
const wants = (section: (typeof SECTIONS)[number]) => only === undefined || only === section;
const numArg = (name: string, fallback: number) => {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`--${name} must be a positive integer`);
  return Number(raw);
};

function otlpBody(points: number, seq: number): Uint8Array {
  const perSeries = Math.max(1, Math.floor(points / SERIES));
  const baseNs = BigInt(Date.now() - 3_600_000) * 1_000_000n + BigInt(seq) * 1_000_000_000n;
  const dataPoints = [];
  for (let s = 0; s < SERIES && dataPoints.length < points; s++) {
    for (let i = 0; i < perSeries && dataPoints.length < points; i++) {
      dataPoints.push({
        attributes: [
          { key: 'host', value: { stringValue: `host-${s}` } },
          { key: 'region', value: { stringValue: `r${s % 10}` } },
        ],
        timeUnixNano: (baseNs + BigInt(i) * 1_000_000n).toString(),
        asDouble: Math.random() * 100,
      });
    }
  }
  const msg = ExportReq.fromObject({
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeMetrics: [{ scope: { name: 'bench' }, metrics: [{ name: 'bench.gauge', unit: 'ms', description: 'a gauge of the benchmark', gauge: { dataPoints } }] }],
      },
    ],
  });
  return ExportReq.encode(msg).finish();
}

async function main() {
  console.log(`bench: engine ${engine}; ${loadLine()} at the start`);
  // --engine clickhouse: SVC_CLICKHOUSE_URL, else a clickhouse-local of the bench's own (stopped at the end).
  const endpoint = engine === 'clickhouse' ? await clickHouseEndpoint() : undefined;
  try {
    await runBenchmarks(endpoint);
  } finally {
    await endpoint?.stop();
    console.log(`\nbench: engine ${engine}; ${loadLine()} at the end`);
  }
}

async function runBenchmarks(endpoint: ChEndpoint | undefined) {
  // The separate-process benchmarks start their own servers.
  if (separate === 'peer') setTableSuffix('engine: DuckDB (embedded)');
  if (separate === 'peer') return benchPeer({ repeats: numArg('repeats', quick ? 1 : 3), profile: process.argv.includes('--profile'), inspect: process.argv.includes('--inspect') });
  if (only === 'ui') return benchUi();
  if (separate === 'load') return benchLoad({ clients: numArg('clients', 200), seconds: numArg('seconds', quick ? 15 : 60), seedRuns: numArg('seed-runs', 5_000), profile: process.argv.includes('--profile'), perRoute: process.argv.includes('--per-route'), clickhouse: endpoint });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  // On ClickHouse: a database of this run's own; control data stays in the temp dir's SQLite, as with DuckDB.
  const database = endpoint ? benchDatabase('inproc') : undefined;
  const chEnv: Record<string, string> = endpoint ? { ...endpoint.env, SVC_CLICKHOUSE_URL: endpoint.url, SVC_CLICKHOUSE_DATABASE: database! } : {};
  const config = await withKeyHashSecret(loadConfig({ SVC_DATA_DIR: dir, SVC_LOG_LEVEL: 'silent', SVC_OTLP_BODY_LIMIT_BYTES: String(256 * 1024 * 1024), ...chEnv }));
  const { control, telemetry } = await openStores(config);
  try {
    await inProcess(control, telemetry, config, endpoint);
  } finally {
    await telemetry.close();
    await control.close();
    if (endpoint && database) await dropDatabase(endpoint, database).catch((e) => console.error(`bench: could not drop ClickHouse database ${database}: ${String(e)}`));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function inProcess(control: ControlStore, telemetry: TelemetryEngine, config: Config & { keyHashSecret: Buffer }, endpoint: ChEndpoint | undefined) {
  setTableSuffix(`${engineLabel(telemetry, endpoint)}; control: ${control.dialect}`);
  const ctx = buildContext({ config, control, telemetry });
  const init = await bootstrap(control, ctx.audit, ctx.clock, ctx.ids, {}, ctx.keyHash);
  const app = await buildApp(ctx, { logger: false });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const key = init.generatedKey!;
  const post = otlpPoster(address, '/v1/metrics', init.projectId, key);

  // Ingest throughput (after a warm-up: new series and the JIT are not what is measured).
  const ingestRows: (string | number)[][] = [];
  const ingestRuns: [number, number][] = [
    [1_000, 1],
    [1_000, 4],
    [1_000, 16],
    [10_000, 1],
    [10_000, 4],
  ];
  for (const [batch, inFlight] of wants('ingest') ? ingestRuns : []) {
    const requests = quick ? 20 : batch === 1_000 ? 400 : 60;
    const bodies = Array.from({ length: requests }, (_, i) => otlpBody(batch, i));
    const warmUp = Array.from({ length: 10 }, (_, i) => otlpBody(batch, 1_000 + i));
    const { secs, p50, p99 } = await ingestRun(post, bodies, inFlight, warmUp);
    ingestRows.push([batch, inFlight, requests, perSecond(batch * requests, secs), p50.toFixed(1), p99.toFixed(1)]);
  }
  if (ingestRows.length)
    table('OTLP protobuf ingest (1,000 series, after 10 warm-up requests; every 2xx is committed)', ['points/request', 'in flight', 'requests', 'points/s', 'p50 ms', 'p99 ms'], ingestRows);

  // Aggregate latency over 1M and 10M points loaded straight into the engine (its own SQL: bench/engine.ts).
  const queryRows: (string | number)[][] = [];
  const sizes = !wants('query') ? [] : quick ? [1_000_000] : [1_000_000, 10_000_000];
  for (const total of sizes) {
    const projectId = (await ctx.projects.create((await ctx.apiKeys.authenticate(key))!, { name: `bench-${total}` })).id;
    const perSeries = total / SERIES;
    const stepMs = 60_000;
    const end = Math.floor(Date.now() / stepMs) * stepMs;
    const start = end - perSeries * stepMs;
    await seedMetricPoints(telemetry, { projectId, name: 'bench.latency', series: SERIES, perSeries, startMs: start, stepMs });
    const queries = [
      { label: 'avg by 1h, group by region', body: { metric_name: 'bench.latency', step: '1h', aggregation: 'avg', group_by: ['region'], time_range: { start: new Date(Math.max(start, end - 480 * 3_600_000)).toISOString(), end: new Date(end).toISOString() } } },
      { label: 'p95 by 5m', body: { metric_name: 'bench.latency', step: '5m', aggregation: 'p95', time_range: { start: new Date(Math.max(start, end - 24 * 3_600_000)).toISOString(), end: new Date(end).toISOString() } } },
    ];
    for (const q of queries) {
      const runs = quick ? 10 : 30;
      const times: number[] = [];
      for (let i = 0; i < runs + 3; i++) {
        const t0 = performance.now();
        const res = await app.inject({ method: 'POST', url: `/api/v1/metrics/aggregate?project_id=${projectId}`, headers: { 'x-svc-api-key': key }, payload: q.body });
        const dt = performance.now() - t0;
        if (res.statusCode !== 200) throw new Error(`aggregate answered ${res.statusCode}: ${res.body}`);
        if (i >= 3) times.push(dt); // the first runs warm caches
      }
      times.sort((a, b) => a - b);
      queryRows.push([`${total / 1_000_000}M`, q.label, runs, pct(times, 50).toFixed(1), pct(times, 99).toFixed(1)]);
    }
  }
  if (queryRows.length) table('POST /metrics/aggregate (1,000 series)', ['points', 'query', 'runs', 'p50 ms', 'p99 ms'], queryRows);

  // The summary upkeep's cost is part of the spans section; `--only=upkeep` measures it alone.
  if (wants('spans')) await benchSpans(address, key, init.projectId, quick);
  if ((wants('spans') || only === 'upkeep') && engine === 'duckdb') await benchSummaryUpkeep(address, key, init.projectId, quick);

  if (wants('agent')) {
    const projectId = (await ctx.projects.create((await ctx.apiKeys.authenticate(key))!, { name: 'bench-agent' })).id;
    await benchAgentReads({ app, telemetry, address, key, projectId, quick });
  }

  if (wants('containment')) await benchContainment({ ctx, address, projectId: init.projectId, otlpBody, quick });

  if (wants('evals')) {
    const projectId = (await ctx.projects.create((await ctx.apiKeys.authenticate(key))!, { name: 'bench-evals' })).id;
    await benchEvaluations({ app, ctx, address, key, projectId, quick });
  }
  if (only === undefined) await benchUi();

  await app.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
