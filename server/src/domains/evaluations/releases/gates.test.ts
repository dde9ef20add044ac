/**
 * Release gates over HTTP: creating (exact evaluator version, identical-or-409), evaluating (readings,
 * outcomes, baselines, idempotency including concurrent requests), the decision history, listing, bad
 * input, foreign projects and scopes. Results are written through the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { COMPLETED, releaseProject } from './fixture.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

const D = (day: number) => `2026-03-${String(day).padStart(2, '0')}T00:00:00.000000Z`;
const gate = (over: Record<string, unknown> = {}) => ({ gate_id: 'g1', evaluator: { evaluator_id: 'ev', version: 1 }, release: '1.1.0', min_samples: 2, ...over });

async function decide(p: Awaited<ReturnType<typeof releaseProject>>, g: Record<string, unknown>, key?: string) {
  const c = await p.gates.create(g);
  expect(c.statusCode, c.body).toBe(201);
  const res = await p.gates.evaluate(g.gate_id as string, key === undefined ? {} : { idempotency_key: key });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().decision;
}

describe('release gates: creating', () => {
  it('"a gate binds an exact evaluator version": created with 201, the metric of that version, created_by from the credential', async () => {
    const p = await releaseProject(t);
    const res = await p.gates.create(gate({ display_name: 'Quality gate', baseline_release: '1.0.0', min_mean: 0.5, max_mean_drop: 0.1 }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      gate_id: 'g1',
      project_id: p.projectId,
      display_name: 'Quality gate',
      evaluator: { evaluator_id: 'ev', version: 1 },
      metric_name: 'quality',
      release: '1.1.0',
      baseline_release: '1.0.0',
      min_samples: 2,
      min_mean: 0.5,
      max_mean: null,
      max_mean_drop: 0.1,
      max_mean_rise: null,
      created_by: `api_key:${p.keyId}`,
      created: true,
    });
  });

  it('"references are validated when written": a missing evaluator version is 404 and nothing is stored; legacy version 0 is refused', async () => {
    const p = await releaseProject(t);
    const missing = await p.gates.create(gate({ evaluator: { evaluator_id: 'ev', version: 3 } }));
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toBe('not_found');
    expect((await p.gates.create(gate({ evaluator: { evaluator_id: 'nobody', version: 1 } }))).statusCode).toBe(404);
    const legacy = await p.gates.create(gate({ evaluator: { evaluator_id: 'ev', version: 0 } }));
    expect(legacy.statusCode).toBe(400);
    expect(legacy.json().message).toMatch(/legacy/);
    expect((await p.gates.create(gate({ evaluator: { evaluator_id: 'legacy/alice/quality', version: 1 } }))).statusCode).toBe(400);
    expect((await p.gates.list()).json().gates).toEqual([]);
  });

  it('the same gate_id with an identical definition answers the stored gate (200); a different one is 409 naming what differs', async () => {
    const p = await releaseProject(t);
    const first = await p.gates.create(gate());
    expect(first.statusCode).toBe(201);
    const again = await p.gates.create(gate());
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ created: false, created_at: first.json().created_at });
    const other = await p.gates.create(gate({ min_samples: 3 }));
    expect(other.statusCode).toBe(409);
    expect(other.json().message).toMatch(/min_samples/);
    expect((await p.gates.get('g1')).json().min_samples).toBe(2);
  });

  it('concurrent identical creates give one gate: one 201, the rest 200', async () => {
    const p = await releaseProject(t);
    const codes = (await Promise.all(Array.from({ length: 6 }, () => p.gates.create(gate({ gate_id: 'race' }))))).map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 200, 200, 200, 200, 201]);
  });

  it('bad input as an attacker writes it: 400 in our shape, and nothing is stored', async () => {
    const p = await releaseProject(t);
    const bodies: unknown[] = [
      {},
      [],
      gate({ gate_id: '' }),
      gate({ gate_id: 'Bad Id' }),
      gate({ gate_id: 'g'.repeat(300) }),
      gate({ gate_id: 7 }),
      gate({ evaluator: { evaluator_id: 'ev', version: 'latest' } }),
      gate({ evaluator: { evaluator_id: 'ev', version: 1.5 } }),
      gate({ evaluator: { evaluator_id: 'ev', version: -1 } }),
      gate({ evaluator: { evaluator_id: 'ev', version: 1, extra: 1 } }),
      gate({ evaluator: 'ev@1' }),
      gate({ release: '' }),
      gate({ release: ' 1.0.0' }),
      gate({ release: 'a\u0000b' }),
      gate({ release: 'r'.repeat(5000) }),
      gate({ release: ['1.0.0'] }),
      gate({ baseline_release: '1.1.0' }),
      gate({ min_samples: 0 }),
      gate({ min_samples: -1 }),
      gate({ min_samples: 2.5 }),
      gate({ min_samples: '2' }),
      gate({ min_samples: undefined }),
      gate({ min_mean: 'high' }),
      gate({ min_mean: 0.9, max_mean: 0.1 }),
      gate({ max_mean_drop: -0.1 }),
      gate({ max_mean_rise: -1 }),
      gate({ display_name: '   ' }),
      gate({ created_by: 'user:mallory' }),
      gate({ author_id: 'mallory' }),
      gate({ metric_name: 'other' }),
      gate({ project_id: 'elsewhere' }),
      gate({ unknown: true }),
      gate({ nested: { a: { b: { c: { d: { e: { f: {} } } } } } } }),
    ];
    for (const payload of bodies) {
      const res = await p.gates.create(payload);
      expect(res.statusCode, `${JSON.stringify(payload)?.slice(0, 80)}: ${res.body}`).toBe(400);
      expect(typeof res.json().message).toBe('string');
    }
    const malformed = await t.call({
      method: 'POST',
      url: `/api/v1/evaluation/gates?project_id=${p.projectId}`,
      key: p.key,
      headers: { 'content-type': 'application/json' },
      payload: '{"gate_id": "g1",',
    });
    expect(malformed.statusCode).toBe(400);
    expect((await p.gates.list()).json().gates).toEqual([]);
  });
});

describe('release gates: evaluating', () => {
  it('"a gate that holds a release whose mean regressed": the candidate fell more than max_mean_drop below the release before it in the series', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [0.9, 0.9, 0.8], D(1));
    await p.many('1.1.0', [0.6, 0.5, 0.7], D(2));
    const d = await decide(p, gate({ max_mean_drop: 0.1 }));
    expect(d).toMatchObject({ gate_id: 'g1', outcome: 'HOLD', reading: 'EVIDENCE', idempotency_key: 'default', decided_by: `api_key:${p.keyId}` });
    expect(d.reasons.map((r: { code: string }) => r.code)).toEqual(['mean_dropped']);
    expect(d.evidence).toMatchObject({
      evaluator: { evaluator_id: 'ev', version: 1 },
      metric_name: 'quality',
      candidate: { release: '1.1.0', sample_count: 3, excluded_counts: {} },
      baseline: { release: '1.0.0', sample_count: 3 },
      baseline_source: 'PREVIOUS_IN_SERIES',
      ordering_strategy: 'SEMANTIC_VERSION',
      thresholds: { min_samples: 2, max_mean_drop: 0.1, min_mean: null },
    });
    expect(d.evidence.candidate.mean).toBeCloseTo(0.6, 10);
    expect(d.evidence.delta_mean).toBeCloseTo(-0.2666667, 6);
  });

  it('admits a release that meets every threshold; reasons is empty', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [0.8, 0.8], D(1));
    await p.many('1.1.0', [0.75, 0.85, 0.8], D(2));
    const d = await decide(p, gate({ max_mean_drop: 0.05, min_mean: 0.7 }));
    expect(d).toMatchObject({ outcome: 'ADMIT', reading: 'EVIDENCE', reasons: [] });
  });

  it('a declared baseline_release is used instead of the previous release; min_mean and min_samples hold on their own', async () => {
    const p = await releaseProject(t);
    await p.many('0.9.0', [0.5, 0.5], D(1));
    await p.many('1.0.0', [0.95, 0.95], D(2));
    await p.many('1.1.0', [0.6], D(3));
    const d = await decide(p, gate({ baseline_release: '0.9.0', max_mean_drop: 0, min_mean: 0.7 }));
    expect(d.evidence).toMatchObject({ baseline: { release: '0.9.0', sample_count: 2 }, baseline_source: 'DECLARED', ordering_strategy: null });
    expect(d.outcome).toBe('HOLD');
    expect(d.reasons.map((r: { code: string }) => r.code)).toEqual(['insufficient_samples', 'below_min_mean']);
  });

  it('"a gate bound to version 2 reading only version-1 results reads NO_EVIDENCE" and holds', async () => {
    const p = await releaseProject(t);
    await p.many('1.1.0', [1, 1, 1], D(1));
    const d = await decide(p, gate({ evaluator: { evaluator_id: 'ev', version: 2 } }));
    expect(d).toMatchObject({ outcome: 'HOLD', reading: 'NO_EVIDENCE' });
    expect(d.evidence.candidate).toMatchObject({ sample_count: 0, mean: null, excluded_counts: { other_evaluator_version: 3 } });
    expect(d.reasons[0].code).toBe('no_evidence');
  });

  it('no results at all reads NO_EVIDENCE; a measured zero is never invented', async () => {
    const p = await releaseProject(t);
    const d = await decide(p, gate());
    expect(d).toMatchObject({ outcome: 'HOLD', reading: 'NO_EVIDENCE', evidence: { candidate: { sample_count: 0, mean: null }, delta_mean: null } });
  });

  it('"unusable evidence such as legacy or execution-less results is refused": INADMISSIBLE, and the release is held', async () => {
    const p = await releaseProject(t);
    await p.put('1.1.0', 1, { evaluatorId: 'legacy/alice/quality', evaluatorVersion: 0, mode: 'EVALUATION_MODE_LEGACY', legacySource: 'import', execution: null });
    await p.put('1.1.0', 1, { execution: null });
    const d = await decide(p, gate());
    expect(d).toMatchObject({ outcome: 'HOLD', reading: 'INADMISSIBLE', evidence: { candidate: { sample_count: 0, mean: null, excluded_counts: { legacy: 1, no_execution: 1 } } } });
    expect(d.reasons[0].code).toBe('inadmissible_evidence');
  });

  it('"FAILED and CANCELLED are refused by gates" (INADMISSIBLE); "PARTIAL still carries a real score accepted by gates"', async () => {
    const p = await releaseProject(t);
    await p.put('1.1.0', 0.9, { execution: { ...COMPLETED, job_status: 'FAILED', job_failure_class: 'model_unusable' } });
    await p.put('1.1.0', 0.9, { execution: { ...COMPLETED, job_status: 'CANCELLED', job_failure_class: 'cancelled' } });
    const held = await decide(p, gate());
    expect(held).toMatchObject({ outcome: 'HOLD', reading: 'INADMISSIBLE', evidence: { candidate: { excluded_counts: { failed: 1, cancelled: 1 } } } });
    await p.many('1.1.0', [0.8, 0.9], D(1), { execution: { ...COMPLETED, job_status: 'PARTIAL', job_failure_class: 'missing_steps' } });
    const admitted = await decide(p, gate({ gate_id: 'g2' }));
    expect(admitted).toMatchObject({ outcome: 'ADMIT', reading: 'EVIDENCE', evidence: { candidate: { sample_count: 2, excluded_counts: { failed: 1, cancelled: 1 } } } });
  });

  it('a drop threshold with nothing to compare with holds (fail closed): no earlier release, or a baseline without evidence', async () => {
    const p = await releaseProject(t);
    await p.many('1.1.0', [0.9, 0.9], D(2));
    const first = await decide(p, gate({ max_mean_drop: 0.1 }));
    expect(first).toMatchObject({ outcome: 'HOLD', evidence: { baseline: null, baseline_source: 'NONE' } });
    expect(first.reasons.map((r: { code: string }) => r.code)).toEqual(['no_baseline']);
    const declared = await decide(p, gate({ gate_id: 'g2', baseline_release: '0.1.0', max_mean_drop: 0.1 }));
    expect(declared.reasons.map((r: { code: string }) => r.code)).toEqual(['baseline_no_evidence']);
  });

  it('max_mean and max_mean_rise gate a lower-is-better metric', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [100, 100], D(1));
    await p.many('1.1.0', [150, 170], D(2));
    const d = await decide(p, gate({ max_mean: 150, max_mean_rise: 20 }));
    expect(d.reasons.map((r: { code: string }) => r.code)).toEqual(['above_max_mean', 'mean_rose']);
  });

  it('"the same key returns the original decision"; "a new key gives a fresh evidence snapshot"; the empty body is the stable default intent', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [0.9, 0.9], D(1));
    await p.many('1.1.0', [0.9, 0.9], D(2));
    const first = await decide(p, gate({ max_mean_drop: 0.1 }), 'deploy-41');
    expect(first.outcome).toBe('ADMIT');
    // The candidate regresses after the first decision.
    await p.many('1.1.0', [0.1, 0.1, 0.1, 0.1], D(3));
    const same = await p.gates.evaluate('g1', { idempotency_key: 'deploy-41' });
    expect(same.statusCode).toBe(200);
    expect(same.json()).toMatchObject({ created: false, decision: first });
    const fresh = await p.gates.evaluate('g1', { idempotency_key: 'deploy-42' });
    expect(fresh.statusCode).toBe(201);
    expect(fresh.json().decision).toMatchObject({ outcome: 'HOLD', evidence: { candidate: { sample_count: 6 } } });
    expect(fresh.json().decision.decision_id).not.toBe(first.decision_id);
    // No body and an empty body: the default key, the same decision every time.
    const none = await p.gates.evaluate('g1');
    expect(none.statusCode, none.body).toBe(201);
    const empty = await p.gates.evaluate('g1', {});
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toMatchObject({ created: false, decision: { decision_id: none.json().decision.decision_id, idempotency_key: 'default' } });
    const history = (await p.gates.get('g1')).json();
    expect(history.decisions.map((d: { idempotency_key: string }) => d.idempotency_key)).toEqual(['default', 'deploy-42', 'deploy-41']);
    expect(history).toMatchObject({ decision_count: 3, decisions_truncated: false });
  });

  it('concurrent identical evaluations record one decision: one 201, the rest answer it', async () => {
    const p = await releaseProject(t);
    await p.many('1.1.0', [0.9, 0.9], D(1));
    expect((await p.gates.create(gate())).statusCode).toBe(201);
    const answers = await Promise.all(Array.from({ length: 8 }, () => p.gates.evaluate('g1', { idempotency_key: 'same' })));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((r) => r.json().decision.decision_id)).size).toBe(1);
    const distinct = await Promise.all(Array.from({ length: 5 }, (_, i) => p.gates.evaluate('g1', { idempotency_key: `k${i}` })));
    expect(distinct.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect((await p.gates.get('g1')).json().decision_count).toBe(6);
  });

  it('bad evaluation input: 400 in our shape and no decision; a missing gate is 404', async () => {
    const p = await releaseProject(t);
    expect((await p.gates.create(gate())).statusCode).toBe(201);
    for (const payload of [
      { idempotency_key: '' },
      { idempotency_key: 'has space' },
      { idempotency_key: 'k'.repeat(300) },
      { idempotency_key: 7 },
      { idempotency_key: ['a'] },
      { idempotency_key: 'a', extra: 1 },
      { decided_by: 'user:mallory' },
      { outcome: 'ADMIT' },
      [],
    ]) {
      const res = await p.gates.evaluate('g1', payload);
      expect(res.statusCode, `${JSON.stringify(payload)}: ${res.body}`).toBe(400);
    }
    const malformed = await t.call({
      method: 'POST',
      url: `/api/v1/evaluation/gates/g1/evaluations?project_id=${p.projectId}`,
      key: p.key,
      headers: { 'content-type': 'application/json' },
      payload: '{"idempotency_key":',
    });
    expect(malformed.statusCode).toBe(400);
    expect((await p.gates.get('g1')).json().decision_count).toBe(0);
    expect((await p.gates.evaluate('nobody', {})).statusCode).toBe(404);
    expect((await p.gates.evaluate('Bad Id', {})).statusCode).toBe(400);
  });
});

describe('release gates: reading', () => {
  it('list is by gate_id with cursor paging; release and evaluator_id filter', async () => {
    const p = await releaseProject(t);
    for (const [id, release] of [['c', '2.0.0'], ['a', '1.0.0'], ['b', '2.0.0']]) expect((await p.gates.create(gate({ gate_id: id, release }))).statusCode).toBe(201);
    const first = (await p.gates.list('limit=2')).json();
    expect(first.gates.map((g: { gate_id: string }) => g.gate_id)).toEqual(['a', 'b']);
    const second = (await p.gates.list(`limit=2&cursor=${first.next_cursor}`)).json();
    expect(second).toMatchObject({ gates: [expect.objectContaining({ gate_id: 'c' })], next_cursor: null });
    expect((await p.gates.list('release=2.0.0')).json().gates.map((g: { gate_id: string }) => g.gate_id)).toEqual(['b', 'c']);
    expect((await p.gates.list('evaluator_id=other')).json().gates).toEqual([]);
    for (const q of ['limit=0', 'limit=201', 'release=', 'cursor=junk', 'release=a&release=b', `release=2.0.0&cursor=${first.next_cursor}`, 'unknown=1']) {
      expect((await p.gates.list(q)).statusCode, q).toBe(400);
    }
  });

  it('a project key naming another project is 404, and another project\'s gates are 404 exactly like missing ones', async () => {
    const a = await releaseProject(t);
    const b = await releaseProject(t);
    expect((await b.gates.create(gate())).statusCode).toBe(201);
    const missing = await a.gates.get('g1');
    expect(missing.statusCode).toBe(404);
    expect((await a.gates.evaluate('g1', {})).statusCode).toBe(404);
    const foreign = await t.call({ method: 'GET', url: `/api/v1/evaluation/gates/g1?project_id=${b.projectId}`, key: a.key });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error).toBe(missing.json().error);
    expect((await t.call({ method: 'POST', url: `/api/v1/evaluation/gates/g1/evaluations?project_id=${b.projectId}`, key: a.key, payload: {} })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `/api/v1/evaluation/gates?project_id=${b.projectId}`, key: a.key })).statusCode).toBe(404);
    expect((await b.gates.get('g1')).json().decision_count).toBe(0);
  });

  it('scopes: evals:read reads gates; creating and evaluating need evals:write (an evaluation permanently records a decision)', async () => {
    const p = await releaseProject(t);
    expect((await p.gates.create(gate())).statusCode).toBe(201);
    const reader = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'reader', scopes: ['evals:read'], project_id: p.projectId } });
    const key = reader.json().key as string;
    expect((await p.gates.get('g1', key)).statusCode).toBe(200);
    expect((await p.gates.list('', key)).statusCode).toBe(200);
    expect((await p.gates.create(gate({ gate_id: 'g2' }), key)).statusCode).toBe(403);
    expect((await p.gates.evaluate('g1', {}, key)).statusCode).toBe(403);
    const none = await projectWithKey(t, ['scores:read']);
    expect((await t.call({ method: 'GET', url: `/api/v1/evaluation/gates?project_id=${none.projectId}`, key: none.key })).statusCode).toBe(403);
    expect((await p.gates.get('g1')).json().decision_count).toBe(0);
  });
});
