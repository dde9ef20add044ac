/** Test helpers: a tiny fake API on node:http that records requests, and runners for the CLI. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../cli.js';

export interface RecordedRequest {
  method: string;
  /** Path as sent, without the query string (still percent-encoded). */
  path: string;
  /** The raw query string without "?" ("" when absent). */
  search: string;
  query: Record<string, string[]>;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: unknown;
}

export interface FakeResponse {
  status?: number;
  body?: unknown;
  /** Sent as is instead of JSON-encoding `body`. */
  raw?: string;
  headers?: Record<string, string>;
  /** Never answer (to test interruption). */
  hang?: boolean;
  /** Send the headers and the body, then keep the connection open (a live stream). */
  keepOpen?: boolean;
}

/** One Server-Sent Events item for `sseResponse`: an event (data given as JSON unless a string), or a comment. */
export type SseItem = { event?: string; id?: string; data: unknown } | { comment: string };

/** The wire text of Server-Sent Events. */
export function sseText(items: SseItem[]): string {
  return items
    .map((it) => {
      if ('comment' in it) return `: ${it.comment}\n\n`;
      const data = typeof it.data === 'string' ? it.data : JSON.stringify(it.data);
      return `${it.id !== undefined ? `id: ${it.id}\n` : ''}${it.event !== undefined ? `event: ${it.event}\n` : ''}data: ${data}\n\n`;
    })
    .join('');
}

/** A `text/event-stream` answer carrying `items`; it ends after them unless `keepOpen`. */
export function sseResponse(items: SseItem[], opts: { keepOpen?: boolean } = {}): FakeResponse {
  return { raw: sseText(items), headers: { 'content-type': 'text/event-stream; charset=utf-8' }, keepOpen: opts.keepOpen };
}

export type Route = FakeResponse | ((req: RecordedRequest) => FakeResponse);

export interface FakeApi {
  url: string;
  requests: RecordedRequest[];
  /** Routes keyed by "METHOD /path" (the decoded path after /api/v1). */
  routes: Map<string, Route>;
  on(method: string, path: string, route: Route): void;
  close(): Promise<void>;
}

export async function startFakeApi(): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const routes = new Map<string, Route>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawUrl = req.url ?? '/';
      const q = rawUrl.indexOf('?');
      const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
      const search = q === -1 ? '' : rawUrl.slice(q + 1);
      const query: Record<string, string[]> = {};
      for (const [k, v] of new URLSearchParams(search)) (query[k] ??= []).push(v);
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = rawBody;
      }
      const rec: RecordedRequest = { method: req.method ?? '', path, search, query, headers: req.headers, rawBody, body };
      requests.push(rec);
      const key = `${rec.method} ${decodeURIComponent(path.replace(/^\/api\/v1/, ''))}`;
      const route = routes.get(key);
      const out: FakeResponse = route
        ? typeof route === 'function'
          ? route(rec)
          : route
        : { status: 404, body: { error: 'not_found', message: `no route ${key}` } };
      if (out.hang) return;
      const status = out.status ?? 200;
      const text = out.raw ?? (out.body === undefined ? '' : JSON.stringify(out.body));
      res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...(out.headers ?? {}) });
      if (out.keepOpen) res.write(text);
      else res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    routes,
    on: (method, path, route) => void routes.set(`${method} ${path}`, route),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  signal?: NodeJS.Signals | null;
}

/** Parses the single JSON object expected on stderr. */
export function stderrJson(r: CliResult): Record<string, unknown> {
  const lines = r.stderr.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got: ${r.stderr}`);
  return JSON.parse(lines[0]);
}

/** A fresh, empty XDG_CONFIG_HOME (and HOME) for one test. */
export function tempConfigHome(): { dir: string; env: Record<string, string>; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-test-'));
  return {
    dir,
    env: { XDG_CONFIG_HOME: join(dir, 'xdg'), HOME: join(dir, 'home') },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Runs the CLI in-process with fake streams. */
export async function runInProcess(
  args: string[],
  opts: {
    env?: Record<string, string | undefined>;
    stdoutTTY?: boolean;
    stderrTTY?: boolean;
    now?: Date;
    /** Replaces waiting (device-flow polling, lock retries). */
    sleep?: (ms: number) => Promise<void>;
    /** Replaces the browser opener (never start a real one in tests). */
    openUrl?: (url: string) => Promise<boolean>;
  } = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    env: opts.env ?? {},
    stdout: { write: (s: string) => (stdout += s), isTTY: opts.stdoutTTY ?? false },
    stderr: { write: (s: string) => (stderr += s), isTTY: opts.stderrTTY ?? false },
    now: opts.now ? () => opts.now! : undefined,
    sleep: opts.sleep,
    openUrl: opts.openUrl,
  });
  return { code, stdout, stderr };
}

export const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'svc.js');

/** Spawns the real `cli/bin/svc.js` with exactly `env` (plus PATH); stdout and stderr are pipes. */
export function spawnSvc(
  args: string[],
  env: Record<string, string | undefined>,
  opts: { onSpawn?: (child: ReturnType<typeof spawn>) => void; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 15_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    opts.onSpawn?.(child);
  });
}
