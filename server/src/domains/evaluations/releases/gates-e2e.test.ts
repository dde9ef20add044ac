/**
 * A gate that holds a release whose mean regressed, end to end: agent runs of two releases are sent by
 * the real OpenTelemetry SDK (the release is the resource's `service.version`), scored on demand through
 * `POST /evaluation/evaluate`, then read as a release series and decided on by a gate, all over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { sendSpans } from '../../../testing/otel-agent-run.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t?.close());

describe('release gate end to end', () => {
  it('"a gate that holds a release whose mean regressed": runs of 1.1.0 fail more often than those of 1.0.0, the series shows it, a gate holds 1.1.0 and another admits 1.0.0 on min_mean', async () => {
    const p = await projectWithKey(t, ['evals:read', 'evals:write', 'agents:read', 'ingest:write']);
    const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
      t.call({ method, url: `/api/v1${url}${url.includes('?') ? '&' : '?'}project_id=${p.projectId}`, key: p.key, ...(payload !== undefined ? { payload: payload as object } : {}) });
    const sendRun = (release: string, status: string) =>
      sendSpans({ base, key: p.key, scope: 'gate-e2e', resource: { 'service.name': 'checkout-agent', 'service.version': release } }, (tracer) => {
        const root = tracer.startSpan('invoke_agent checkout', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'svc.agent.run.status': status } });
        root.end();
        return root.spanContext().traceId;
      });
    const created = await call('POST', '/evaluation/evaluators', {
      evaluator_id: 'task-success',
      display_name: 'Task success',
      metric_name: 'task_success',
      kind: 'EVALUATOR_KIND_DETERMINISTIC',
      config_json: JSON.stringify({ aggregation: 'all', assertions: [{ field: 'run.status', op: 'equals', value: 'completed' }] }),
    });
    expect(created.statusCode, created.body).toBe(201);

    const runs = [
      ...(await Promise.all(['completed', 'completed', 'completed', 'completed'].map((s) => sendRun('1.0.0', s)))),
      ...(await Promise.all(['completed', 'failed', 'failed', 'completed'].map((s) => sendRun('1.1.0', s)))),
    ];
    for (const runId of runs) {
      // A run just sent may take a moment to become readable.
      let res = await call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'task-success', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId });
      for (let i = 0; i < 20 && (res.statusCode === 404 || res.statusCode === 504); i++) {
        await new Promise((r) => setTimeout(r, 100));
        res = await call('POST', '/evaluation/evaluate', { evaluator: { evaluator_id: 'task-success', version: 1 }, subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId });
      }
      expect(res.statusCode, res.body).toBe(200);
    }

    const series = (await call('GET', '/evaluation/release-series?evaluator_id=task-success&evaluator_version=1')).json();
    expect(series).toMatchObject({
      ordering_strategy: 'SEMANTIC_VERSION',
      unreleased_present: false,
      points: [
        { release: '1.0.0', sample_count: 4, mean: 1, delta_mean: null },
        { release: '1.1.0', sample_count: 4, mean: 0.5, delta_mean: -0.5 },
      ],
    });

    const gate = await call('POST', '/evaluation/gates', { gate_id: 'ship-1-1', evaluator: { evaluator_id: 'task-success', version: 1 }, release: '1.1.0', min_samples: 3, max_mean_drop: 0.1 });
    expect(gate.statusCode, gate.body).toBe(201);
    const held = await call('POST', '/evaluation/gates/ship-1-1/evaluations', { idempotency_key: 'deploy-1' });
    expect(held.statusCode, held.body).toBe(201);
    expect(held.json().decision).toMatchObject({
      outcome: 'HOLD',
      reading: 'EVIDENCE',
      reasons: [{ code: 'mean_dropped' }],
      evidence: { candidate: { release: '1.1.0', sample_count: 4, mean: 0.5 }, baseline: { release: '1.0.0', sample_count: 4, mean: 1 }, baseline_source: 'PREVIOUS_IN_SERIES', delta_mean: -0.5 },
    });

    const ok = await call('POST', '/evaluation/gates', { gate_id: 'ship-1-0', evaluator: { evaluator_id: 'task-success', version: 1 }, release: '1.0.0', min_samples: 3, min_mean: 0.9 });
    expect(ok.statusCode).toBe(201);
    expect((await call('POST', '/evaluation/gates/ship-1-0/evaluations')).json().decision).toMatchObject({ outcome: 'ADMIT', reasons: [] });
  });
});
