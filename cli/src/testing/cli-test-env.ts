/** The setup of the CLI command tests: a fake API and an empty config home, with the environment pointing at both. */
import { startFakeApi, tempConfigHome, type FakeApi } from './fake-api.js';

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
