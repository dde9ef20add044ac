/**
 * `npm run bench -- --peer` (or `--only=peer`): our server against VictoriaMetrics, side by side, same data,
 * each as its own process on a loopback port with its own temp data dir (bench/peer-proc.ts), so the server's
 * CPU time (/proc/<pid>/stat) and RSS (/proc/<pid>/status, sampled every 100 ms) are its own, not the client's.
 *
 * Data: 1,000 series x 1,000 points of one gauge `bench_gauge`, one-minute spacing, labels `host` (1,000
 * values) and `g` (10 values), values with two decimals from a fixed hash. Points sit at hh:mm:30, so no point
 * is on a bucket boundary: our bucket [B, B + step) then holds exactly the points of VictoriaMetrics' window
 * (t - step, t] at t = B + step, and the answers can be compared bucket by bucket.
 * Ours gets OTLP protobuf on /v1/metrics (a gauge, attributes host and g); VictoriaMetrics gets the same points
 * as Prometheus text on /api/v1/import/prometheus. Request k carries every series' points of minutes
 * [k * m, (k + 1) * m), m = points per request / 1,000 (how a fleet of scrapers or exporters sends).
 *
 * Per repeat and system (the order alternates between repeats): a fresh process and data dir; 3 warm-up
 * requests of 1k points to another metric; 1M points at 10k points/request, 4 in flight (points/s, server
 * CPU seconds per 1M points, peak RSS); the flush (ours: SIGTERM, whose shutdown CHECKPOINTs the DuckDB WAL
 * into the file, then a restart on the same dir; VM: /internal/force_flush) and the data dir's growth per
 * point; the answers of both queries checked against each other (any mismatch throws); the two queries timed
 * over HTTP (3 warm-ups, then 15 runs; VM with nocache=1); then 200k points of another metric at
 * 1k points/request, 4 in flight.
 *
 * `--repeats=N` (default 3), `--profile` (one extra run of ours with `node --cpu-prof`, summarized by
 * bench/cpuprofile-summary.ts; the profile files stay in a temp dir and are not committed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ingestRun, otlpPoster, pct, table } from './lib.js';
import { dirBytes, threadCpu, KEY, loadAvg, machine, PROJECT, procStat, rssSampler, startOurs, startVm, tempDir, vmAvailable, VM_BIN, type Peer } from './peer-proc.js';
import { summarizeProfiles } from './cpuprofile-summary.js';
import { inspectOurs } from './peer-inspect.js';
import { ExportReq, HOUR, METRIC, POINTS, SERIES, SMALL_METRIC, SMALL_POINTS, STEP_MS, T0, bodies, otlpBody, otlpBodyReference, promBody } from './peer-data.js';


const QUERY_RUNS = 15;
const QUERY_WARM = 3;
/** VictoriaMetrics' histogram buckets (vmrange) are 18 per decade: an estimate inside one is within 10^(1/18) - 1 of the truth. */
const VM_BUCKET_REL = 10 ** (1 / 18) - 1;

function vmPoster(base: string) {
  return async (body: Uint8Array) => {
    const res = await fetch(`${base}/api/v1/import/prometheus`, { method: 'POST', body: body as unknown as ArrayBuffer });
    await res.arrayBuffer();
    if (res.status !== 204) throw new Error(`VictoriaMetrics import answered ${res.status}`);
  };
}

// ---- the queries, as both systems are asked them, and their answers as group -> bucket start (ms) -> value

type Answer = Map<string, Map<number, number>>;
interface Query {
  label: string;
  ours: object;
  /** MetricsQL, the VM step in ms; VM's value at t is our bucket t - step. */
  vm: string;
  stepMs: number;
  /** Relative tolerance of the comparison. */
  tolerance: number;
}
const WINDOW = { start: new Date(T0).toISOString(), end: new Date(T0 + POINTS * STEP_MS).toISOString() };
const QUERIES: Query[] = [
  {
    label: 'q1 avg per 1h by g (1M points)',
    ours: { metric_name: METRIC, step: '1h', aggregation: 'avg', group_by: ['g'], time_range: WINDOW },
    vm: `avg by (g) (avg_over_time(${METRIC}[1h]))`,
    stepMs: HOUR,
    tolerance: 1e-9,
  },
  {
    label: 'q2 p95 per 5m, all series',
    ours: { metric_name: METRIC, step: '5m', aggregation: 'p95', time_range: WINDOW },
    vm: `histogram_quantile(0.95, sum by (vmrange) (histogram_over_time(${METRIC}[5m])))`,
    stepMs: 300_000,
    tolerance: VM_BUCKET_REL,
  },
];
const COUNT_CHECK: Query = {
  label: 'count per 1h by g',
  ours: { ...(QUERIES[0].ours as object), aggregation: 'count' },
  vm: `sum by (g) (count_over_time(${METRIC}[1h]))`,
  stepMs: HOUR,
  tolerance: 0,
};

