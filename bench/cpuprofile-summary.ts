/**
 * Self time per function of V8 .cpuprofile files (node --cpu-prof), optionally only the samples inside a window
 * of CLOCK_MONOTONIC microseconds (what process.hrtime.bigint() / 1000n reads in any process on the machine).
 * `npx tsx bench/cpuprofile-summary.ts FILE... [--top=N]` prints the table; bench/peer.ts calls summarizeProfiles.
 * The profile samples the main JS thread only: work on libuv's pool or DuckDB's threads shows as (idle) or
 * (program) there, and is counted per thread from /proc instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { table } from './lib.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function shortUrl(url: string): string {
  if (!url) return '';
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) return u.slice(nm + 'node_modules/'.length);
  const srv = u.indexOf('/server/src/');
  if (srv >= 0) return u.slice(srv + 1);
  return u.startsWith('node:') ? u : path.basename(u);
}

export function summarizeProfiles(files: string[], top = 20, window?: [number, number]): { label: string; ms: number; share: number }[] {
  const self = new Map<string, number>();
  let total = 0;
  for (const file of files) {
    const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    let t = prof.startTime;
    for (let i = 0; i < prof.samples.length; i++) {
      t += prof.timeDeltas[i];
      // A sample's time is attributed to it from the previous sample (the delta preceding the next one).
      const dt = prof.timeDeltas[i + 1] ?? 0;
      if (window && (t < window[0] || t > window[1])) continue;
      const f = byId.get(prof.samples[i])!.callFrame;
      const label = `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`.trim();
      self.set(label, (self.get(label) ?? 0) + dt);
      total += dt;
    }
  }
  const rows = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([label, us]) => ({ label, ms: us / 1000, share: us / total }));
  table(
    `Self time of the main JS thread${window ? ' inside the ingest window' : ''}: top ${top} of ${self.size} frames, ${(total / 1e6).toFixed(2)} s sampled`,
    ['frame', 'self ms', '%'],
    rows.map((r) => [r.label, r.ms.toFixed(0), (r.share * 100).toFixed(1)]),
  );
  return rows;
}

if (process.argv[1] && path.resolve(process.argv[1]).endsWith(path.join('bench', 'cpuprofile-summary.ts'))) {
  const top = Number(process.argv.find((a) => a.startsWith('--top='))?.slice(6) ?? 30);
  summarizeProfiles(
    process.argv.slice(2).filter((a) => !a.startsWith('--')),
    top,
  );
}
