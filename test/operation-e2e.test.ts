/**
 * Operating the service as the README starts it: `npm start`, run from the directory the user is
 * in, signalled the way a process manager or a container runtime signals it (the PID it started).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { freePort, REPO_ROOT, SERVER_MAIN, startServer, stopServer } from '../server/src/testing/server-process.js';

async function waitForHealth(base: string, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!alive()) throw new Error('npm start exited before the server answered');
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error('the server did not answer /healthz within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function refused(base: string): Promise<boolean> {
  try {
    await fetch(`${base}/healthz`);
    return false;
  } catch {
    return true;
  }
}

describe('npm start', () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-npm-start-'));
  afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('keeps its data in ./data of the directory it was run from, prints a ready-to-paste block, and SIGTERM to the npm PID shuts the server down gracefully', async () => {
    const port = await freePort();
    // What a user types: `npm start`, here from another directory with --prefix so the repository stays clean.
    const npm = spawn('npm', ['--prefix', REPO_ROOT, 'start'], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_PORT: String(port), SVC_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout!.on('data', (d) => (out += String(d)));
    npm.stderr!.on('data', (d) => (out += String(d)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      npm.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForHealth(base, () => npm.exitCode === null && npm.signalCode === null);

      // SVC_DATA_DIR defaults to ./data relative to where the command ran, not to the package.
      expect(fs.existsSync(path.join(cwd, 'data', 'control.sqlite'))).toBe(true);
      expect(fs.existsSync(path.join(cwd, 'data', 'telemetry.duckdb'))).toBe(true);
      expect(fs.existsSync(path.join(REPO_ROOT, 'server', 'data'))).toBe(false);
      // The stores hold secrets: the data dir and every file in it are the server user's only.
      expect(fs.statSync(path.join(cwd, 'data')).mode & 0o777).toBe(0o700);
      for (const f of fs.readdirSync(path.join(cwd, 'data'))) expect(fs.statSync(path.join(cwd, 'data', f)).mode & 0o077, f).toBe(0);

      // The block works as pasted, on this non-default port, with the org-wide owner key and the project.
      const url = /^export SVC_API_URL=(\S+)$/m.exec(out)?.[1];
      const key = /^export SVC_API_KEY=(svc_\S+)$/m.exec(out)?.[1];
      const project = /^export SVC_PROJECT=(\S+)$/m.exec(out)?.[1];
      expect(url).toBe(base);
      const projects = await (await fetch(`${url}/api/v1/projects`, { headers: { 'x-svc-api-key': key! } })).json();
      expect(projects.projects.map((p: { id: string }) => p.id)).toEqual([project]);
      const names = await fetch(`${url}/api/v1/metrics/names?project_id=${project}`, { headers: { 'x-svc-api-key': key! } });
      expect(names.status).toBe(200);

      // Exactly the PID `npm start` created, as systemd, Docker or Kubernetes would signal it.
      npm.kill('SIGTERM');
      const end = await exited;
      expect(end.code === 0 || end.signal === 'SIGTERM').toBe(true);
      expect(out).toContain('"signal":"SIGTERM"');
      expect(out).toContain('shutting down');
      expect(out).not.toContain('unclean shutdown');
      // Nothing is left listening: the server itself ended, not only npm.
      expect(await refused(base)).toBe(true);
      // A clean shutdown checkpoints the telemetry store: no write-ahead log is left behind.
      expect(fs.existsSync(path.join(cwd, 'data', 'telemetry.duckdb.wal'))).toBe(false);
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      // Never leave a server behind when an assertion failed: its PID is in every log line.
      const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
      if (pid && !(await refused(base))) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('a first start that cannot listen', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-busy-port-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('fails before creating the owner key, so the next start on a free port still creates and prints it', async () => {
    const busy = net.createServer();
    const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as net.AddressInfo).port)));
    try {
      const child = spawn(process.execPath, [SERVER_MAIN], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr!.on('data', (d) => (err += String(d)));
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code).toBe(1);
      expect(err).toContain(`cannot listen on 127.0.0.1:${port}`);
      expect(err).not.toContain('SVC_API_KEY');
    } finally {
      busy.close();
    }
    const second = await startServer({ SVC_DATA_DIR: dataDir });
    try {
      expect(second.stderr()).toMatch(/^export SVC_API_KEY=svc_\S+$/m);
    } finally {
      await stopServer(second, dataDir);
    }
  });
});
