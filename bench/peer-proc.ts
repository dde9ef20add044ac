/**
 * What bench/peer.ts and bench/load.ts share: our server and VictoriaMetrics as separate processes on loopback
 * ports with their own temp data dirs, and their CPU time and RSS read from /proc (so the client's share of the
 * cores is not counted), the data dir's size, and the load average.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, REPO_ROOT, startServer, type ServerProcess } from '../server/src/testing/server-process.js';

/** The benchmarks measure what `npm start` runs: the built server, rebuilt from the current source once per run. */
let built = false;
function buildOnce(): void {
  if (built) return;
  execFileSync(process.execPath, ['server/scripts/build.mjs'], { cwd: REPO_ROOT, stdio: 'inherit' });
  built = true;
}

export const VM_BIN = process.env.VM_BIN || '/usr/bin/victoria-metrics';
export const KEY = 'bench-peer-key-0123456789abcdef';
export const PROJECT = 'bench-peer';
const TICK = 100; // getconf CLK_TCK on Linux

/** CPU seconds (user + system, all threads) and resident MiB of process `pid`. */
export function procStat(pid: number): { cpuSecs: number; rssMiB: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
  const cpuSecs = (Number(f[11]) + Number(f[12])) / TICK; // fields 14 utime, 15 stime
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSecs, rssMiB: m ? Number(m[1]) / 1024 : NaN };
}

/** CPU seconds of each thread name (comm) of process `pid`: the main JS thread is `node`, libuv's pool and DuckDB's threads have their own. */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = tid === String(pid) ? `${comm} (main thread)` : `${comm} (other threads)`;
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / TICK);
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

/** Samples the RSS of `pid` every `everyMs` until stopped; answers the samples (ms since start, MiB). */
export function rssSampler(pid: number, everyMs: number) {
  const t0 = performance.now();
  const samples: [number, number][] = [];
  const take = () => {
    try {
      samples.push([performance.now() - t0, procStat(pid).rssMiB]);
    } catch {
      /* the process ended */
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      take();
      return { max: Math.max(...samples.map((s) => s[1])), samples };
    },
  };
}

/** Bytes of the files under `dir` (apparent sizes, like `du -sb`). */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

export const loadAvg = () => os.loadavg()[0].toFixed(2);
export const machine = () => `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GiB`;

export interface Peer {
  name: string;
  base: string;
  pid: number;
  dataDir: string;
  /** Stops gracefully (ours: SIGTERM, which checkpoints the DuckDB WAL into the file). */
  stop(): Promise<void>;
}

/** SVC_DUCKDB_* of the bench's environment, passed to our server (to compare settings in one command). */
export function duckdbEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => k.startsWith('SVC_DUCKDB_') && v !== undefined)) as Record<string, string>;
}

/**
 * Our server as its own process (the built `server/dist/main.js`, as `npm start` runs it, built on the first start), store in `dataDir`, jobs as shipped; `nodeArgs` (e.g. --cpu-prof) go before the script.
 */
export async function startOurs(dataDir: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Peer> {
  buildOnce();
  const srv: ServerProcess = await startServer(
    {
      ...duckdbEnv(),
      SVC_DATA_DIR: dataDir,
      SVC_INIT_API_KEY: KEY,
      SVC_INIT_PROJECT_ID: PROJECT,
      SVC_LOG_LEVEL: 'warn',
      SVC_OTLP_BODY_LIMIT_BYTES: String(256 * 1024 * 1024),
      ...env,
    },
    nodeArgs,
  );
  return {
    name: 'ours',
    base: srv.base,
    pid: srv.child.pid!,
    dataDir,
    async stop() {
      if (srv.child.exitCode !== null) return;
      srv.child.kill('SIGTERM');
      const r = await srv.exited;
      if (r.code !== 0) throw new Error(`our server exited ${r.code ?? r.signal}: ${srv.stderr().slice(-2000)}`);
    },
  };
}

export const vmAvailable = () => fs.existsSync(VM_BIN);

/** VictoriaMetrics (single node) on a free loopback port with `dataDir` as its storage. */
export async function startVm(dataDir: string): Promise<Peer> {
  const port = await freePort();
  const child: ChildProcess = spawn(VM_BIN, [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${dataDir}`, '-loggerLevel=ERROR', '-retentionPeriod=1y'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`victoria-metrics exited: ${err}`);
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`victoria-metrics did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name: 'VictoriaMetrics',
    base,
    pid: child.pid!,
    dataDir,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));
