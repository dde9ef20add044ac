/** The setup of the CLI command tests: a fake API and an empty config home, with the environment pointing at both. */
import { afterEach, beforeEach } from 'vitest';
import { runInProcess, startFakeApi, tempConfigHome, type CliResult, type FakeApi } from './fake-api.js';

export interface CliTestEnv {
  api: FakeApi;
  tmp: ReturnType<typeof tempConfigHome>;
  /** The config home's variables, SVC_API_URL (the fake API) and a test SVC_API_KEY. */
  env: Record<string, string>;
}

export async function startCliTestEnv(): Promise<CliTestEnv> {
  const api = await startFakeApi();
  const tmp = tempConfigHome();
  return { api, tmp, env: { ...tmp.env, SVC_API_URL: api.url, SVC_API_KEY: 'test-key' } };
}

/** Takes the fields rather than the object a test started with, since a test may replace its `api`. */
export async function stopCliTestEnv({ api, tmp }: Pick<CliTestEnv, 'api' | 'tmp'>): Promise<void> {
  await api.close();
  tmp.cleanup();
}

/**
 * One fresh CLI test environment per test (registers beforeEach/afterEach), and `svc`, which runs the CLI
 * in-process against it at the fixed clock `now`. `t` is filled in before each test.
 */
export function useCliTestEnv(now: Date): {
  t: CliTestEnv;
  svc: (args: string[], opts?: { stdoutTTY?: boolean; stderrTTY?: boolean; env?: Record<string, string> }) => Promise<CliResult>;
} {
  const t = {} as CliTestEnv;
  beforeEach(async () => void Object.assign(t, await startCliTestEnv()));
  afterEach(() => stopCliTestEnv(t));
  return {
    t,
    svc: (args, opts = {}) => runInProcess(args, { env: opts.env ?? t.env, now, stdoutTTY: opts.stdoutTTY, stderrTTY: opts.stderrTTY }),
  };
}
