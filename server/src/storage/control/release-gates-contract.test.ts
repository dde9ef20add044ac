/** The release gate store's contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultRecord } from '../../domains/evaluations/results/store.js';
import type { DecisionRecord, GateRecord } from '../../domains/evaluations/releases/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const EXEC = { sampling: 'SAMPLED' as const, cost_state: 'FREE' as const, charged_cost_nano_usd: 0, input_tokens: 0, output_tokens: 0, judge_model_state: 'NOT_APPLICABLE' as const, job_status: 'COMPLETED' as const };
let n = 0;
const result = (over: Partial<ResultRecord>): ResultRecord => {
  n++;
  return {
    id: `r${n}`,
    orgId: 'o1',
    projectId: 'p1',
    evaluatorId: 'ev',
    evaluatorVersion: 1,
    metricName: 'quality',
    mode: 'EVALUATION_MODE_SAMPLED',
    subjectKind: 'SUBJECT_KIND_AGENT_RUN',
    subjectRef: `run-${n}`,
    numericValue: 1,
    label: null,
    explanation: null,
    subjectRelease: '1.0.0',
    legacySource: '',
    occurredAt: '2026-03-01T00:00:00.000000Z',
    evaluatedAt: '2026-03-02T00:00:00.000Z',
    execution: EXEC,
    ...over,
  };
};
const gate = (over: Partial<GateRecord>): GateRecord => ({
  orgId: 'o1',
  projectId: 'p1',
  gateId: 'g',
  displayName: 'G',
  evaluatorId: 'ev',
  evaluatorVersion: 1,
  metricName: 'quality',
  release: '1.0.0',
  baselineRelease: null,
  minSamples: 1,
  minMean: 0.5,
  maxMean: null,
  maxMeanDrop: 0.25,
  maxMeanRise: null,
  createdAt: '2026-03-01T00:00:00.000Z',
  createdBy: 'user:u1',
  ...over,
});
const decision = (over: Partial<DecisionRecord>): Omit<DecisionRecord, 'seq'> => ({
  decisionId: `d${++n}`,
  projectId: 'p1',
  gateId: 'g',
  idempotencyKey: 'default',
  decidedAt: '2026-03-03T00:00:00.000Z',
  decidedBy: 'user:u1',
  outcome: 'HOLD',
  reading: 'NO_EVIDENCE',
  reasons: [{ code: 'no_evidence', message: 'none' }],
  evidence: { candidate: { sample_count: 0, mean: null } },
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('release gate store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('groups admissible results by release in the database: counts, means, first and last run time; the unreleased aggregate apart; excluded counted by class', async () => {
    const s = { projectId: 'pa', evaluatorId: 'ev', evaluatorVersion: 1 };
    const put = (over: Partial<ResultRecord>) => store.evaluationResults.insert(result({ projectId: 'pa', ...over }));
    await put({ numericValue: 0.5, occurredAt: '2026-03-01T00:00:00.000000Z' });
    await put({ numericValue: 1, occurredAt: '2026-03-04T00:00:00.000000Z', execution: { ...EXEC, job_status: 'PARTIAL' } });
    await put({ subjectRelease: '2.0.0', numericValue: 0.25, occurredAt: '2026-03-02T00:00:00.000000Z', subjectKind: 'SUBJECT_KIND_AGENT_STEP' });
    await put({ subjectRelease: null, numericValue: 0.1 });
    await put({ execution: null });
    await put({ execution: { ...EXEC, job_status: 'FAILED' } });
    await put({ execution: { ...EXEC, job_status: 'CANCELLED' } });
    await put({ mode: 'EVALUATION_MODE_EXPERIMENT' });
    await put({ numericValue: null, label: 'ok' });
    await put({ subjectKind: 'SUBJECT_KIND_AGENT_SESSION' });
    await put({ evaluatorVersion: 2 });
    const points = await store.releaseGates.releasePoints(s, 10);
    expect(points).toEqual([
      { release: '2.0.0', sampleCount: 1, mean: 0.25, firstObservedAt: '2026-03-02T00:00:00.000000Z', lastObservedAt: '2026-03-02T00:00:00.000000Z' },
      { release: '1.0.0', sampleCount: 2, mean: 0.75, firstObservedAt: '2026-03-01T00:00:00.000000Z', lastObservedAt: '2026-03-04T00:00:00.000000Z' },
    ]);
    expect(await store.releaseGates.releasePoints(s, 1)).toHaveLength(1);
    expect(await store.releaseGates.unreleased(s)).toMatchObject({ release: null, sampleCount: 1, mean: 0.1 });
    expect(await store.releaseGates.unreleased({ ...s, evaluatorVersion: 3 })).toBeUndefined();
    expect(await store.releaseGates.excluded(s)).toEqual({ no_execution: 1, failed: 1, cancelled: 1, experiment: 1, not_scored: 1, not_run_or_step: 1 });
    expect(await store.releaseGates.releasePoints({ ...s, start: '2026-03-03T00:00:00.000000Z' }, 10)).toEqual([
      expect.objectContaining({ release: '1.0.0', sampleCount: 1, mean: 1 }),
    ]);
    expect(await store.releaseGates.releasePoints({ ...s, metricName: 'other' }, 10)).toEqual([]);
  });

  it('release evidence counts other versions and legacy results of the metric, and reads only the exact version', async () => {
    const put = (over: Partial<ResultRecord>) => store.evaluationResults.insert(result({ projectId: 'pe', ...over }));
    await put({ numericValue: 0.4 });
    await put({ numericValue: 0.6 });
    await put({ evaluatorVersion: 2 });
    await put({ evaluatorId: 'legacy/alice/quality', evaluatorVersion: 0, mode: 'EVALUATION_MODE_LEGACY', execution: null });
    await put({ evaluatorId: 'legacy/alice/other', evaluatorVersion: 0, mode: 'EVALUATION_MODE_LEGACY', metricName: 'other', execution: null });
    await put({ evaluatorId: 'another', numericValue: 0 });
    await put({ subjectRelease: '9.9.9' });
    const e = await store.releaseGates.releaseEvidence({ projectId: 'pe', evaluatorId: 'ev', evaluatorVersion: 1, metricName: 'quality' }, '1.0.0');
    expect(e.admissible).toMatchObject({ release: '1.0.0', sampleCount: 2, mean: 0.5 });
    expect(e.excluded).toEqual({ other_evaluator_version: 1, legacy: 1 });
    const none = await store.releaseGates.releaseEvidence({ projectId: 'pe', evaluatorId: 'ev', evaluatorVersion: 3, metricName: 'quality' }, '1.0.0');
    expect(none).toEqual({ excluded: { other_evaluator_version: 3, legacy: 1 } });
  });

  it('a gate is written once per project and id; listing is by id with filters', async () => {
    expect(await store.releaseGates.createGate(gate({ projectId: 'pg', gateId: 'b' }))).toBe(true);
    expect(await store.releaseGates.createGate(gate({ projectId: 'pg', gateId: 'b', minSamples: 9 }))).toBe(false);
    expect(await store.releaseGates.createGate(gate({ projectId: 'pg', gateId: 'a', release: '2.0.0', baselineRelease: '1.0.0', maxMeanDrop: null }))).toBe(true);
    expect(await store.releaseGates.createGate(gate({ projectId: 'ph', gateId: 'b' }))).toBe(true);
    expect(await store.releaseGates.getGate('pg', 'b')).toEqual(gate({ projectId: 'pg', gateId: 'b' }));
    expect(await store.releaseGates.getGate('pg', 'a')).toMatchObject({ baselineRelease: '1.0.0', maxMeanDrop: null });
    expect(await store.releaseGates.getGate('pg', 'zz')).toBeUndefined();
    expect((await store.releaseGates.listGates({ projectId: 'pg' }, { limit: 1 })).map((g) => g.gateId)).toEqual(['a', 'b']);
    expect((await store.releaseGates.listGates({ projectId: 'pg' }, { limit: 5, after: 'a' })).map((g) => g.gateId)).toEqual(['b']);
    expect((await store.releaseGates.listGates({ projectId: 'pg', release: '2.0.0' }, { limit: 5 })).map((g) => g.gateId)).toEqual(['a']);
    expect(await store.releaseGates.listGates({ projectId: 'pg', evaluatorId: 'x' }, { limit: 5 })).toEqual([]);
  });

  it('decisions append with seq 1, 2, ...; one per idempotency key (concurrent appends included); newest first', async () => {
    const first = await store.releaseGates.appendDecision(decision({ projectId: 'pd' }));
    expect(first).toMatchObject({ created: true, decision: { seq: 1, idempotencyKey: 'default', reasons: [{ code: 'no_evidence' }], evidence: { candidate: { mean: null } } } });
    const again = await store.releaseGates.appendDecision(decision({ projectId: 'pd', outcome: 'ADMIT' }));
    expect(again).toEqual({ created: false, decision: first.decision });
    const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => store.releaseGates.appendDecision(decision({ projectId: 'pd', idempotencyKey: `k${i % 3}` }))));
    expect(racing.filter((r) => r.created)).toHaveLength(3);
    expect(new Set(racing.map((r) => r.decision.decisionId)).size).toBe(3);
    const list = await store.releaseGates.decisions('pd', 'g', 10);
    expect(list.map((d) => d.seq)).toEqual([4, 3, 2, 1]);
    expect(await store.releaseGates.decisions('pd', 'g', 2)).toHaveLength(2);
    expect(await store.releaseGates.countDecisions('pd', 'g')).toBe(4);
    expect(await store.releaseGates.findDecision('pd', 'g', 'k1')).toMatchObject({ idempotencyKey: 'k1' });
    expect(await store.releaseGates.findDecision('pd', 'other', 'k1')).toBeUndefined();
  });
});
