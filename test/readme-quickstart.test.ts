/**
 * The README quickstart is executable truth: its `sh` blocks run here, verbatim and in order, as a new
 * user would type them, against a server on a non-default port. The only things this test adds are
 * what a user's machine would have: a free port (SVC_PORT), a data directory (SVC_DATA_DIR), a
 * private config home for the CLI, and the paste of the export lines the first start prints.
 *
 * Markers (HTML comments on the line before a block) say how a block runs:
 *   <!-- quickstart: server -->              started in the background; the test waits for /healthz
 *   <!-- quickstart: until-interrupted -->   runs a few seconds, then gets Ctrl-C (SIGINT) and must exit 0
 *   <!-- quickstart: skip -->                not run here (the test suite's own command)
 * Every other `sh` block must exit 0; the shell state (variables) carries from one block to the next.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT } from '../server/src/testing/server-process.js';

type Mode = 'run' | 'server' | 'until-interrupted' | 'skip';
interface Block {
  mode: Mode;
  code: string;
}

/** The `sh` blocks of the README's "Quickstart" section, with their markers. */
export function quickstartBlocks(readme: string): Block[] {
  const start = readme.indexOf('\n## Quickstart');
  if (start < 0) throw new Error('the README has no "## Quickstart" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const blocks: Block[] = [];
  const re = /(?:<!-- quickstart: ([a-z-]+) -->\s*\n)?```sh\n([\s\S]*?)```/g;
  for (let m = re.exec(section); m; m = re.exec(section)) {
    const mode = (m[1] ?? 'run') as Mode;
    if (!['run', 'server', 'until-interrupted', 'skip'].includes(mode)) throw new Error(`unknown quickstart marker "${mode}"`);
    blocks.push({ mode, code: m[2] });
  }
  return blocks;
}

describe('README quickstart', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-quickstart-'));
  const state = path.join(work, 'state.sh');
  let serverPid: number | undefined;
  afterAll(() => {
    if (serverPid) {
      try {
        process.kill(serverPid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('runs every command of the quickstart in order against a server on a non-default port', async () => {
    const blocks = quickstartBlocks(fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
    expect(blocks.filter((b) => b.mode === 'server')).toHaveLength(1);
    const port = await freePort();
    expect(port).not.toBe(8080);
    const env = {
      PATH: process.env.PATH,
      HOME: work,
      XDG_CONFIG_HOME: path.join(work, 'config'),
      SVC_PORT: String(port),
      SVC_DATA_DIR: path.join(work, 'data'),
      SVC_LOG_LEVEL: 'warn',
      // the user's npm cache (a fresh HOME would make `npm install` fetch everything again)
      npm_config_cache: path.join(os.homedir(), '.npm'),
    };
    fs.writeFileSync(state, '');
    // Each block runs in bash with the variables the earlier ones left, like one terminal session.
    const script = (code: string) => `set -euo pipefail\nsource ${JSON.stringify(state)}\n${code}\nexport -p > ${JSON.stringify(state)}\n`;

    for (const [i, block] of blocks.entries()) {
      const where = `quickstart block ${i + 1}:\n${block.code}`;
      if (block.mode === 'skip') continue;
      if (block.mode === 'server') {
        const server = spawn('bash', ['-c', `set -euo pipefail\n${block.code}`], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        server.stdout!.on('data', (d) => (out += String(d)));
        server.stderr!.on('data', (d) => (out += String(d)));
        const deadline = Date.now() + 180_000;
        for (;;) {
          expect(server.exitCode, `${where}\n${out}`).toBeNull();
          const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
          if (ok && /^export SVC_PROJECT=/m.test(out)) break;
          if (Date.now() > deadline) throw new Error(`${where}\nthe server did not come up:\n${out}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        serverPid = Number(/"pid":(\d+)/.exec(out)?.[1]) || server.pid;
        // The user pastes the export lines the first start printed.
        const pasted = out.split('\n').filter((l) => l.startsWith('export SVC_'));
        expect(pasted.map((l) => l.split('=')[0])).toEqual(['export SVC_API_URL', 'export SVC_API_KEY', 'export SVC_PROJECT']);
        expect(pasted[0]).toBe(`export SVC_API_URL=http://127.0.0.1:${port}`);
        fs.appendFileSync(state, `${pasted.join('\n')}\n`);
        continue;
      }
      if (block.mode === 'until-interrupted') {
        const child = spawn('bash', ['-c', script(block.code)], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        let out = '';
        child.stdout!.on('data', (d) => (out += String(d)));
        child.stderr!.on('data', (d) => (out += String(d)));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          child.on('exit', (code, signal) => resolve({ code, signal })),
        );
        await new Promise((r) => setTimeout(r, 4000));
        expect(child.exitCode, `${where}\nended before Ctrl-C:\n${out}`).toBeNull();
        process.kill(-child.pid!, 'SIGINT'); // Ctrl-C reaches the whole foreground process group
        // svc itself exits 0 on Ctrl-C; npx then ends by the same signal (as npm does), so the shell may too.
        const end = await exited;
        expect(end.code === 0 || end.signal === 'SIGINT', `${where}\n${JSON.stringify(end)}\n${out}`).toBe(true);
        expect(out, where).not.toMatch(/"error"|Error/);
        continue;
      }
      const r = spawnSync('bash', ['-c', script(block.code)], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, `${where}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
    }
  }, 600_000);
});
