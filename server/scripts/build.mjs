/**
 * Builds the server into one ES module, `server/dist/main.js`, and its launcher `server/dist/main.cjs`, which
 * `npm start` runs with plain Node.
 * Running the TypeScript through a loader (tsx) at start-up kept the loader and its compiled-module caches in
 * the server for its whole life: 256 MiB resident when idle, against 188 MiB for the built file (measured on
 * the same data dir). Packages stay external (they load from node_modules as they are: the native DuckDB and
 * SQLite bindings among them). The source map is written beside the file; run with
 * `NODE_OPTIONS=--enable-source-maps` to see TypeScript positions in stack traces.
 * Used by `npm start`, the end-to-end tests (test/global-setup.ts) and the benchmarks.
 *
 * It also builds the web UI (web/, Vite) into web/dist, which the service serves at `/`: skipped when
 * web/dist is newer than every source of it, and when Vite is not installed (an install without
 * development packages serves the web/dist it was given, or says the UI is not built).
 */
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SERVER_ENTRY = path.join(here, '..', 'src', 'main.ts');
export const SERVER_BUNDLE = path.join(here, '..', 'dist', 'main.js');
/** What `npm start` runs: sizes libuv's thread pool, then loads SERVER_BUNDLE. */
export const SERVER_LAUNCHER = path.join(here, '..', 'dist', 'main.cjs');

/**
 * Every DuckDB statement runs on libuv's thread pool. With its default of 4 threads, the writers' commits that
 * wait for a checkpoint (each ingest signal has its own writer) held most of it and every read queued behind
 * them for the checkpoint's seconds. The pool starts while Node loads an ES module entry (asynchronous file
 * reads), before any of its code runs, so its size is set by this CommonJS launcher, loaded synchronously.
 * UV_THREADPOOL_SIZE set in the environment wins.
 */
const LAUNCHER = `// Built by server/scripts/build.mjs: sizes libuv's thread pool before the service (main.js) loads.
process.env.UV_THREADPOOL_SIZE ??= '16';
import('./main.js').catch((e) => {
  console.error(e);
  process.exit(1);
});
`;

export async function buildServer() {
  fs.mkdirSync(path.dirname(SERVER_LAUNCHER), { recursive: true });
  fs.writeFileSync(SERVER_LAUNCHER, LAUNCHER);
  await build({
    entryPoints: [SERVER_ENTRY],
    outfile: SERVER_BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  return SERVER_BUNDLE;
}

const WEB = path.join(here, '..', '..', 'web');
export const UI_INDEX = path.join(WEB, 'dist', 'index.html');
/** What the UI is built from: a change to any of these rebuilds it. */
const UI_SOURCES = [path.join(WEB, 'src'), path.join(WEB, 'public'), path.join(WEB, 'index.html'), path.join(WEB, 'vite.config.ts'), path.join(here, '..', 'src', 'domains', 'content', 'content-keys.ts')];

function newest(p) {
  if (!fs.existsSync(p)) return 0;
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...fs.readdirSync(p).map((e) => newest(path.join(p, e))));
}

/** Builds web/dist when a source is newer; returns 'built', 'fresh' or 'no-vite'. */
export async function buildUi({ force = false } = {}) {
  let vitePath;
  try {
    vitePath = createRequire(path.join(WEB, 'package.json')).resolve('vite');
  } catch {
    return 'no-vite';
  }
  if (!force && fs.existsSync(UI_INDEX) && fs.statSync(UI_INDEX).mtimeMs >= Math.max(...UI_SOURCES.map(newest))) return 'fresh';
  const vite = await import(pathToFileURL(vitePath).href);
  await vite.build({ configFile: path.join(WEB, 'vite.config.ts'), logLevel: 'warn' });
  return 'built';
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildServer();
  const ui = await buildUi({ force: process.argv.includes('--force-ui') });
  if (ui === 'no-vite' && !fs.existsSync(UI_INDEX)) console.warn('The web UI is not built: Vite is not installed (npm install without --omit=dev builds it).');
}
