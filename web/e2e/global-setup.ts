/**
 * One real service for the browser tests: built as `npm start` builds it (server bundle and web UI), started
 * on a free port with a fresh data dir and a bootstrap owner key. Its address and key reach the tests as
 * environment variables (Playwright's workers inherit what global setup sets).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, startServer, stopServer } from '../../server/src/testing/server-process.js';

export const OWNER_KEY = 'svc_ui_e2e_owner_key_0123456789abcdef0123';
export const PROJECT = '7c1f0e2a-4b3d-4c5e-9f60-718293a4b5c6';

export default async function globalSetup() {
  execFileSync(process.execPath, ['server/scripts/build.mjs'], { cwd: REPO_ROOT, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ui-e2e-'));
  const server = await startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: OWNER_KEY, SVC_INIT_PROJECT_ID: PROJECT });
  process.env.SVC_E2E_BASE = server.base;
  process.env.SVC_E2E_KEY = OWNER_KEY;
  process.env.SVC_E2E_PROJECT = PROJECT;
  return async () => {
    await stopServer(server, dataDir);
    const err = server.stderr().trim();
    if (err) console.log(`server stderr:\n${err.slice(-4000)}`);
  };
}
