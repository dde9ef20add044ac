/** `svc evals datasets ...` over real HTTP against a listening test app; the promotion a person makes is seeded through a browser session. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../server/src/testing/app.js';
import { allowAllContent } from '../../../server/src/testing/content-policy.js';
import { sendAgentRun } from '../../../server/src/testing/otel-agent-run.js';
import { addPerson, signIn } from '../../../server/src/testing/people.js';
import { runInProcess, tempConfigHome } from '../testing/fake-api.js';

let t: TestApp;
let home: ReturnType<typeof tempConfigHome>;
let env: Record<string, string>;
let projectId: string;
let runId: string;
let annotationId: string;

beforeAll(async () => {
  t = await testApp();
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const p = await projectWithKey(t, ['ingest:write', 'evals:read', 'evals:write', 'scores:write']);
  projectId = p.projectId;
  await allowAllContent(t, projectId);
  runId = (await sendAgentRun({ base, format: 'json', key: p.key, content: { toolArguments: '{"q":1}', toolResult: '{"ok":true}' } })).root.spanContext().traceId;
  const admin = await signIn(t, await addPerson(t, 'admin'));
  annotationId = (await admin.call({ method: 'POST', url: `/api/v1/agent-runs/${runId}/annotations?project_id=${projectId}`, payload: { metric_name: 'ok', label: 'yes' } })).json().annotation.annotation_id;
  await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?project_id=${projectId}`, payload: { dataset_id: 'seeded' } });
  const r = await admin.call({
    method: 'POST',
    url: `/api/v1/evaluation/datasets/seeded/promotions?project_id=${projectId}`,
    payload: { subjects: [{ subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId, review_annotation_id: annotationId }] },
  });
  if (r.statusCode !== 201) throw new Error(r.body);
  home = tempConfigHome();
  env = { ...home.env, SVC_API_URL: base, SVC_API_KEY: p.key, SVC_PROJECT: p.projectId };
});
afterAll(async () => {
  await t.close();
  home.cleanup();
});

const svc = (args: string[]) => runInProcess(args, { env });
async function ok(args: string[]) {
  const r = await svc(args);
  expect(r.code, `svc ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
}

describe('svc evals datasets', () => {
  it('create, update, list, get', async () => {
    expect(await ok(['evals', 'datasets', 'create', 'cli-made', '--name', 'CLI', '--description', 'from the cli'])).toMatchObject({ project_id: projectId, dataset_id: 'cli-made', latest_version: 0 });
    expect(await ok(['evals', 'datasets', 'update', 'cli-made', '--description', 'changed'])).toMatchObject({ description: 'changed', display_name: 'CLI' });
    const list = await ok(['evals', 'datasets', 'list', '--limit', '1', '--all']);
    expect(list.datasets.map((d: { dataset_id: string }) => d.dataset_id)).toEqual(['cli-made', 'seeded']);
    expect(await ok(['evals', 'datasets', 'get', 'seeded'])).toMatchObject({ latest_version: 1, versions: [{ version: 1, item_count: 1 }] });
  });

  it('items of an exact version ("latest" is a usage error), replay with --tool/--default, remove, delete', async () => {
    expect((await svc(['evals', 'datasets', 'items', 'seeded', 'latest'])).code).toBe(2);
    const items = await ok(['evals', 'datasets', 'items', 'seeded', '1']);
    expect(items.items).toHaveLength(1);
    const itemId = items.items[0].item_id as string;
    expect(items.items[0].case.run.run_id).toBe(runId);
    const table = await svc(['evals', 'datasets', 'items', 'seeded', '1', '--output', 'table']);
    expect(table.stdout).toContain(itemId);

    const replay = await ok(['evals', 'datasets', 'replay', 'seeded', '1', itemId, '--tool', 'search=none', '--default', 'internal']);
    expect(replay.counts).toEqual({ steps: 5, tool_calls: 2, replayed: 1, stubbed: 1, nothing_recorded: 0 });
    expect(replay.sandbox_tools).toEqual(['send_email']);
    const same = await ok(['evals', 'datasets', 'replay', 'seeded', '1', itemId, '--body', JSON.stringify({ policies: [{ tool_name: 'send_email', effect: 'SANDBOX_EFFECT_INTERNAL' }, { tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }] })]);
    expect(same.plan_digest).toBe(replay.plan_digest);
    expect((await svc(['evals', 'datasets', 'replay', 'seeded', '1', itemId, '--tool', 'search=maybe'])).code).toBe(2);
    const twice = await svc(['evals', 'datasets', 'replay', 'seeded', '1', itemId, '--tool', 'search=none', '--tool', 'search=external']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('declared twice');

    // An API key cannot promote.
    const byKey = await svc(['evals', 'datasets', 'promote', 'seeded', '--run', `${runId}:${annotationId}`]);
    expect(byKey.code).not.toBe(0);
    expect(byKey.stderr).toContain('signed-in person');

    const removed = await ok(['evals', 'datasets', 'remove', 'seeded', itemId]);
    expect(removed).toMatchObject({ sealed: true, version: { version: 2, item_count: 0, change: 'removal' } });
    expect((await svc(['evals', 'datasets', 'delete', 'seeded'])).code).toBe(2);
    expect(await ok(['evals', 'datasets', 'delete', 'seeded', '--yes'])).toEqual({ deleted: true, dataset_id: 'seeded' });
  });
});
