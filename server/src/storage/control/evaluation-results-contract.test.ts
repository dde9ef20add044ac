/** The evaluation results store's contract, on both engines: embedded SQLite and the PostgreSQL server (docs/evaluations.md). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultRecord } from '../../domains/evaluations/results/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

let n = 0;
const result = (over: Partial<ResultRecord>): ResultRecord => ({
  id: `r${String(++n).padStart(4, '0')}`,
  orgId: 'o1',
  projectId: 'p1',
  evaluatorId: 'ev',
  evaluatorVersion: 1,
  metricName: 'm',
  mode: 'EVALUATION_MODE_ON_DEMAND',
  subjectKind: 'SUBJECT_KIND_AGENT_RUN',
  subjectRef: 'a'.repeat(32),
  numericValue: 0.5,
  label: null,
  explanation: null,
  subjectRelease: null,
  legacySource: '',
  occurredAt: '2026-01-01T00:00:00.000000Z',
  evaluatedAt: '2026-01-01T00:00:01.000Z',
  execution: { sampling: 'NOT_SAMPLED', cost_state: 'FREE', charged_cost_nano_usd: 0, input_tokens: 0, output_tokens: 0, judge_model_state: 'NOT_APPLICABLE', job_status: 'COMPLETED' },
  ...over,
});
const keyOf = (r: ResultRecord) => ({ projectId: r.projectId, evaluatorId: r.evaluatorId, evaluatorVersion: r.evaluatorVersion, subjectKind: r.subjectKind, subjectRef: r.subjectRef });

describe.each(['sqlite', 'postgres'] as const)('evaluation results store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('"one result per evaluator version per run": a second insert for the key is refused (false) and the first stays; another version adds history', async () => {
    const first = result({ projectId: 'p-one' });
    expect(await store.evaluationResults.insert(first)).toBe(true);
    expect(await store.evaluationResults.insert(result({ projectId: 'p-one', numericValue: 0.9 }))).toBe(false);
    expect(await store.evaluationResults.find(keyOf(first))).toEqual(first);
    expect(await store.evaluationResults.insert(result({ projectId: 'p-one', evaluatorVersion: 2 }))).toBe(true);
    expect((await store.evaluationResults.page({ projectId: 'p-one' }, { limit: 10 })).map((r) => r.evaluatorVersion).sort()).toEqual([1, 2]);
  });

  it('a result written without an execution record reads back with none (null), a legacy one with its source and version 0', async () => {
    const legacy = result({ projectId: 'p-legacy', evaluatorId: 'legacy/alice/helpfulness', evaluatorVersion: 0, legacySource: 'import', execution: null, mode: 'EVALUATION_MODE_LEGACY' });
    await store.evaluationResults.insert(legacy);
    expect(await store.evaluationResults.find(keyOf(legacy))).toEqual(legacy);
  });

  it('page: newest evaluated first, then id; every filter; the cursor position continues without repeats', async () => {
    const p = 'p-page';
    const rows = [
      result({ projectId: p, evaluatedAt: '2026-01-01T00:00:03.000Z', subjectRef: 'x', metricName: 'a', occurredAt: '2026-01-01T00:00:00.000000Z' }),
      result({ projectId: p, evaluatedAt: '2026-01-01T00:00:03.000Z', subjectRef: 'y', metricName: 'b', occurredAt: '2026-01-02T00:00:00.000000Z' }),
      result({ projectId: p, evaluatedAt: '2026-01-01T00:00:05.000Z', subjectRef: 'z', metricName: 'a', mode: 'EVALUATION_MODE_SAMPLED', evaluatorId: 'other' }),
    ];
    for (const r of rows) await store.evaluationResults.insert(r);
    const all = await store.evaluationResults.page({ projectId: p }, { limit: 10 });
    expect(all.map((r) => r.subjectRef)).toEqual(['z', 'y', 'x']);
    const after = await store.evaluationResults.page({ projectId: p }, { limit: 10, after: { evaluatedAt: all[1].evaluatedAt, id: all[1].id } });
    expect(after.map((r) => r.subjectRef)).toEqual(['x']);
    expect((await store.evaluationResults.page({ projectId: p, metricName: 'a' }, { limit: 10 })).map((r) => r.subjectRef)).toEqual(['z', 'x']);
    expect((await store.evaluationResults.page({ projectId: p, evaluatorId: 'other' }, { limit: 10 })).map((r) => r.subjectRef)).toEqual(['z']);
    expect((await store.evaluationResults.page({ projectId: p, modes: ['EVALUATION_MODE_ON_DEMAND'] }, { limit: 10 })).map((r) => r.subjectRef)).toEqual(['y', 'x']);
    expect((await store.evaluationResults.page({ projectId: p, subjectRefs: ['x', 'y'] }, { limit: 10 })).map((r) => r.subjectRef)).toEqual(['y', 'x']);
    expect((await store.evaluationResults.page({ projectId: p, start: '2026-01-01T12:00:00.000000Z' }, { limit: 10 })).map((r) => r.subjectRef)).toEqual(['y']);
    expect((await store.evaluationResults.page({ projectId: p, end: '2026-01-01T12:00:00.000000Z' }, { limit: 10 })).map((r) => r.subjectRef)).toEqual(['z', 'x']);
    expect(await store.evaluationResults.page({ projectId: 'p-none' }, { limit: 10 })).toEqual([]);
  });

  it('perSubject: each subject\'s newest n rows (n+1 shows the cut)', async () => {
    const p = 'p-share';
    for (let v = 1; v <= 4; v++) await store.evaluationResults.insert(result({ projectId: p, subjectRef: 's1', evaluatorVersion: v, evaluatedAt: `2026-01-01T00:00:0${v}.000Z` }));
    await store.evaluationResults.insert(result({ projectId: p, subjectRef: 's2', evaluatedAt: '2026-01-01T00:00:09.000Z' }));
    const rows = await store.evaluationResults.perSubject({ projectId: p, subjectRefs: ['s1', 's2', 's3'] }, 3);
    expect(rows.map((r) => [r.subjectRef, r.evaluatorVersion])).toEqual([
      ['s1', 4],
      ['s1', 3],
      ['s1', 2],
      ['s2', 1],
    ]);
  });

  it('claim: one holder at a time; an expired claim is taken over; release frees it only for its holder', async () => {
    const r = store.evaluationResults;
    expect(await r.claim('k', 't1', '2026-01-01T00:00:00.000Z', '2026-01-01T00:06:00.000Z')).toBe(true);
    expect(await r.claim('k', 't2', '2026-01-01T00:01:00.000Z', '2026-01-01T00:07:00.000Z')).toBe(false);
    await r.release('k', 't2');
    expect(await r.claim('k', 't3', '2026-01-01T00:02:00.000Z', '2026-01-01T00:08:00.000Z')).toBe(false);
    expect(await r.claim('k', 't4', '2026-01-01T00:06:00.000Z', '2026-01-01T00:12:00.000Z')).toBe(true);
    await r.release('k', 't4');
    expect(await r.claim('k', 't5', '2026-01-01T00:06:01.000Z', '2026-01-01T00:12:00.000Z')).toBe(true);
    const racers = await Promise.all(['a', 'b', 'c', 'd'].map((t) => r.claim('race', t, '2026-01-01T00:00:00.000Z', '2026-01-01T00:06:00.000Z')));
    expect(racers.filter(Boolean)).toHaveLength(1);
  });

  it('unscored: a repeat counts one more attempt and keeps the first time; clear removes it; the read filters by outcome', async () => {
    const key = { projectId: 'p-un', evaluatorId: 'ev', evaluatorVersion: 1, subjectKind: 'SUBJECT_KIND_AGENT_RUN', subjectRef: 'b'.repeat(32) };
    const base = { ...key, id: 'u1', orgId: 'o1', mode: 'EVALUATION_MODE_SAMPLED', outcome: 'unmeasured' as const, reason: 'run.cost_nanos', details: {}, attempts: 1 };
    await store.evaluationResults.recordUnscored({ ...base, firstAt: '2026-01-01T00:00:00.000Z', lastAt: '2026-01-01T00:00:00.000Z' });
    const again = await store.evaluationResults.recordUnscored({ ...base, id: 'u2', firstAt: '2026-01-01T01:00:00.000Z', lastAt: '2026-01-01T01:00:00.000Z' });
    expect(again).toMatchObject({ id: 'u1', attempts: 2, firstAt: '2026-01-01T00:00:00.000Z', lastAt: '2026-01-01T01:00:00.000Z' });
    const withheld = { ...base, subjectRef: 'c'.repeat(32), id: 'u3', outcome: 'withheld' as const, reason: 'withheld:model_transcript', details: { content_class: 'model_transcript', boundary: 'judge_transfer', decided_by: 'policy' } };
    await store.evaluationResults.recordUnscored({ ...withheld, firstAt: '2026-01-01T02:00:00.000Z', lastAt: '2026-01-01T02:00:00.000Z' });
    expect((await store.evaluationResults.unscored({ projectId: 'p-un', outcomes: ['withheld'] }, { limit: 10 })).map((u) => [u.id, u.details])).toEqual([['u3', withheld.details]]);
    await store.evaluationResults.clearUnscored(key);
    expect((await store.evaluationResults.unscored({ projectId: 'p-un' }, { limit: 10 })).map((u) => u.id)).toEqual(['u3']);
  });
});
