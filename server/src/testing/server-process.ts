/**
 * The real server in a child process, on a free loopback port, for end-to-end tests: the built file `npm start`
 * runs (`server/dist/main.js`, built once per test run by test/global-setup.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** What `npm start` runs (built by `node server/scripts/build.mjs`). */
export const SERVER_MAIN = 'server/dist/main.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  base: string;
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the server with `env` (plus SVC_HOST/SVC_PORT) and waits until /healthz answers. `nodeArgs` go before
 * the script (the benchmarks' `--cpu-prof`, which NODE_OPTIONS refuses).
 */
export async function startServer(env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerProcess> {
  if (!fs.existsSync(path.join(REPO_ROOT, SERVER_MAIN))) throw new Error(`${SERVER_MAIN} is not built: run node server/scripts/build.mjs`);
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_LOG_LEVEL: 'warn', ...env, SVC_HOST: '127.0.0.1', SVC_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  child.stdout!.on('data', (d) => (out += String(d)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${err}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, base, stderr: () => err, stdout: () => out, exited };
}

/** The end of an end-to-end file: the server stopped gracefully (if it started) and its data dir removed. */
export async function stopServer(server: ServerProcess | undefined, dataDir: string): Promise<void> {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
