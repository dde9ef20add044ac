/**
 * `npm run bench -- --load` (or `--only=load`): many keep-alive clients against our server as its own process
 * (bench/peer-proc.ts), a mixed profile for a fixed time. `--clients=N` (default 200), `--seconds=N` (default
 * 60; 15 with --quick), `--seed-runs=N` (default 5,000; 100,000 is the 1M-span store of issue 21's goal).
 *
 * Before the clock starts: a fresh store gets the seed's agent runs of 10 spans (bench/agent-reads.ts'
 * generator) over the last hour (over the last 24 hours past 5,000 runs), 20,000 log records and 100 series
 * x 60 one-minute points; then the server is restarted on that store (its shutdown checkpoints the seed, so the
 * run measures its own checkpoints, not the seed's). The write bodies are encoded beforehand
 * into pools that the clients cycle through (a body may be sent more than once: duplicate spans and points are
 * still write work), so the client's CPU during the run is mostly HTTP.
 *
 * Profile (weights out of 100; ~40 % writes):
 *   20 POST /v1/metrics (1,000 points: 100 series x 10), 15 POST /v1/traces (10 agent runs, 100 spans),
 *    5 POST /v1/logs (100 records),
 *   12 POST /api/v1/metrics/aggregate (avg per 5m by g over the last hour), 10 GET /agent-runs?limit=50,
 *   10 GET /agent-runs/{id}/graph, 8 GET /traces/{id}, 8 GET /traces?limit=20&since=1h, 12 GET /logs?limit=50&since=1h.
 * Each client sends one request at a time over its own keep-alive connection (node:http).
 * Reported: requests/s overall, p50/p99 and errors per route, errors by status, server RSS and CPU every 5 s.
 *
 * `--engine clickhouse` (bench/engine.ts): the server runs as a scaled-out node does, control data in a throwaway
 * PostgreSQL schema and telemetry in a ClickHouse database of its own (server-process.ts scaleOutEnv; both
 * dropped at the end). With the bench's own clickhouse-local, that process's CPU and RSS are reported beside the
 * server's (the engine's work is done there, not in the server process).
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import { dropScaleOut, scaleOutEnv } from '../server/src/testing/server-process.js';
import { keepAliveClient, pct, setTableSuffix, table } from './lib.js';
import { dropDatabase, loadLine, type ChEndpoint } from './engine.js';
import { KEY, loadAvg, machine, PROJECT, procStat, startOurs, tempDir } from './peer-proc.js';
import { SESSIONS, traceIdOf, tracesBody, type Layout } from './agent-reads.js';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportMetricsReq = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
const ExportLogsReq = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

const RUNS_PER_BODY = 10;
const TRACE_POOL = 300;
const METRIC_POOL = 200;
const LOG_POOL = 100;
const HOUR = 3_600_000;
const str = (key: string, v: string) => ({ key, value: { stringValue: v } });

export function metricsBody(endMs: number, points: number, seriesCount = 100): Uint8Array {
  const perSeries = points / seriesCount;
  const dataPoints = [];
  for (let s = 0; s < seriesCount; s++)
    for (let i = 0; i < perSeries; i++)
      dataPoints.push({
        attributes: [str('host', `host-${s}`), str('g', `g${s % 10}`)],
        timeUnixNano: (BigInt(endMs - (perSeries - 1 - i) * 60_000) * 1_000_000n).toString(),
        asDouble: Math.round(Math.random() * 10_000) / 100,
      });
  return ExportMetricsReq.encode(
    ExportMetricsReq.fromObject({
      resourceMetrics: [{ resource: { attributes: [str('service.name', 'load')] }, scopeMetrics: [{ scope: { name: 'load' }, metrics: [{ name: 'load_gauge', gauge: { dataPoints } }] }] }],
    }),
  ).finish();
}

export function logsBody(startMs: number, n: number, seed: number): Uint8Array {
  const logRecords = Array.from({ length: n }, (_, k) => {
    const ns = (BigInt(Math.round(startMs + k * 100)) * 1_000_000n).toString();
    const j = seed * n + k;
    return {
      timeUnixNano: ns,
      observedTimeUnixNano: ns,
      severityNumber: j % 10 === 0 ? 17 : 9,
      severityText: j % 10 === 0 ? 'ERROR' : 'INFO',
      body: { stringValue: j % 10 === 0 ? `upstream timeout after ${3000 + (j % 2000)}ms calling inventory-svc` : `GET /api/orders/${j % 100_000} 200 in ${j % 250}ms` },
      attributes: [str('http.route', `/api/r${j % 30}`)],
    };
  });
  return ExportLogsReq.encode(
    ExportLogsReq.fromObject({ resourceLogs: [{ resource: { attributes: [str('service.name', `svc-${seed % 20}`)] }, scopeLogs: [{ scope: { name: 'load' }, logRecords }] }] }),
  ).finish();
}

interface Op {
  label: string;
  weight: number;
  request: (n: number) => { method: 'GET' | 'POST'; path: string; body?: Uint8Array | string; type?: string };
}

export async function benchLoad(opts: { clients: number; seconds: number; seedRuns?: number; profile?: boolean; perRoute?: boolean; clickhouse?: ChEndpoint }): Promise<void> {
  const SEED_RUNS = opts.seedRuns ?? 5_000;
  const seedSpanMs = SEED_RUNS > 5_000 ? 24 * HOUR : HOUR;
  const ch = opts.clickhouse;
  const engine = ch ? `PostgreSQL + ${ch.label}` : 'SQLite + DuckDB (embedded)';
  console.log(`\nload: ${machine()}; ${opts.clients} clients for ${opts.seconds} s over ${SEED_RUNS.toLocaleString('en-US')} seeded runs; engine ${engine}; ${loadLine()} at start`);
  const dir = tempDir('svc-load-');
  // --profile: the server runs under node --cpu-prof; the profile (seeding included) stays in a temp dir.
  const profDir = opts.profile ? tempDir('svc-load-prof-') : undefined;
  // ClickHouse: control data in a PostgreSQL schema, telemetry in a ClickHouse database, both of this data dir's own.
  const scaledOut = ch ? { ...(await scaleOutEnv(dir, ch.url)), ...ch.env } : {};
  if (ch) setTableSuffix(`engine: ${engine}, database ${scaledOut.SVC_CLICKHOUSE_DATABASE}; control: PostgreSQL schema ${scaledOut.SVC_CLICKHOUSE_DATABASE}`);
  else setTableSuffix(`engine: ${engine}`);
  // The clickhouse-local process (when the bench started one): its CPU and RSS are reported beside the server's.
  const chPid = ch?.pid;
  // SVC_DUCKDB_* of the bench's environment reach the server (startOurs passes them; to compare settings).
  let ourServer: Awaited<ReturnType<typeof startOurs>> | undefined;
  try {
    let server = (ourServer = await startOurs(dir, scaledOut));
    const now = Date.now();
    const api = (p: string) => `${p}${p.includes('?') ? '&' : '?'}project_id=${PROJECT}`;
    const post = async (p: string, body: Uint8Array) => {
      const res = await fetch(`${server.base}${api(p)}`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'x-svc-api-key': KEY }, body: body as unknown as ArrayBuffer });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${p} answered ${res.status}`);
    };

    // ---- the seed data and the write pools
    const t0 = performance.now();
    const seed: Layout = { runs: SEED_RUNS, startMs: now - seedSpanMs, stepMs: (seedSpanMs - 60_000) / SEED_RUNS, perSession: Math.max(1, SEED_RUNS / SESSIONS) };
    // 500 runs (5,000 spans) a request, 4 in flight.
    const starts = Array.from({ length: Math.ceil(SEED_RUNS / 500) }, (_, k) => k * 500);
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let i = starts.shift(); i !== undefined; i = starts.shift()) await post('/v1/traces', tracesBody(seed, i, Math.min(SEED_RUNS, i + 500)));
    }));
    const seedSecs = (performance.now() - t0) / 1000;
    console.log(`load: seeded ${(SEED_RUNS * 10).toLocaleString('en-US')} spans (${SEED_RUNS.toLocaleString('en-US')} runs, 5,000 spans a request, 4 in flight, encoding included) in ${seedSecs.toFixed(1)} s: ${Math.round((SEED_RUNS * 10) / seedSecs).toLocaleString('en-US')} spans/s; ${loadLine()}`);
    for (let k = 0; k < 20; k++) await post('/v1/logs', logsBody(now - HOUR + k * 180_000, 1_000, k));
    await post('/v1/metrics', metricsBody(now, 6_000));
    // New runs continue the seed's run numbers (fresh trace ids), a few ms apart from now on.
    const live: Layout = { runs: SEED_RUNS + TRACE_POOL * RUNS_PER_BODY, startMs: now - seedSpanMs, stepMs: seed.stepMs, perSession: seed.perSession };
    const tracePool = Array.from({ length: TRACE_POOL }, (_, k) => tracesBody(live, SEED_RUNS + k * RUNS_PER_BODY, SEED_RUNS + (k + 1) * RUNS_PER_BODY));
    const metricPool = Array.from({ length: METRIC_POOL }, (_, k) => metricsBody(now + k * 60_000, 1_000));
    const logPool = Array.from({ length: LOG_POOL }, (_, k) => logsBody(now + k * 10_000, 100, 100 + k));
    console.log(`load: seeded and encoded in ${((performance.now() - t0) / 1000).toFixed(1)} s (not counted); ${loadLine()}`);
    // The server is restarted on the seeded store: its shutdown folds the seed's WAL into the file, so the run
    // measures the load's own work (its checkpoints included), not the checkpoint the seed left pending.
    await server.stop();
    const r0 = performance.now();
    server = ourServer = await startOurs(dir, scaledOut, profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    console.log(`load: server restarted on the seeded store in ${((performance.now() - r0) / 1000).toFixed(1)} s; ${loadLine()}`);

    const runId = (n: number) => Buffer.from(traceIdOf((n * 7919) % SEED_RUNS)).toString('hex');
    const aggregate = JSON.stringify({ metric_name: 'load_gauge', step: '5m', aggregation: 'avg', group_by: ['g'], time_range: { start: new Date(now - HOUR).toISOString(), end: new Date(now + HOUR).toISOString() } });
    const ops: Op[] = [
      { label: 'POST /v1/metrics (1,000 points)', weight: 20, request: (n) => ({ method: 'POST', path: '/v1/metrics', body: metricPool[n % METRIC_POOL], type: 'application/x-protobuf' }) },
      { label: 'POST /v1/traces (100 spans)', weight: 15, request: (n) => ({ method: 'POST', path: '/v1/traces', body: tracePool[n % TRACE_POOL], type: 'application/x-protobuf' }) },
      { label: 'POST /v1/logs (100 records)', weight: 5, request: (n) => ({ method: 'POST', path: '/v1/logs', body: logPool[n % LOG_POOL], type: 'application/x-protobuf' }) },
      { label: 'POST /api/v1/metrics/aggregate', weight: 12, request: () => ({ method: 'POST', path: '/api/v1/metrics/aggregate', body: aggregate, type: 'application/json' }) },
      { label: 'GET /api/v1/agent-runs?limit=50', weight: 10, request: () => ({ method: 'GET', path: '/api/v1/agent-runs?limit=50' }) },
      { label: 'GET /api/v1/agent-runs/{id}/graph', weight: 10, request: (n) => ({ method: 'GET', path: `/api/v1/agent-runs/${runId(n)}/graph` }) },
      { label: 'GET /api/v1/traces/{id}', weight: 8, request: (n) => ({ method: 'GET', path: `/api/v1/traces/${runId(n)}` }) },
      { label: 'GET /api/v1/traces?limit=20&since=1h', weight: 8, request: () => ({ method: 'GET', path: '/api/v1/traces?limit=20&since=1h' }) },
      { label: 'GET /api/v1/logs?limit=50&since=1h', weight: 12, request: () => ({ method: 'GET', path: '/api/v1/logs?limit=50&since=1h' }) },
    ];
    const pick: number[] = ops.flatMap((o, i) => Array<number>(o.weight).fill(i));
    if (pick.length !== 100) throw new Error('the weights must add up to 100');

    // Every route answers once before the clock starts.
    for (const [i, o] of ops.entries()) {
      const r = o.request(i);
      const res = await fetch(`${server.base}${api(r.path)}`, { method: r.method, headers: { 'x-svc-api-key': KEY, ...(r.type ? { 'content-type': r.type } : {}) }, body: r.body as BodyInit | undefined });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${o.label} answered ${res.status}: ${text.slice(0, 300)}`);
    }

    // --per-route: each route alone, one request at a time (after the warm-up): wall ms and the server's CPU ms
    // per request (utime + stime of all its threads), i.e. what a request of the route costs without queueing.
    if (opts.perRoute) {
      const costRows: (string | number)[][] = [];
      for (const [i, o] of ops.entries()) {
        const n = 20;
        const walls: number[] = [];
        const cpu0 = procStat(server.pid).cpuSecs;
        const chCpu0 = chPid ? procStat(chPid).cpuSecs : 0;
        for (let k = 0; k < n; k++) {
          const r = o.request(1000 + i * 100 + k);
          const t = performance.now();
          const res = await fetch(`${server.base}${api(r.path)}`, { method: r.method, headers: { 'x-svc-api-key': KEY, ...(r.type ? { 'content-type': r.type } : {}) }, body: r.body as BodyInit | undefined });
          await res.arrayBuffer();
          walls.push(performance.now() - t);
        }
        const cpuMs = ((procStat(server.pid).cpuSecs - cpu0) * 1000) / n;
        const chCpuMs = chPid ? ((procStat(chPid).cpuSecs - chCpu0) * 1000) / n : undefined;
        walls.sort((a, b) => a - b);
        costRows.push([o.label, pct(walls, 50).toFixed(1), cpuMs.toFixed(1), ...(chCpuMs === undefined ? [] : [chCpuMs.toFixed(1)])]);
      }
      table(`Each route alone, 20 requests one at a time (load average ${loadAvg()})`, ['route', 'p50 ms', 'server CPU ms/request', ...(chPid ? ['clickhouse-local CPU ms/request'] : [])], costRows);
    }

    // ---- the run
    const latencies: number[][] = ops.map(() => []);
    const errors: Map<string, number>[] = ops.map(() => new Map());
    const byStatus = new Map<string, number>();
    const rss: (string | number)[][] = [];
    let done = 0;
    let lastCpu = procStat(server.pid).cpuSecs;
    let lastChCpu = chPid ? procStat(chPid).cpuSecs : 0;
    let lastDone = 0;
    const started = performance.now();
    const deadline = started + opts.seconds * 1000;
    let lastAt = performance.now();
    const sample = () => {
      const s = procStat(server.pid);
      const at = performance.now();
      const secs = (at - started) / 1000;
      const span = (at - lastAt) / 1000;
      const chCols: string[] = [];
      if (chPid) {
        const c = procStat(chPid);
        chCols.push(c.rssMiB.toFixed(0), `${(((c.cpuSecs - lastChCpu) / span) * 100).toFixed(0)} %`);
        lastChCpu = c.cpuSecs;
      }
      rss.push([secs.toFixed(0), s.rssMiB.toFixed(0), `${(((s.cpuSecs - lastCpu) / span) * 100).toFixed(0)} %`, ...chCols, Math.round((done - lastDone) / span), loadAvg()]);
      lastCpu = s.cpuSecs;
      lastDone = done;
      lastAt = at;
    };
    const timer = setInterval(sample, 5_000);
    // One keep-alive connection per client over node:http (about a quarter of fetch's client CPU per request,
    // which the client would otherwise take from the cores the server is measured on).
    const client = keepAliveClient(server.base, opts.clients);
    const clientCpu0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: opts.clients }, async (_, c) => {
        let n = c * 7_919;
        while (performance.now() < deadline) {
          const i = pick[Math.floor(Math.random() * 100)];
          const r = ops[i].request(n++);
          const t = performance.now();
          let status: string;
          try {
            const res = await client.request(r.method, api(r.path), { 'x-svc-api-key': KEY, ...(r.type ? { 'content-type': r.type } : {}) }, r.body);
            status = String(res.status);
          } catch (e) {
            status = (e as { code?: string }).code ?? 'network';
          }
          const dt = performance.now() - t;
          done++;
          if (status === '200') latencies[i].push(dt);
          else {
            errors[i].set(status, (errors[i].get(status) ?? 0) + 1);
            byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
          }
        }
      }),
    );
    const secs = (performance.now() - started) / 1000;
    const clientCpu = process.cpuUsage(clientCpu0);
    client.close();
    clearInterval(timer);
    sample();

    const rows = ops.map((o, i) => {
      const l = latencies[i].sort((a, b) => a - b);
      const n = l.length + [...errors[i].values()].reduce((a, b) => a + b, 0);
      return [
        o.label,
        `${o.weight} %`,
        n,
        (n / secs).toFixed(0),
        l.length ? pct(l, 50).toFixed(0) : 'n/a',
        l.length ? pct(l, 99).toFixed(0) : 'n/a',
        [...errors[i]].map(([s, k]) => `${s}: ${k}`).join(', ') || '0',
      ];
    });
    table(
      `Load: ${opts.clients} keep-alive clients for ${secs.toFixed(0)} s against our server process: ${done.toLocaleString('en-US')} requests, ${(done / secs).toFixed(0)} requests/s; ${machine()}; load average (1 min) at the end ${loadAvg()}`,
      ['route', 'share', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
      rows,
    );
    console.log(`client (this process): ${((clientCpu.user + clientCpu.system) / 1000 / Math.max(1, done)).toFixed(2)} ms of CPU per request`);
    console.log(`errors by status: ${[...byStatus].map(([s, k]) => `${s}: ${k}`).join(', ') || 'none'}`);
    table(
      `Server every 5 s (RSS, CPU of its process over the last 5 s${chPid ? ', the same of the clickhouse-local process' : ''}, requests completed per second, load average)`,
      ['s', 'RSS MiB', 'CPU', ...(chPid ? ['CH RSS MiB', 'CH CPU'] : []), 'req/s', 'load'],
      rss,
    );
  } finally {
    await ourServer?.stop().catch((e) => console.error(String(e)));
    if (ch) {
      // The PostgreSQL schema and the ClickHouse database (dropScaleOut's drop is a plain HTTP call; a real server with credentials needs the client's).
      await dropScaleOut(dir, ch.url).catch((e) => console.error(`load: could not drop the scale-out schema: ${String(e)}`));
      if (scaledOut.SVC_CLICKHOUSE_DATABASE) await dropDatabase(ch, scaledOut.SVC_CLICKHOUSE_DATABASE).catch((e) => console.error(`load: could not drop the ClickHouse database: ${String(e)}`));
    }
    fs.rmSync(dir, { recursive: true, force: true });
    if (profDir) console.log(`CPU profile of the server in ${profDir} (npx tsx bench/cpuprofile-summary.ts FILE --top=30)`);
  }
}
