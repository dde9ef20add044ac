/** `svc evals calibrations create|list` over real HTTP against a listening test app. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../server/src/testing/app.js';
import { addPerson, signIn } from '../../../server/src/testing/people.js';
import { sendAgentRun } from '../../../server/src/testing/otel-agent-run.js';
import { runInProcess, tempConfigHome } from '../testing/fake-api.js';

let t: TestApp;
let home: ReturnType<typeof tempConfigHome>;
let env: Record<string, string>;
let runs: string[];

beforeAll(async () => {
  t = await testApp();
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const p = await projectWithKey(t, ['evals:read', 'evals:write', 'ingest:write']);
  home = tempConfigHome();
  env = { ...home.env, SVC_API_URL: base, SVC_API_KEY: p.key, SVC_PROJECT: p.projectId };
  const created = await t.call({
    method: 'POST',
    url: `/api/v1/evaluation/evaluators?project_id=${p.projectId}`,
    payload: { evaluator_id: 'judge', display_name: 'Judge', metric_name: 'quality', kind: 'EVALUATOR_KIND_LLM_JUDGE', config_json: JSON.stringify({ criteria: [{ name: 'h', description: 'd' }], evidence: ['run_summary'] }) },
  });
  expect(created.statusCode, created.body).toBe(201);
  const alice = await signIn(t, await addPerson(t, 'member'));
  runs = [];
  for (const [i, [judge, person]] of [[0.2, 0.1], [0.5, 0.6], [0.9, 0.8]].entries()) {
    const run = (await sendAgentRun({ base, format: 'json', key: p.key })).root.spanContext().traceId;
    runs.push(run);
    await t.ctx.control.evaluationResults.insert({
      id: `res-cli-${i}`,
      orgId: t.orgId,
      projectId: p.projectId,
      evaluatorId: 'judge',
      evaluatorVersion: 1,
      metricName: 'quality',
      mode: 'EVALUATION_MODE_ON_DEMAND',
      subjectKind: 'SUBJECT_KIND_AGENT_RUN',
      subjectRef: run,
      numericValue: judge,
      label: null,
      explanation: null,
      subjectRelease: null,
      legacySource: '',
      occurredAt: '2026-03-01T00:00:00.000000Z',
      evaluatedAt: `2026-03-01T00:00:0${i}.000Z`,
      execution: null,
    });
    const j = await alice.call({ method: 'POST', url: `/api/v1/agent-runs/${run}/annotations?project_id=${p.projectId}`, payload: { metric_name: 'quality', numeric_value: person } });
    expect(j.statusCode, j.body).toBe(201);
  }
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

describe('svc evals calibrations', () => {
  it('create with --run (repeatable and comma-separated) and --min-labels; the same again answers the stored record (created false); --file; list with filters', async () => {
    const first = await ok(['evals', 'calibrations', 'create', 'judge', '1', '--run', `${runs[0]},${runs[1]}`, '--run', runs[2], '--min-labels', '3']);
    expect(first).toMatchObject({ state: 'CALIBRATED', statistic: 'LINS_CCC', pair_count: 3, created: true, evaluator: { evaluator_id: 'judge', version: 1 } });
    expect(typeof first.agreement).toBe('number');
    const again = await ok(['evals', 'calibrations', 'create', 'judge', '1', '--run', runs.join(','), '--min-labels', '3']);
    expect(again).toMatchObject({ calibration_id: first.calibration_id, created: false });
    const file = join(home.dir, 'calibration.json');
    writeFileSync(file, JSON.stringify({ subject_refs: runs, min_labels: 4 }));
    const insufficient = await ok(['evals', 'calibrations', 'create', 'judge', '1', '--file', file]);
    expect(insufficient).toMatchObject({ state: 'INSUFFICIENT_LABELS', pair_count: 3, created: true });
    expect(insufficient).not.toHaveProperty('agreement');

    const all = await ok(['evals', 'calibrations', 'list', 'judge', '--limit', '1', '--all']);
    expect(all.calibrations.map((c: { calibration_id: string }) => c.calibration_id)).toEqual([insufficient.calibration_id, first.calibration_id]);
    expect((await ok(['evals', 'calibrations', 'list', 'judge', '--state', 'calibrated'])).calibrations).toHaveLength(1);
    expect((await ok(['evals', 'calibrations', 'list', 'judge', '--state', 'CALIBRATED,insufficient_labels', '--evaluator-version', '1'])).calibrations).toHaveLength(2);
    expect((await ok(['evals', 'calibrations', 'list', 'judge', '--evaluator-version', '2'])).calibrations).toHaveLength(0);
    const table = await runInProcess(['evals', 'calibrations', 'create', 'judge', '1', '--run', runs.join(','), '--min-labels', '3', '--output', 'table'], { env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('LINS_CCC');
    expect(table.stdout).toContain('nothing was written');
  });

  it("the server's refusals keep their exit codes: min_labels 0 in a body (1), 201 runs (1), a missing evaluator version (5)", async () => {
    const zero = await svc(['evals', 'calibrations', 'create', 'judge', '1', '--body', JSON.stringify({ subject_refs: runs, min_labels: 0 })]);
    expect(zero.code).toBe(1);
    expect(JSON.parse(zero.stderr)).toMatchObject({ error: 'invalid_request', status: 400 });
    const many = Array.from({ length: 201 }, (_, i) => i.toString(16).padStart(32, '0'));
    expect((await svc(['evals', 'calibrations', 'create', 'judge', '1', '--body', JSON.stringify({ subject_refs: many, min_labels: 1 })])).code).toBe(1);
    expect((await svc(['evals', 'calibrations', 'create', 'judge', '9', '--run', runs[0], '--min-labels', '1'])).code).toBe(5);
    expect((await svc(['evals', 'calibrations', 'list', 'nobody'])).code).toBe(5);
  });

  it('usage errors exit 2 and send nothing', async () => {
    const before = (await ok(['evals', 'calibrations', 'list', 'judge'])).calibrations.length;
    const many = Array.from({ length: 201 }, (_, i) => i.toString(16).padStart(32, '0')).join(',');
    for (const args of [
      ['evals', 'calibrations', 'create', 'judge', '1', '--run', runs[0], '--min-labels', '0'],
      ['evals', 'calibrations', 'create', 'judge', '1', '--run', runs[0], '--min-labels', '-1'],
      ['evals', 'calibrations', 'create', 'judge', '1', '--run', runs[0], '--min-labels', '1.5'],
      ['evals', 'calibrations', 'create', 'judge', '1', '--run', runs[0]],
      ['evals', 'calibrations', 'create', 'judge', '1', '--min-labels', '1'],
      ['evals', 'calibrations', 'create', 'judge', '1', '--run', 'not-a-run', '--min-labels', '1'],
      ['evals', 'calibrations', 'create', 'judge', '1', '--run', many, '--min-labels', '1'],
      ['evals', 'calibrations', 'create', 'judge', 'latest', '--run', runs[0], '--min-labels', '1'],
      ['evals', 'calibrations', 'create', 'judge', '0', '--run', runs[0], '--min-labels', '1'],
      ['evals', 'calibrations', 'create', 'judge', '1', '--body', '{}', '--run', runs[0]],
      ['evals', 'calibrations', 'create', 'judge', '1', '--body', 'not json'],
      ['evals', 'calibrations', 'create', 'judge', '1', '--body', '[1]'],
      ['evals', 'calibrations', 'list', 'judge', '--state', 'bogus'],
      ['evals', 'calibrations', 'list', 'judge', '--limit', '201'],
      ['evals', 'calibrations', 'list', 'judge', '--evaluator-version', 'latest'],
    ])
      expect((await svc(args)).code, args.join(' ').slice(0, 120)).toBe(2);
    expect((await ok(['evals', 'calibrations', 'list', 'judge'])).calibrations).toHaveLength(before);
  });
});
