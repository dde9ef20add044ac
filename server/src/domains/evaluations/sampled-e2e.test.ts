/**
 * Sampling end to end with the service's own parts: a sampling rule written through its route, agent runs
 * sent by the real OpenTelemetry SDK, one tick of the `evaluation.sampling` job with the real rules and the
 * real runner, and the results read back over HTTP with `provenance.execution` SAMPLED, the rule and its rate.
 * "Nothing is evaluated unless a rule exists"; "the same run always gets the same answer".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { sendAgentRun } from '../../testing/otel-agent-run.js';
import { selects } from './sampling/selection.js';

const clock = fixedClock(new Date(Date.now() - 60_000).toISOString());
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp({ clock, env: { SVC_EVAL_SAMPLING_SETTLE_SECONDS: '0' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t?.close());

const GATE = { aggregation: 'fraction', assertions: [{ field: 'run.status', op: 'equals', value: 'completed' }, { field: 'run.error_steps', op: 'lte', number: 0 }] };

describe('sampled evaluation: rule, job tick, results', () => {
  it('a tick evaluates the selected new runs through the runner; results carry SAMPLED with the rule id and rate; a second tick evaluates nothing again', async () => {
    const p = await projectWithKey(t, ['evals:read', 'evals:write', 'agents:read', 'ingest:write']);
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.call({ method, url: `/api/v1${url}`, key: p.key, ...(payload ? { payload } : {}) });
    expect((await call('POST', '/evaluation/evaluators', { evaluator_id: 'gate', display_name: 'Gate', metric_name: 'health', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: JSON.stringify(GATE) })).statusCode).toBe(201);

    // Runs sent before any rule exists are never evaluated ("nothing is evaluated unless a rule exists").
    const early = await sendAgentRun({ base, format: 'json', key: p.key });
    clock.set(new Date().toISOString());
    await t.ctx.evaluationSampling.tick(new Date(Date.now() + 60_000));
    expect((await call('GET', '/evaluation/results')).json().results).toEqual([]);

    const rate = 0.5;
    const put = await call('PUT', '/evaluation/sampling-rules', { rule_id: 'half', evaluator: { evaluator_id: 'gate', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', sampling_rate: rate, per_tick_limit: 100, enabled: true });
    expect(put.statusCode, put.body).toBe(201);
    await new Promise((r) => setTimeout(r, 5));
    const runs: string[] = [];
    for (let i = 0; i < 12; i++) runs.push((await sendAgentRun({ base, format: 'json', key: p.key, conversationId: `conv-s-${i}` })).root.spanContext().traceId);
    const expected = runs.filter((r) => selects('half', r, rate)).sort();

    await t.ctx.evaluationSampling.tick(new Date(Date.now() + 60_000));
    const results = (await call('GET', '/evaluation/results?mode=EVALUATION_MODE_SAMPLED')).json().results as { provenance: { subject_ref: string; execution: Record<string, unknown> }; numeric_value: number }[];
    expect(results.map((r) => r.provenance.subject_ref).sort()).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(runs.length);
    for (const r of results) {
      expect(r.provenance.execution).toMatchObject({ sampling: 'SAMPLED', sampling_rule_id: 'half', sampling_rate: rate, cost_state: 'FREE', job_status: 'COMPLETED' });
      expect(r.numeric_value).toBe(0.5); // completed, one failed tool call: one of two assertions holds
    }
    expect(results.some((r) => r.provenance.subject_ref === early.root.spanContext().traceId)).toBe(false);

    await t.ctx.evaluationSampling.tick(new Date(Date.now() + 120_000));
    expect((await call('GET', '/evaluation/results')).json().results).toHaveLength(expected.length);
  });
});
