/** The calibration records store's contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalibrationRecord } from '../../domains/evaluations/calibration/model.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

let seq = 0;
const record = (over: Partial<CalibrationRecord>): CalibrationRecord => ({
  id: `cal-${String(++seq).padStart(6, '0')}`,
  orgId: 'o1',
  projectId: 'p1',
  evaluatorId: 'judge',
  evaluatorVersion: 1,
  metricName: 'quality',
  state: 'CALIBRATED',
  statistic: 'LINS_CCC',
  valueKind: 'NUMERIC',
  agreement: 0.123456789012345,
  agreementRate: null,
  pairCount: 3,
  excludedCount: 1,
  excluded: { no_judge_result: 1, no_shared_value: 0, other_value_kind: 0 },
  runsWithoutJudgment: 2,
  minLabels: 2,
  subjectRefs: ['a'.repeat(32), 'b'.repeat(32)],
  judgmentIds: ['j1', 'j2', 'j3'],
  resultIds: ['r1', 'r2'],
  inputDigest: `digest-${seq}`,
  createdAt: `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}.000Z`,
  createdBy: 'user:u1',
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('calibration store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('insert keeps every field exactly (a double agreement, null statistic fields, id lists); byDigest finds it', async () => {
    const r = record({ projectId: 'pa' });
    expect(await store.calibrations.insert(r)).toBe(true);
    expect(await store.calibrations.byDigest('pa', 'judge', r.inputDigest)).toEqual(r);
    const empty = record({ projectId: 'pa', state: 'UNCALIBRATED', statistic: null, valueKind: null, agreement: null, pairCount: 0, judgmentIds: [], resultIds: [] });
    expect(await store.calibrations.insert(empty)).toBe(true);
    expect(await store.calibrations.byDigest('pa', 'judge', empty.inputDigest)).toEqual(empty);
    const label = record({ projectId: 'pa', statistic: 'COHENS_KAPPA', valueKind: 'LABEL', agreement: -0.25, agreementRate: 0.375 });
    await store.calibrations.insert(label);
    expect(await store.calibrations.byDigest('pa', 'judge', label.inputDigest)).toEqual(label);
    expect(await store.calibrations.byDigest('pa', 'judge', 'missing')).toBeUndefined();
    expect(await store.calibrations.byDigest('pb', 'judge', r.inputDigest)).toBeUndefined();
  });

  it('"a recompute over unchanged judgments returns the existing record": the same digest for the same evaluator is refused (false, nothing written), even concurrently', async () => {
    const r = record({ projectId: 'pc' });
    const copies = Array.from({ length: 8 }, () => ({ ...r, id: `${r.id}-${Math.random().toString(36).slice(2)}` }));
    const answers = await Promise.all(copies.map((c) => store.calibrations.insert(c)));
    expect(answers.filter(Boolean)).toHaveLength(1);
    expect(await store.calibrations.list({ projectId: 'pc', evaluatorId: 'judge' }, { limit: 50 })).toHaveLength(1);
    // The same digest under another evaluator or project is another record.
    expect(await store.calibrations.insert(record({ projectId: 'pc', evaluatorId: 'other', inputDigest: r.inputDigest }))).toBe(true);
    expect(await store.calibrations.insert(record({ projectId: 'pd', inputDigest: r.inputDigest }))).toBe(true);
  });

  it('list: newest first by (created_at, id), pages without repeats, filters version and states, stays in its project and evaluator', async () => {
    const at = '2026-02-01T00:00:00.000Z';
    const rs = [
      record({ projectId: 'pe', createdAt: at, id: 'cal-e-1' }),
      record({ projectId: 'pe', createdAt: at, id: 'cal-e-2', evaluatorVersion: 2 }),
      record({ projectId: 'pe', createdAt: '2026-02-02T00:00:00.000Z', id: 'cal-e-3', state: 'INSUFFICIENT_LABELS', statistic: null, agreement: null }),
      record({ projectId: 'pe', evaluatorId: 'other', id: 'cal-e-4' }),
      record({ projectId: 'pf', id: 'cal-e-5' }),
    ];
    for (const r of rs) await store.calibrations.insert(r);
    const all = await store.calibrations.list({ projectId: 'pe', evaluatorId: 'judge' }, { limit: 10 });
    expect(all.map((r) => r.id)).toEqual(['cal-e-3', 'cal-e-2', 'cal-e-1']);
    const first = await store.calibrations.list({ projectId: 'pe', evaluatorId: 'judge' }, { limit: 2 });
    const last = first[first.length - 1];
    const rest = await store.calibrations.list({ projectId: 'pe', evaluatorId: 'judge' }, { limit: 2, after: { createdAt: last.createdAt, id: last.id } });
    expect([...first, ...rest].map((r) => r.id)).toEqual(['cal-e-3', 'cal-e-2', 'cal-e-1']);
    expect((await store.calibrations.list({ projectId: 'pe', evaluatorId: 'judge', evaluatorVersion: 2 }, { limit: 10 })).map((r) => r.id)).toEqual(['cal-e-2']);
    expect((await store.calibrations.list({ projectId: 'pe', evaluatorId: 'judge', states: ['INSUFFICIENT_LABELS', 'UNCALIBRATED'] }, { limit: 10 })).map((r) => r.id)).toEqual(['cal-e-3']);
  });
});
