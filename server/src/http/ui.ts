/**
 * The browser UI (web/): its built files served at the root, same origin as the API.
 *
 * The pages are a single-page app: a GET of one of its paths (`/`, `/login`, `/p/...`, ...) answers
 * `index.html` and the app routes in the browser; `/assets/*` are the built, content-hashed files, cached
 * for a year. Only paths no API route takes reach here (the not-found handler asks `serveUi` first), so
 * the UI never shadows a route, and it is not part of the OpenAPI description: it is a client of it.
 * Files are read once at start and compressed once (brotli, gzip), answered by `Accept-Encoding`.
 * When the UI was never built (`npm start` builds it; a test app need not), its paths answer 503 saying so.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Path prefixes of the UI's pages (web/src/routes.ts); anything else keeps the API's 404. */
const PAGE = /^\/(?:$|login$|device$|invitations\/[^/]+$|oauth\/consent(?:\/[^/]+)?$|p\/|settings(?:\/|$))/;

interface File {
  type: string;
  raw: Buffer;
  br: Buffer;
  gzip: Buffer;
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Where the built UI is: SVC_UI_DIR (`none`: serve no UI), else web/dist of this checkout (found upward from this module). */
export function uiDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.SVC_UI_DIR === 'none') return null;
  if (env.SVC_UI_DIR) return env.SVC_UI_DIR;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'web', 'dist');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    dir = path.dirname(dir);
  }
  return null;
}

function load(dir: string): Map<string, File> {
  const files = new Map<string, File>();
  const walk = (sub: string) => {
    for (const e of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.posix.join(sub, e.name);
      if (e.isDirectory()) walk(rel);
      else {
        const raw = fs.readFileSync(path.join(dir, rel));
        const type = TYPES[path.extname(e.name)] ?? 'application/octet-stream';
        files.set(`/${rel}`, {
          type,
          raw,
          br: zlib.brotliCompressSync(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } }),
          gzip: zlib.gzipSync(raw, { level: 9 }),
          immutable: rel.startsWith('assets/'),
        });
      }
    }
  };
  walk('');
  return files;
}

// The content security policy of every page: scripts and connections to this origin only.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export class UiFiles {
  private files: Map<string, File> | null = null;

  constructor(private readonly dir: string | null) {}

  /** Answers a GET or HEAD of a UI path and returns true; false for any other request (the caller's 404). */
  serve(req: FastifyRequest, reply: FastifyReply): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const urlPath = req.url.split('?')[0];
    const asset = urlPath.startsWith('/assets/') || urlPath === '/favicon.svg';
    if (!asset && !PAGE.test(urlPath)) return false;
    if (this.dir === null) {
      void reply.code(503).type('text/plain; charset=utf-8').send('The web UI is not built. `npm start` builds it (or run `npm run build`), then reload.\n');
      return true;
    }
    this.files ??= load(this.dir);
    const file = this.files.get(asset ? urlPath : '/index.html');
    if (!file) return false;
    const accepts = String(req.headers['accept-encoding'] ?? '');
    const [body, encoding] = /\bbr\b/.test(accepts) ? [file.br, 'br'] : /\bgzip\b/.test(accepts) ? [file.gzip, 'gzip'] : [file.raw, null];
    reply.header('content-type', file.type).header('vary', 'accept-encoding').header('x-content-type-options', 'nosniff');
    reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (!asset) reply.header('content-security-policy', CSP).header('referrer-policy', 'same-origin').header('x-frame-options', 'DENY');
    if (encoding) reply.header('content-encoding', encoding);
    void reply.code(200).send(body);
    return true;
  }
}
