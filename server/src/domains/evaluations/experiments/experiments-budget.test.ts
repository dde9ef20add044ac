/**
 * An experiment's run and the organization's daily evaluation budget (its own app: the budget is
 * organization-wide): "429 mid-run: stop, report what was done, a second run continues".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { sendAgentRun } from '../../../testing/otel-agent-run.js';
import { datasetOf, useDatasets } from './test-datasets.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  useDatasets(t);
});
afterAll(async () => t?.close());

describe('experiment run and the daily budget', () => {
  it('the budget runs out mid-run: the call stops (stopped budget_exhausted), reports what it scored and what remains; once the budget allows, the next run continues and scores nothing twice', async () => {
    const p = await projectWithKey(t, ['evals:read', 'evals:write', 'ingest:write', 'agents:read']);
    const call = (method: 'GET' | 'POST', url: string, payload?: object) => t.call({ method, url: `/api/v1${url}`, key: p.key, ...(payload ? { payload } : {}) });
    const gate = { aggregation: 'all', assertions: [{ field: 'run.step_count', op: 'gte', number: 1 }] };
    expect((await call('POST', '/evaluation/evaluators', { evaluator_id: 'steps', display_name: 's', metric_name: 'steps', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: JSON.stringify(gate) })).statusCode).toBe(201);
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) runs.push((await sendAgentRun({ base, format: 'json', key: p.key })).root.spanContext().traceId);
    const ds = await datasetOf(t, p, runs);
    expect((await call('POST', '/evaluation/experiments', { experiment_id: 'b', display_name: 'b', dataset: { dataset_id: ds.datasetId, version: ds.version }, evaluators: [{ evaluator_id: 'steps', version: 1 }] })).statusCode).toBe(201);
    expect((await call('POST', '/evaluation/experiments/b/trials', { trial_id: 'base', role: 'TRIAL_ROLE_BASELINE', label: 'x' })).statusCode).toBe(201);

    const budget = (n: number) => t.call({ method: 'PUT', url: '/api/v1/evaluation/budget', payload: { daily_limit_nano_usd: 0, daily_evaluation_limit: n } });
    expect((await budget(3)).statusCode).toBe(200);
    const first = await call('POST', '/evaluation/experiments/b/run', {});
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ asked: 3, scored: 3, stopped: 'budget_exhausted', truncated: true, remaining: 1, complete: false });
    expect((await call('GET', '/evaluation/results?mode=EVALUATION_MODE_EXPERIMENT')).json().results).toHaveLength(3);

    expect((await budget(100)).statusCode).toBe(200);
    const second = (await call('POST', '/evaluation/experiments/b/run', {})).json();
    expect(second).toMatchObject({ asked: 1, scored: 1, stopped: null, remaining: 0, complete: true });
    expect((await call('GET', '/evaluation/results?mode=EVALUATION_MODE_EXPERIMENT')).json().results).toHaveLength(4);
  });
});
