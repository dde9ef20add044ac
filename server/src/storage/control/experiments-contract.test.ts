/** The experiment store's contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExperimentRecord, TrialRecord } from '../../domains/evaluations/experiments/store.js';
import type { ResultRecord } from '../../domains/evaluations/results/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const AT = '2026-01-01T00:00:00.000Z';
const experiment = (over: Partial<ExperimentRecord> = {}): ExperimentRecord => ({
  orgId: 'o1',
  projectId: 'p1',
  experimentId: 'exp',
  displayName: 'Prompt v7 vs v6',
  datasetId: 'golden',
  datasetVersion: 3,
  evaluators: [
    { evaluator_id: 'gate', version: 2 },
    { evaluator_id: 'traj', version: 1 },
  ],
  createdAt: AT,
  createdBy: 'user:u1',
  ...over,
});
const trial = (over: Partial<TrialRecord> = {}): TrialRecord => ({
  projectId: 'p1',
  experimentId: 'exp',
  trialId: 't',
  role: 'TRIAL_ROLE_CANDIDATE',
  label: 'candidate',
  release: null,
  runs: null,
  createdAt: AT,
  createdBy: 'user:u1',
  ...over,
});
const result = (over: Partial<ResultRecord>): ResultRecord => ({
  id: 'r',
  orgId: 'o1',
  projectId: 'p1',
  evaluatorId: 'gate',
  evaluatorVersion: 2,
  metricName: 'm',
  mode: 'EVALUATION_MODE_EXPERIMENT',
  subjectKind: 'SUBJECT_KIND_DATASET_ITEM',
  subjectRef: 'golden/3/i1',
  numericValue: 1,
  label: 'pass',
  explanation: null,
  subjectRelease: null,
  legacySource: '',
  occurredAt: AT,
  evaluatedAt: AT,
  execution: null,
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('experiment store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('create then get round-trips the experiment (evaluators in their order); the same id in the project again is a unique violation, in another project it is fine', async () => {
    await store.experiments.create(experiment({ projectId: 'pa' }));
    expect(await store.experiments.get('pa', 'exp')).toEqual(experiment({ projectId: 'pa' }));
    await expect(store.experiments.create(experiment({ projectId: 'pa', displayName: 'other' }))).rejects.toThrow();
    await store.experiments.create(experiment({ projectId: 'pb' }));
    expect(await store.experiments.get('pc', 'exp')).toBeUndefined();
  });

  it('list pages by experiment id ascending (limit + 1 rows), filters by dataset, and never reads another project', async () => {
    for (const id of ['c', 'a', 'b']) await store.experiments.create(experiment({ projectId: 'pl', experimentId: id, datasetId: id === 'b' ? 'other' : 'golden' }));
    await store.experiments.create(experiment({ projectId: 'pm', experimentId: 'a0' }));
    expect((await store.experiments.list({ projectId: 'pl' }, { limit: 2 })).map((e) => e.experimentId)).toEqual(['a', 'b', 'c']);
    expect((await store.experiments.list({ projectId: 'pl' }, { limit: 2, after: 'a' })).map((e) => e.experimentId)).toEqual(['b', 'c']);
    expect((await store.experiments.list({ projectId: 'pl', datasetId: 'golden' }, { limit: 10 })).map((e) => e.experimentId)).toEqual(['a', 'c']);
  });

  it('trials come back in the order added, runs maps round-trip, a trial id is written once per experiment', async () => {
    await store.experiments.create(experiment({ projectId: 'pt' }));
    const runs = { i2: 'b'.repeat(32), i1: 'a'.repeat(32) };
    await store.transaction(async (tx) => {
      expect((await tx.experiments.lock('pt', 'exp'))?.experimentId).toBe('exp');
      expect(await tx.experiments.lock('pt', 'nobody')).toBeUndefined();
      await tx.experiments.addTrial(trial({ projectId: 'pt', trialId: 'z-base', role: 'TRIAL_ROLE_BASELINE', label: 'frozen' }));
    });
    await store.transaction((tx) => tx.experiments.addTrial(trial({ projectId: 'pt', trialId: 'a-cand', release: '2.0.0', runs })));
    const got = await store.experiments.trials('pt', 'exp');
    expect(got.map((t) => t.trialId)).toEqual(['z-base', 'a-cand']);
    expect(got[1]).toEqual(trial({ projectId: 'pt', trialId: 'a-cand', release: '2.0.0', runs }));
    await expect(store.transaction((tx) => tx.experiments.addTrial(trial({ projectId: 'pt', trialId: 'a-cand' })))).rejects.toThrow();
    expect(await store.experiments.trials('pt', 'exp')).toHaveLength(2);
    expect(await store.experiments.trials('pt', 'other')).toEqual([]);
  });

  it('outcomes reads what the runner stored for exactly that evaluator version and subject kind; a score wins over a stale unscored record; refs beyond one chunk are read', async () => {
    const p = 'po';
    await store.evaluationResults.insert(result({ id: 'r1', projectId: p, subjectRef: 'golden/3/i1', numericValue: 0.5, label: null }));
    await store.evaluationResults.insert(result({ id: 'r2', projectId: p, subjectRef: 'golden/3/i2', evaluatorVersion: 1 }));
    await store.evaluationResults.insert(result({ id: 'r3', projectId: p, subjectRef: 'golden/3/i3', subjectKind: 'SUBJECT_KIND_AGENT_RUN' }));
    const unscored = { orgId: 'o1', projectId: p, evaluatorId: 'gate', evaluatorVersion: 2, subjectKind: 'SUBJECT_KIND_DATASET_ITEM', mode: 'EVALUATION_MODE_EXPERIMENT', details: {}, attempts: 1, firstAt: AT, lastAt: AT };
    await store.evaluationResults.recordUnscored({ ...unscored, id: 'u1', subjectRef: 'golden/3/i4', outcome: 'unmeasured', reason: 'no_duration' });
    await store.evaluationResults.recordUnscored({ ...unscored, id: 'u2', subjectRef: 'golden/3/i5', outcome: 'withheld', reason: 'withheld:model_transcript' });
    await store.evaluationResults.recordUnscored({ ...unscored, id: 'u3', subjectRef: 'golden/3/i1', outcome: 'unmeasured', reason: 'stale' });
    const refs = [...Array.from({ length: 1200 }, (_, i) => `golden/3/x${i}`), 'golden/3/i1', 'golden/3/i2', 'golden/3/i3', 'golden/3/i4', 'golden/3/i5'];
    const got = await store.experiments.outcomes(p, { evaluator_id: 'gate', version: 2 }, 'SUBJECT_KIND_DATASET_ITEM', refs);
    expect(Object.fromEntries(got)).toEqual({
      'golden/3/i1': { state: 'scored', numericValue: 0.5, label: null, mode: 'EVALUATION_MODE_EXPERIMENT' },
      'golden/3/i4': { state: 'unmeasured', reason: 'no_duration' },
      'golden/3/i5': { state: 'withheld', reason: 'withheld:model_transcript' },
    });
    expect((await store.experiments.outcomes(p, { evaluator_id: 'gate', version: 2 }, 'SUBJECT_KIND_DATASET_ITEM', [])).size).toBe(0);
  });
});
