/** `svc evals annotate|annotations` over real HTTP: a person signed in (an OAuth access token in the profile) records judgments; an API key is refused by the server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../server/src/testing/app.js';
import { addPerson, signIn } from '../../../server/src/testing/people.js';
import { connectAgent } from '../../../server/src/testing/oauth.js';
import { sendAgentRun } from '../../../server/src/testing/otel-agent-run.js';
import { configPath, updateSession } from '../config.js';
import { runInProcess, tempConfigHome } from '../testing/fake-api.js';

let t: TestApp;
let home: ReturnType<typeof tempConfigHome>;
let personEnv: Record<string, string>;
let keyEnv: Record<string, string>;
let runId: string;
let userId: string;

beforeAll(async () => {
  t = await testApp();
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const p = await projectWithKey(t, ['ingest:write', 'scores:read', 'scores:write']);
  runId = (await sendAgentRun({ base, format: 'json', key: p.key })).root.spanContext().traceId;
  const person = await addPerson(t, 'member');
  userId = person.userId;
  const { tokens } = await connectAgent(t, await signIn(t, person), { scope: 'scores:read scores:write', projectId: p.projectId });
  home = tempConfigHome();
  personEnv = { ...home.env, SVC_API_URL: base, SVC_PROJECT: p.projectId };
  updateSession(configPath(personEnv), 'default', {
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token ?? '',
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    scope: 'scores:read scores:write',
    api_url: base,
  });
  keyEnv = { ...personEnv, SVC_API_KEY: p.key };
});
afterAll(async () => {
  await t.close();
  home.cleanup();
});

describe('svc evals annotate / annotations', () => {
  it('a signed-in person records a judgment, replaces it, and reads it back', async () => {
    const first = await runInProcess(['evals', 'annotate', runId, '--metric', ' Helpfulness', '--value', '0', '--comment', 'wrong tool'], { env: personEnv });
    expect(first.code, first.stderr).toBe(0);
    const a = JSON.parse(first.stdout);
    expect(a.annotation).toMatchObject({ run_id: runId, metric_name: 'helpfulness', numeric_value: 0, author_id: userId });
    const second = await runInProcess(['evals', 'annotate', runId, '--body', '{"metric_name":"helpfulness","label":"pass"}'], { env: personEnv });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).replaced_annotation_id).toBe(a.annotation.annotation_id);
    const list = await runInProcess(['evals', 'annotations', '--subject', runId, '--metric', 'helpfulness'], { env: personEnv });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).annotations).toHaveLength(1);
    const table = await runInProcess(['evals', 'annotations', '--run', runId, '--output', 'table'], { env: personEnv });
    expect(table.stdout).toContain('helpfulness');
  });

  it('an API key is refused by the server (403), and a judgment with neither value nor label is a usage error before any request', async () => {
    const r = await runInProcess(['evals', 'annotate', runId, '--metric', 'm', '--value', '1'], { env: keyEnv });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/signed-in person/);
    const u = await runInProcess(['evals', 'annotate', runId, '--metric', 'm'], { env: personEnv });
    expect(u.code).not.toBe(0);
    expect(u.stderr).toMatch(/--value, --label or both/);
  });
});
