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

/**
 * Self time per frame over the files' samples (inside `window` when given). A process writes one file per
 * isolate (tsx's loader thread has its own): files busy less than 5 % of their sampled time are left out.
 * Shares are of the busy time (everything but `(idle)`).
 */
export function summarizeProfiles(files: string[], top = 20, window?: [number, number]): { label: string; ms: number; share: number }[] {
  const self = new Map<string, number>();
  let busy = 0;
  let sampled = 0;
  for (const file of files) {
    const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    const mine = new Map<string, number>();
    let t = prof.startTime;
    let fileTotal = 0;
    for (let i = 0; i < prof.samples.length; i++) {
      t += prof.timeDeltas[i];
      // A sample's time runs until the next sample.
      const dt = prof.timeDeltas[i + 1] ?? 0;
      if (window && (t < window[0] || t > window[1])) continue;
      const f = byId.get(prof.samples[i])!.callFrame;
      const label = `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`.trim();
      mine.set(label, (mine.get(label) ?? 0) + dt);
      fileTotal += dt;
    }
    const fileBusy = fileTotal - (mine.get('(idle)') ?? 0);
    if (fileTotal === 0 || fileBusy / fileTotal < 0.05) continue;
    for (const [k, v] of mine) if (k !== '(idle)') self.set(k, (self.get(k) ?? 0) + v);
    busy += fileBusy;
    sampled += fileTotal;
  }
  const rows = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([label, us]) => ({ label, ms: us / 1000, share: us / busy }));
  table(
    `Self time of the main JS thread${window ? ' inside the ingest window' : ''}: top ${top} of ${self.size} frames; busy ${(busy / 1e6).toFixed(2)} s of ${(sampled / 1e6).toFixed(2)} s sampled (% of busy)`,
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