async function askOurs(p: Peer, q: Query): Promise<{ ms: number; answer: Answer }> {
  const t0 = performance.now();
  const res = await fetch(`${p.base}/api/v1/metrics/aggregate?project_id=${PROJECT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-api-key': KEY },
    body: JSON.stringify(q.ours),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`aggregate answered ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { series: { labels: Record<string, string>; points: { timestamp: string; value: number }[] }[] };
  const answer: Answer = new Map();
  for (const s of body.series) answer.set(s.labels.g ?? '', new Map(s.points.map((pt) => [Date.parse(pt.timestamp), pt.value])));
  return { ms, answer };
}

async function askVm(p: Peer, q: Query): Promise<{ ms: number; answer: Answer }> {
  const params = new URLSearchParams({
    query: q.vm,
    start: String((T0 + q.stepMs) / 1000),
    // VM's last timestamp is the end of the bucket of the last point (hh:mm:30, never on a boundary).
    end: String((T0 + Math.ceil((POINTS * STEP_MS) / q.stepMs) * q.stepMs) / 1000),
    step: String(q.stepMs / 1000),
    nocache: '1',
  });
  const t0 = performance.now();
  const res = await fetch(`${p.base}/api/v1/query_range?${params}`);
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`query_range answered ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { data: { result: { metric: Record<string, string>; values: [number, string][] }[] } };
  const answer: Answer = new Map();
  for (const s of body.data.result) answer.set(s.metric.g ?? '', new Map(s.values.map(([t, v]) => [t * 1000 - q.stepMs, Number(v)])));
  return { ms, answer };
}

/** Throws unless the two answers have the same groups and buckets, values within the relative tolerance; answers the largest relative difference. */
function compare(q: Query, ours: Answer, vm: Answer): number {
  const fail = (why: string) => {
    throw new Error(`ANSWERS DIFFER (${q.label}): ${why}`);
  };
  const keys = (m: Map<unknown, unknown>) => [...m.keys()].sort().join(',');
  if (keys(ours) !== keys(vm)) fail(`groups ours [${keys(ours)}] vs VM [${keys(vm)}]`);
  let worst = 0;
  for (const [g, buckets] of ours) {
    const other = vm.get(g)!;
    if (keys(buckets) !== keys(other)) fail(`group ${g}: ${buckets.size} buckets ours vs ${other.size} VM, first ours ${[...buckets.keys()][0]}, first VM ${[...other.keys()][0]}`);
    for (const [b, v] of buckets) {
      const w = other.get(b)!;
      const rel = Math.abs(v - w) / Math.max(1e-12, Math.abs(v));
      worst = Math.max(worst, rel);
      if (rel > q.tolerance) fail(`group ${g} bucket ${new Date(b).toISOString()}: ours ${v}, VM ${w} (relative ${rel.toExponential(2)} > ${q.tolerance})`);
    }
  }
  return worst;
}

const sumOf = (a: Answer) => [...a.values()].reduce((t, m) => t + [...m.values()].reduce((x, y) => x + y, 0), 0);

// ---- one system, one repeat

interface Figures {
  ingestPps: number;
  cpuPerM: number;
  rssMax: number;
  bytesPerPoint: number;
  /** The same, ours: telemetry.duckdb's growth; VM: data/ and indexdb/ (its cache/ left out). */
  storeBytesPerPoint: number;
  q: number[];
  smallPps: number;
  smallCpuPerM: number;
  answers: Answer[];
  /** Server CPU seconds per thread name during the 10k ingest, and that ingest's CLOCK_MONOTONIC window (µs). */
  threads: Map<string, number>;
  window: [number, number];
  smallThreads?: Map<string, number>;
  smallWindow?: [number, number];
  /** Server RSS (MiB) once started, before any request. */
  idleRss: number;
}

async function measureIngest(p: Peer, post: (b: Uint8Array) => Promise<void>, bs: Uint8Array[], warm: Uint8Array[], points: number) {
  for (const b of warm) await post(b);
  const c0 = procStat(p.pid).cpuSecs;
  const th0 = threadCpu(p.pid);
  const rss = rssSampler(p.pid, 100);
  const w0 = Number(process.hrtime.bigint() / 1000n);
  const { secs } = await ingestRun(post, bs, 4, []);
  const w1 = Number(process.hrtime.bigint() / 1000n);
  const { max } = rss.stop();
  const cpu = procStat(p.pid).cpuSecs - c0;
  const threads = new Map([...threadCpu(p.pid)].map(([k, v]) => [k, v - (th0.get(k) ?? 0)]));
  return { pps: points / secs, cpuPerM: cpu / (points / 1e6), rssMax: max, cpu, threads, window: [w0, w1] as [number, number] };
}

interface Data {
  ours: { main: Uint8Array[]; warm: Uint8Array[]; small: Uint8Array[] };
  vm: { main: Uint8Array[]; warm: Uint8Array[]; small: Uint8Array[] };
}

async function runOne(system: 'ours' | 'vm', data: Data, profileDir?: string, inspect = false): Promise<Figures> {
  const dir = tempDir(system === 'ours' ? 'svc-peer-ours-' : 'svc-peer-vm-');
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  let p = system === 'ours' ? await startOurs(dir, {}, nodeArgs) : await startVm(dir);
  try {
    const d = data[system];
    const poster = (peer: Peer) => (system === 'ours' ? otlpPoster(peer.base, '/v1/metrics', PROJECT, KEY) : vmPoster(peer.base));
    const post = poster(p);
    const idleRss = procStat(p.pid).rssMiB;
    const empty = dirBytes(dir);
    const emptyStore = system === 'vm' ? empty : fs.statSync(path.join(dir, 'telemetry.duckdb')).size;
    const main = await measureIngest(p, post, d.main, d.warm, SERIES * POINTS);
    const stored = SERIES * POINTS + d.warm.length * SERIES;
    // The flush: ours' shutdown CHECKPOINTs the WAL into telemetry.duckdb; VM's /internal/force_flush, then its
    // shutdown, writes every buffered part. Both are then restarted on the same dir for the queries.
    if (profileDir) {
      // The 1k-points/request ingest in the same profiled process (its own metric), for its own window.
      const small = await measureIngest(p, post, d.small, [], SMALL_POINTS);
      await p.stop();
      return { ingestPps: main.pps, cpuPerM: main.cpuPerM, rssMax: main.rssMax, idleRss, bytesPerPoint: NaN, storeBytesPerPoint: NaN, q: [], smallPps: small.pps, smallCpuPerM: small.cpuPerM, answers: [], threads: main.threads, window: main.window, smallThreads: small.threads, smallWindow: small.window };
    }
    if (system === 'vm') {
      const r = await fetch(`${p.base}/internal/force_flush`);
      if (r.status !== 200) throw new Error(`force_flush answered ${r.status}`);
    }
    await p.stop();
    const bytes = dirBytes(dir);
    // VM's cache/ holds caches it persists on shutdown (rebuilt when absent); ours' control store and secrets are not telemetry.
    const storeBytes = system === 'vm' ? bytes - dirBytes(path.join(dir, 'cache')) : fs.statSync(path.join(dir, 'telemetry.duckdb')).size;
    if (inspect)
      await inspectOurs(dir, { projectId: PROJECT, metricName: METRIC, filters: [], startMs: T0, endMs: T0 + POINTS * STEP_MS, stepMs: HOUR, aggregation: 'avg', groupBy: ['g'], maxSeries: 50 }, SERIES * POINTS + d.warm.length * SERIES);
    p = system === 'ours' ? await startOurs(dir) : await startVm(dir);
    const ask = system === 'ours' ? askOurs : askVm;
    // Every point must be there: the count per group and hour adds up to what was sent.
    const counted = sumOf((await ask(p, COUNT_CHECK)).answer);
    if (counted !== SERIES * POINTS) throw new Error(`${p.name} counts ${counted} points of ${METRIC}, expected ${SERIES * POINTS}`);
    const q: number[] = [];
    const answers: Answer[] = [];
    for (const query of QUERIES) {
      const times: number[] = [];
      for (let n = 0; n < QUERY_WARM + QUERY_RUNS; n++) {
        const r = await ask(p, query);
        if (n === 0) answers.push(r.answer);
        if (n >= QUERY_WARM) times.push(r.ms);
      }
      times.sort((a, b) => a - b);
      q.push(pct(times, 50));
    }
    const small = await measureIngest(p, poster(p), d.small, [], SMALL_POINTS);
    return { ingestPps: main.pps, cpuPerM: main.cpuPerM, rssMax: main.rssMax, bytesPerPoint: (bytes - empty) / stored, storeBytesPerPoint: (storeBytes - emptyStore) / stored, q, smallPps: small.pps, smallCpuPerM: small.cpuPerM, answers, threads: main.threads, window: main.window, idleRss };
  } finally {
    await p.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the section

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a');
const range = (xs: number[], digits = 0) => (xs.length > 1 ? `${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}` : fmt(xs[0], digits));

export async function benchPeer(opts: { repeats: number; profile: boolean; inspect: boolean }): Promise<void> {
  const withVm = vmAvailable();
  console.log(`\npeer: ${machine()}; load average (1 min) at start ${loadAvg()}`);
  if (!withVm) console.log(`peer: VictoriaMetrics not found at ${VM_BIN} (apt-get install -y victoria-metrics, or set VM_BIN): only our figures are measured`);

  // The hand-written encoder says what the generated one says.
  const a = ExportReq.toObject(ExportReq.decode(otlpBody(METRIC, 3, 5)), { longs: String });
  const b = ExportReq.toObject(ExportReq.decode(otlpBodyReference(METRIC, 3, 5)), { longs: String });
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('the OTLP encoder of bench/peer.ts disagrees with the generated one');
  const t0 = performance.now();
  const data: Data = {
    ours: { main: bodies(otlpBody, METRIC, 10_000, SERIES * POINTS), warm: bodies(otlpBody, 'bench_warm', 1_000, 3_000), small: bodies(otlpBody, SMALL_METRIC, 1_000, SMALL_POINTS) },
    vm: withVm
      ? { main: bodies(promBody, METRIC, 10_000, SERIES * POINTS), warm: bodies(promBody, 'bench_warm', 1_000, 3_000), small: bodies(promBody, SMALL_METRIC, 1_000, SMALL_POINTS) }
      : { main: [], warm: [], small: [] },
  };
  const kib = (bs: Uint8Array[]) => Math.round(bs.reduce((a, b) => a + b.length, 0) / bs.length / 1024);
  console.log(
    `peer: bodies encoded in ${((performance.now() - t0) / 1000).toFixed(1)} s (not counted): 10k points = ${kib(data.ours.main)} KiB OTLP protobuf` +
      (withVm ? ` / ${kib(data.vm.main)} KiB Prometheus text` : ''),
  );

  const figs: { ours: Figures[]; vm: Figures[] } = { ours: [], vm: [] };
  const loads: string[] = [];
  for (let r = 0; r < opts.repeats; r++) {
    const order: ('ours' | 'vm')[] = !withVm ? ['ours'] : r % 2 === 0 ? ['ours', 'vm'] : ['vm', 'ours'];
    for (const sys of order) {
      const f = await runOne(sys, data, undefined, opts.inspect && r === 0 && sys === 'ours');
      figs[sys].push(f);
      loads.push(loadAvg());
      console.log(
        `  repeat ${r + 1} ${sys.padEnd(4)}: ${fmt(f.ingestPps)} points/s, ${fmt(f.cpuPerM, 2)} CPU-s/1M, RSS ${fmt(f.rssMax)} MiB, ${fmt(f.bytesPerPoint, 2)} B/point, ` +
          `q1 ${fmt(f.q[0], 1)} ms, q2 ${fmt(f.q[1], 1)} ms, 1k/request ${fmt(f.smallPps)} points/s; load ${loads.at(-1)}\n` +
          `    ingest CPU by thread: ${[...f.threads].filter(([, v]) => v >= 0.05).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ')}`,
      );
    }
    if (withVm) {
      const o = figs.ours.at(-1)!;
      const v = figs.vm.at(-1)!;
      const worst = QUERIES.map((q, i) => compare(q, o.answers[i], v.answers[i]));
      console.log(`  repeat ${r + 1} answers agree bucket by bucket: q1 largest relative difference ${worst[0].toExponential(1)}, q2 ${(worst[1] * 100).toFixed(2)}% (VM's histogram buckets allow ${(VM_BUCKET_REL * 100).toFixed(1)}%)`);
    }
  }

  const rows: (string | number)[][] = [];
  const line = (label: string, pick: (f: Figures) => number, digits: number, goal: string, better: 'higher' | 'lower', limit = 1) => {
    const o = figs.ours.map(pick);
    const v = figs.vm.map(pick);
    const ratio = withVm ? median(o) / median(v) : NaN;
    const met = !withVm ? '' : better === 'higher' ? (ratio >= limit ? 'yes' : 'no') : ratio <= limit ? 'yes' : 'no';
    rows.push([label, `${fmt(median(o), digits)} (${range(o, digits)})`, withVm ? `${fmt(median(v), digits)} (${range(v, digits)})` : 'n/a', withVm ? fmt(ratio, 2) : 'n/a', goal, met]);
  };
  line('ingest 10k points/request, 4 in flight: points/s', (f) => f.ingestPps, 0, 'ratio >= 1', 'higher');
  line('  server CPU-s per 1M points', (f) => f.cpuPerM, 2, '', 'lower');
  line('ingest 1k points/request, 4 in flight: points/s', (f) => f.smallPps, 0, 'ratio >= 1', 'higher');
  line('  server CPU-s per 1M points', (f) => f.smallCpuPerM, 2, '', 'lower');
  line('q1 avg per 1h by g, 1M points, HTTP: p50 ms', (f) => f.q[0], 1, 'ratio <= 1', 'lower');
  line('q2 p95 per 5m, all series, HTTP: p50 ms', (f) => f.q[1], 1, 'ratio < 1', 'lower');
  line('server peak RSS during 10k ingest: MiB', (f) => f.rssMax, 0, 'ratio <= 1.5', 'lower', 1.5);
  line('  server RSS idle, after start: MiB', (f) => f.idleRss, 0, '', 'lower');
  line('disk per point after flush: data dir growth, bytes', (f) => f.bytesPerPoint, 2, 'ratio <= 1', 'lower');
  line('  telemetry.duckdb / VM data+indexdb growth, bytes', (f) => f.storeBytesPerPoint, 2, 'ratio <= 1', 'lower');
  for (const r of rows) if (r[4] === '') r[5] = '';
  table(
    `Ours vs VictoriaMetrics ${withVm ? '1.79' : '(absent)'}: median of ${opts.repeats} interleaved repeats (range); 1,000 series x 1,000 points; ${machine()}; load average (1 min) per run ${loads.join(', ')}`,
    ['workload', 'ours', 'VictoriaMetrics', 'ours/VM', 'goal', 'met'],
    rows,
  );
  console.log(
    '(VM answers an import once the rows are buffered in memory; ours once the DuckDB commit is in the WAL. q2: ours is the exact p95 of the\n' +
      ' 5,000 points per bucket; VM estimates it from its log-spaced histogram buckets, checked within one bucket width.)',
  );

  if (opts.profile) {
    const profDir = tempDir('svc-peer-prof-');
    const f = await runOne('ours', data, profDir);
    console.log(`\nCPU profile of our server during the 10k- and 1k-points/request ingests (profile files in ${profDir})`);
    const files = fs
      .readdirSync(profDir)
      .filter((n) => n.endsWith('.cpuprofile'))
      .map((n) => path.join(profDir, n));
    for (const [label, threads, window, pps] of [
      ['10k points/request', f.threads, f.window, f.ingestPps],
      ['1k points/request', f.smallThreads!, f.smallWindow!, f.smallPps],
    ] as const) {
      const total = [...threads.values()].reduce((a, b) => a + b, 0);
      table(
        `Server CPU per thread during the ${label} ingest (${fmt(pps)} points/s under the profiler; /proc/<pid>/task/*/stat)`,
        ['thread', 'CPU s', '%'],
        [...threads].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v.toFixed(2), ((v / total) * 100).toFixed(1)]),
      );
      summarizeProfiles(files, 20, window);
    }
  }
}
