/** Test fixture of release series and gate tests: a project with an evaluator (versions 1 and 2) and results written through the store. */
import { expect } from 'vitest';
import { projectWithKey, type TestApp } from '../../../testing/app.js';
import type { ResultRecord } from '../results/store.js';

let seq = 0;
export const runId = (i: number) => i.toString(16).padStart(32, '0');

export const COMPLETED = {
  sampling: 'NOT_SAMPLED' as const,
  cost_state: 'FREE' as const,
  charged_cost_nano_usd: 0,
  input_tokens: 0,
  output_tokens: 0,
  judge_model_state: 'NOT_APPLICABLE' as const,
  job_status: 'COMPLETED' as const,
};

/** A project with evaluator `ev` (versions 1 and 2, metric `quality`), a key of `scopes`, and helpers. */
export async function releaseProject(t: TestApp, scopes = ['evals:read', 'evals:write']) {
  const p = await projectWithKey(t, scopes);
  const q = `?project_id=${p.projectId}`;
  const create = await t.call({
    method: 'POST',
    url: `/api/v1/evaluation/evaluators${q}`,
    payload: { evaluator_id: 'ev', display_name: 'Quality', metric_name: 'quality', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: '{"measurement":"run.duration_ms"}' },
  });
  expect(create.statusCode, create.body).toBe(201);
  const v2 = await t.call({
    method: 'POST',
    url: `/api/v1/evaluation/evaluators/ev/versions${q}`,
    payload: { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: '{"measurement":"safety.error_steps"}' },
  });
  expect(v2.statusCode, v2.body).toBe(201);

  /** Writes one result (a fresh subject each time); `release` null: the run declared none. */
  const put = async (release: string | null, value: number | null, over: Partial<ResultRecord> = {}) => {
    seq++;
    const r: ResultRecord = {
      id: `rg-${String(seq).padStart(7, '0')}`,
      orgId: t.orgId,
      projectId: p.projectId,
      evaluatorId: 'ev',
      evaluatorVersion: 1,
      metricName: 'quality',
      mode: 'EVALUATION_MODE_SAMPLED',
      subjectKind: 'SUBJECT_KIND_AGENT_RUN',
      subjectRef: runId(seq),
      numericValue: value,
      label: null,
      explanation: null,
      subjectRelease: release,
      legacySource: '',
      occurredAt: '2026-03-01T00:00:00.000000Z',
      evaluatedAt: new Date(Date.UTC(2026, 2, 1) + seq * 1000).toISOString(),
      execution: COMPLETED,
      ...over,
    };
    expect(await t.ctx.control.evaluationResults.insert(r)).toBe(true);
    return r;
  };
  /** `n` results of one release with the given values (cycled), at `occurredAt`. */
  const many = async (release: string | null, values: number[], occurredAt: string, over: Partial<ResultRecord> = {}) => {
    for (const v of values) await put(release, v, { occurredAt, ...over });
  };
  const series = (query: string, key = p.key) => t.call({ method: 'GET', url: `/api/v1/evaluation/release-series?project_id=${p.projectId}&${query}`, key });
  const gates = {
    create: (payload: unknown, key = p.key) => t.call({ method: 'POST', url: `/api/v1/evaluation/gates${q}`, key, payload: payload as object }),
    list: (query = '', key = p.key) => t.call({ method: 'GET', url: `/api/v1/evaluation/gates${q}${query ? `&${query}` : ''}`, key }),
    get: (id: string, key = p.key) => t.call({ method: 'GET', url: `/api/v1/evaluation/gates/${id}${q}`, key }),
    evaluate: (id: string, payload?: unknown, key = p.key) =>
      t.call({ method: 'POST', url: `/api/v1/evaluation/gates/${id}/evaluations${q}`, key, ...(payload === undefined ? {} : { payload: payload as object }) }),
  };
  return { ...p, put, many, series, gates };
}
