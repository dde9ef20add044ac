/** `svc evals evaluators ...` and `svc evals rules ...` over real HTTP against a listening test app. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../server/src/testing/app.js';
import { runInProcess, tempConfigHome } from '../testing/fake-api.js';

let t: TestApp;
let home: ReturnType<typeof tempConfigHome>;
let env: Record<string, string>;
let projectId: string;

beforeAll(async () => {
  t = await testApp();
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const p = await projectWithKey(t, ['evals:read', 'evals:write']);
  projectId = p.projectId;
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

describe('svc evals evaluators', () => {
  it('create with flags, get, versions add (flags and --file), versions get, list', async () => {
    const created = await ok(['evals', 'evaluators', 'create', '--id', 'latency', '--name', 'Latency', '--metric', 'latency_ms', '--kind', 'deterministic', '--config', '{"measurement":"run.duration_ms"}']);
    expect(created).toMatchObject({ project_id: projectId, evaluator_id: 'latency', kind: 'EVALUATOR_KIND_DETERMINISTIC', latest_version: 1, versions: [1] });
    expect(created.latest.config_json).toBe('{"measurement":"run.duration_ms"}');

    const v2 = await ok(['evals', 'evaluators', 'versions', 'add', 'latency', '--kind', 'EVALUATOR_KIND_DETERMINISTIC', '--config', '{"measurement":"run.cost_nanos"}', '--metric', 'cost']);
    expect(v2).toMatchObject({ version: 2, metric_name: 'cost', created: true });
    const file = join(home.dir, 'v3.json');
    // A config_json object in a body file is sent serialized.
    writeFileSync(file, JSON.stringify({ kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: { aggregation: 'all', assertions: [{ field: 'run.status', op: 'equals', value: 'completed' }] } }));
    const v3 = await ok(['evals', 'evaluators', 'versions', 'add', 'latency', '--file', file]);
    expect(v3).toMatchObject({ version: 3, created: true });
    expect(JSON.parse(v3.config_json)).toEqual({ aggregation: 'all', assertions: [{ field: 'run.status', op: 'equals', value: 'completed' }] });

    expect(await ok(['evals', 'evaluators', 'versions', 'get', 'latency', '1'])).toMatchObject({ version: 1, config_json: '{"measurement":"run.duration_ms"}' });
    expect(await ok(['evals', 'evaluators', 'get', 'latency'])).toMatchObject({ latest_version: 3, versions: [1, 2, 3] });

    await ok(['evals', 'evaluators', 'create', '--body', JSON.stringify({ evaluator_id: 'judge', display_name: 'Judge', metric_name: 'helpful', kind: 'EVALUATOR_KIND_LLM_JUDGE', config_json: { criteria: [{ name: 'h', description: 'd' }], evidence: ['run_summary'] } })]);
    const list = await ok(['evals', 'evaluators', 'list', '--kind', 'llm_judge,deterministic', '--limit', '1', '--all']);
    expect(list.evaluators.map((e: { evaluator_id: string }) => e.evaluator_id)).toEqual(['judge', 'latency']);
    expect((await ok(['evals', 'evaluators', 'list', '--kind', 'llm_judge'])).evaluators).toHaveLength(1);
  });

  it('the server\'s refusals come back with their exit codes: an invalid configuration (1, naming its reason), a missing version (5)', async () => {
    const bad = await svc(['evals', 'evaluators', 'create', '--id', 'bad', '--name', 'B', '--metric', 'm', '--kind', 'deterministic', '--config', '{"measurement":"run.tokens"}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('measurement_unknown');
    expect((await svc(['evals', 'evaluators', 'versions', 'get', 'nobody', '3'])).code).toBe(5);
    expect((await svc(['evals', 'evaluators', 'get', 'nobody'])).code).toBe(5);
  });

  it('usage errors exit 2 and send nothing the server would store', async () => {
    const cases = [
      ['evals', 'evaluators', 'versions', 'get', 'latency', 'latest'],
      ['evals', 'evaluators', 'versions', 'get', 'latency', '0'],
      ['evals', 'evaluators', 'versions', 'get', 'latency', '1.0'],
      ['evals', 'evaluators', 'create', '--id', 'x', '--name', 'X'],
      ['evals', 'evaluators', 'create', '--id', 'x', '--name', 'X', '--metric', 'm', '--kind', 'unspecified', '--config', '{}'],
      ['evals', 'evaluators', 'create', '--body', '{}', '--id', 'x'],
      ['evals', 'evaluators', 'create', '--body', 'not json'],
      ['evals', 'evaluators', 'versions', 'add', 'latency', '--config', '{}'],
      ['evals', 'rules', 'delete', 'r1'],
      ['evals', 'rules', 'list', '--enabled', 'maybe'],
      ['evals', 'rules', 'put'],
    ];
    for (const args of cases) expect((await svc(args)).code, args.join(' ')).toBe(2);
    expect((await ok(['evals', 'evaluators', 'list'])).evaluators.map((e: { evaluator_id: string }) => e.evaluator_id)).not.toContain('x');
  });
});

describe('svc evals rules', () => {
  it('put (created, then replaced), list with filters, delete --yes; a missing rule exits 5', async () => {
    await ok(['evals', 'evaluators', 'create', '--id', 'ruled', '--name', 'R', '--metric', 'm', '--kind', 'deterministic', '--config', '{"measurement":"run.duration_ms"}']);
    const rule = { rule_id: 'nightly', evaluator: { evaluator_id: 'ruled', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', sampling_rate: 0.2, per_tick_limit: 10, enabled: true };
    expect(await ok(['evals', 'rules', 'put', '--body', JSON.stringify(rule)])).toMatchObject({ rule_id: 'nightly', created: true, active: true });
    expect(await ok(['evals', 'rules', 'put', '--body', JSON.stringify({ ...rule, enabled: false })])).toMatchObject({ created: false, enabled: false, active: false });
    expect((await ok(['evals', 'rules', 'list', '--enabled', 'false', '--evaluator', 'ruled'])).sampling_rules.map((r: { rule_id: string }) => r.rule_id)).toEqual(['nightly']);
    expect((await ok(['evals', 'rules', 'list', '--enabled', 'true'])).sampling_rules).toEqual([]);
    const missingVersion = await svc(['evals', 'rules', 'put', '--body', JSON.stringify({ ...rule, rule_id: 'v9', evaluator: { evaluator_id: 'ruled', version: 9 } })]);
    expect(missingVersion.code).toBe(5);
    expect(await ok(['evals', 'rules', 'delete', 'nightly', '--yes'])).toEqual({ deleted: true, rule_id: 'nightly' });
    expect((await svc(['evals', 'rules', 'delete', 'nightly', '--yes'])).code).toBe(5);
    expect((await ok(['evals', 'rules', 'list'])).sampling_rules).toEqual([]);
  });
});
