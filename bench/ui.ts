/**
 * `npm run bench -- --only=ui`: what a browser downloads to show each page of the web UI the first time
 * (nothing cached): index.html, the entry script and style sheet, and the page's own chunk with every chunk
 * it imports, read off Vite's build manifest (web/dist/.vite/manifest.json). Sizes as sent: brotli (what
 * the service answers a browser that accepts it, at the quality it uses) and gzip. Builds the UI first.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { table } from './lib.js';

interface Chunk {
  file: string;
  css?: string[];
  imports?: string[];
  isEntry?: boolean;
  src?: string;
}

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'web', 'dist');
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

export async function benchUi(): Promise<void> {
  // @ts-expect-error a JavaScript module without types
  const { buildUi } = await import('../server/scripts/build.mjs');
  await buildUi();
  const manifest = JSON.parse(fs.readFileSync(path.join(DIST, '.vite', 'manifest.json'), 'utf8')) as Record<string, Chunk>;
  const entryKey = Object.keys(manifest).find((k) => manifest[k].isEntry)!;
  const closure = (key: string, into: Set<string>) => {
    const c = manifest[key];
    if (!c) return into;
    into.add(c.file);
    for (const css of c.css ?? []) into.add(css);
    for (const i of c.imports ?? []) if (!into.has(manifest[i]?.file)) closure(i, into);
    return into;
  };
  const sizes = (files: Set<string>) => {
    let raw = 0;
    let br = 0;
    let gz = 0;
    let js = 0;
    for (const f of files) {
      const bytes = fs.readFileSync(path.join(DIST, f));
      const b = zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } }).length;
      raw += bytes.length;
      br += b;
      gz += zlib.gzipSync(bytes, { level: 9 }).length;
      if (f.endsWith('.js')) js += b;
    }
    return { raw, br, gz, js };
  };
  const rows: string[][] = [];
  const pages = Object.keys(manifest).filter((k) => k.startsWith('src/pages/')).sort();
  for (const page of pages) {
    const files = closure(page, closure(entryKey, new Set(['index.html'])));
    const s = sizes(files);
    rows.push([page.replace('src/pages/', '').replace(/\.tsx$/, ''), String(files.size), kb(s.raw), kb(s.gz), kb(s.br), kb(s.js)]);
  }
  table('web UI first load per page (nothing cached)', ['page', 'files', 'raw', 'gzip', 'brotli', 'brotli JS'], rows);
}
