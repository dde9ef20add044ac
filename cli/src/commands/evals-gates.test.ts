/** `svc evals release-series` and `svc evals gates ...` over real HTTP against a listening test app. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../server/src/testing/app.js';
import type { ResultRecord } from '../../../server/src/domains/evaluations/results/store.js';
import { runInProcess, tempConfigHome } from '../testing/fake-api.js';

let t: TestApp;
let home: ReturnType<typeof tempConfigHome>;
let env: Record<string, string>;
let projectId: string;
let seq = 0;

const put = (release: string, value: number, occurredAt: string) =>
  t.ctx.control.evaluationResults.insert({
    id: `cli-${++seq}`,
    orgId: t.orgId,
    projectId,
    evaluatorId: 'quality',
    evaluatorVersion: 1,
    metricName: 'quality',
    mode: 'EVALUATION_MODE_SAMPLED',
    subjectKind: 'SUBJECT_KIND_AGENT_RUN',
    subjectRef: seq.toString(16).padStart(32, '0'),
    numericValue: value,
    label: null,
    explanation: null,
    subjectRelease: release,
    legacySource: '',
    occurredAt,
    evaluatedAt: occurredAt.replace('000000Z', '000Z'),
    execution: { sampling: 'SAMPLED', cost_state: 'FREE', charged_cost_nano_usd: 0, input_tokens: 0, output_tokens: 0, judge_model_state: 'NOT_APPLICABLE', job_status: 'COMPLETED' },
  } satisfies ResultRecord);

beforeAll(async () => {
  t = await testApp();
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const p = await projectWithKey(t, ['evals:read', 'evals:write']);
  projectId = p.projectId;
  home = tempConfigHome();
  env = { ...home.env, SVC_API_URL: base, SVC_API_KEY: p.key, SVC_PROJECT: p.projectId };
  const ev = await t.call({
    method: 'POST',
    url: `/api/v1/evaluation/evaluators?project_id=${projectId}`,
    payload: { evaluator_id: 'quality', display_name: 'Q', metric_name: 'quality', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: '{"measurement":"run.duration_ms"}' },
  });
  if (ev.statusCode !== 201) throw new Error(ev.body);
  for (const v of [0.9, 0.9]) await put('1.9.0', v, '2026-03-01T00:00:00.000000Z');
  for (const v of [0.5, 0.6]) await put('1.10.0', v, '2026-02-01T00:00:00.000000Z');
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

describe('svc evals release-series and gates', () => {
  it('release-series pins --evaluator id@version; semantic ordering puts 1.10.0 after 1.9.0; a table shows deltas', async () => {
    const s = await ok(['evals', 'release-series', '--evaluator', 'quality@1']);
    expect(s.ordering_strategy).toBe('SEMANTIC_VERSION');
    expect(s.points.map((p: { release: string }) => p.release)).toEqual(['1.9.0', '1.10.0']);
    const table = await svc(['evals', 'release-series', '--evaluator', 'quality@1', '--output', 'table']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('SEMANTIC_VERSION');
    expect(table.stdout).toMatch(/1\.10\.0\s+2\s+0\.55\s+-0\.35/);
    expect((await svc(['evals', 'release-series'])).code).toBe(2);
    expect((await svc(['evals', 'release-series', '--evaluator', 'quality'])).code).toBe(2);
    expect((await svc(['evals', 'release-series', '--evaluator', 'quality@7'])).code).toBe(5);
  });

  it('gates create (--body and --file), list, evaluate (default intent and a key), get with history; --fail-on-hold exits 1 on HOLD', async () => {
    const created = await ok(['evals', 'gates', 'create', '--body', JSON.stringify({ gate_id: 'ship', evaluator: { evaluator_id: 'quality', version: 1 }, release: '1.10.0', min_samples: 2, max_mean_drop: 0.1 })]);
    expect(created).toMatchObject({ gate_id: 'ship', created: true, baseline_release: null });
    const file = join(home.dir, 'gate.json');
    writeFileSync(file, JSON.stringify({ gate_id: 'ship', evaluator: { evaluator_id: 'quality', version: 1 }, release: '1.10.0', min_samples: 2, max_mean_drop: 0.1 }));
    expect(await ok(['evals', 'gates', 'create', '--file', file])).toMatchObject({ created: false });
    expect((await ok(['evals', 'gates', 'list', '--release', '1.10.0'])).gates.map((g: { gate_id: string }) => g.gate_id)).toEqual(['ship']);

    const first = await ok(['evals', 'gates', 'evaluate', 'ship']);
    expect(first).toMatchObject({ created: true, decision: { outcome: 'HOLD', reading: 'EVIDENCE', idempotency_key: 'default', reasons: [{ code: 'mean_dropped' }] } });
    expect(await ok(['evals', 'gates', 'evaluate', 'ship'])).toMatchObject({ created: false, decision: { decision_id: first.decision.decision_id } });
    const held = await svc(['evals', 'gates', 'evaluate', 'ship', '--idempotency-key', 'deploy-7', '--fail-on-hold']);
    expect(held.code).toBe(1);
    expect(held.stderr).toContain('release_held');
    const got = await ok(['evals', 'gates', 'get', 'ship']);
    expect(got.decisions.map((d: { idempotency_key: string }) => d.idempotency_key)).toEqual(['deploy-7', 'default']);
    const table = await svc(['evals', 'gates', 'get', 'ship', '--output', 'table']);
    expect(table.stdout).toContain('mean_dropped');
  });

  it('refusals keep their exit codes: a missing evaluator version (5), a different definition (1), a missing gate (5), a bad body (2)', async () => {
    expect((await svc(['evals', 'gates', 'create', '--body', JSON.stringify({ gate_id: 'x', evaluator: { evaluator_id: 'quality', version: 9 }, release: 'r', min_samples: 1 })])).code).toBe(5);
    const differs = await svc(['evals', 'gates', 'create', '--body', JSON.stringify({ gate_id: 'ship', evaluator: { evaluator_id: 'quality', version: 1 }, release: '1.10.0', min_samples: 3 })]);
    expect(differs.code).toBe(1);
    expect(differs.stderr).toContain('min_samples');
    expect((await svc(['evals', 'gates', 'evaluate', 'nobody'])).code).toBe(5);
    expect((await svc(['evals', 'gates', 'create', '--body', '[1]'])).code).toBe(2);
    expect((await svc(['evals', 'gates', 'create'])).code).toBe(2);
  });
});
