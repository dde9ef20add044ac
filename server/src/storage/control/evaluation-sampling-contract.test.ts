/** The evaluation budget and sampling stores' contract, on both engines: embedded SQLite and the PostgreSQL server (docs/evaluations-sampling.md). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SamplingRetry } from '../../domains/evaluations/sampling/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const retry = (over: Partial<SamplingRetry>): SamplingRetry => ({
  ruleId: 'r1',
  traceId: 't1',
  orgId: 'o1',
  projectId: 'p1',
  startUs: 1_700_000_000_000_000,
  state: 'waiting',
  attempts: 1,
  nextAt: '2026-01-01T00:10:00.000Z',
  reason: 'no steps',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('evaluation budget and sampling stores on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('budget: absent until put; each put takes the next version and round-trips a null count cap and a cost above 2^31', async () => {
    expect(await store.evaluationBudget.find('ob')).toBeUndefined();
    const first = await store.evaluationBudget.put({ orgId: 'ob', dailyLimitNanoUsd: 5_000_000_000_000, dailyEvaluationLimit: null, updatedAt: '2026-01-01T00:00:00.000Z', updatedBy: 'user:u1' });
    expect(first).toEqual({ orgId: 'ob', dailyLimitNanoUsd: 5_000_000_000_000, dailyEvaluationLimit: null, updatedAt: '2026-01-01T00:00:00.000Z', updatedBy: 'user:u1', version: 1 });
    const second = await store.evaluationBudget.put({ orgId: 'ob', dailyLimitNanoUsd: 0, dailyEvaluationLimit: 7, updatedAt: '2026-01-01T00:00:01.000Z', updatedBy: 'api_key:k' });
    expect(second.version).toBe(2);
    expect(await store.evaluationBudget.find('ob')).toEqual(second);
    expect(await store.evaluationBudget.find('other')).toBeUndefined();
  });

  it('"concurrent charges never lose an update": 40 charges at once all count, per organization and day', async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.evaluationBudget.charge('oc', '2026-03-01', { spentNanoUsd: i, evaluations: 1 })));
    expect(await store.evaluationBudget.spend('oc', '2026-03-01')).toEqual({ spentNanoUsd: (39 * 40) / 2, evaluations: 40 });
    expect(await store.evaluationBudget.spend('oc', '2026-03-02')).toEqual({ spentNanoUsd: 0, evaluations: 0 });
    expect(await store.evaluationBudget.spend('other', '2026-03-01')).toEqual({ spentNanoUsd: 0, evaluations: 0 });
  });

  it('two budget writes at once take versions 1 and 2', async () => {
    const put = (n: number) => store.evaluationBudget.put({ orgId: 'ov', dailyLimitNanoUsd: n, dailyEvaluationLimit: null, updatedAt: '2026-01-01T00:00:00.000Z', updatedBy: 'user:u' });
    const versions = (await Promise.all([put(1), put(2)])).map((b) => b.version).sort();
    expect(versions).toEqual([1, 2]);
  });

  it('cursor: a second create keeps the first; advance is a compare-and-set on the version', async () => {
    const made = await store.evaluationSampling.createCursor({ ruleId: 'rc', orgId: 'o1', projectId: 'p1', after: { startUs: 10, traceId: '' }, updatedAt: '2026-01-01T00:00:00.000Z' });
    expect(made).toMatchObject({ ruleId: 'rc', after: { startUs: 10, traceId: '' }, pending: null, pausedAt: null, version: 1 });
    const again = await store.evaluationSampling.createCursor({ ruleId: 'rc', orgId: 'o1', projectId: 'p1', after: { startUs: 99, traceId: '' }, updatedAt: '2026-01-01T00:00:01.000Z' });
    expect(again.after.startUs).toBe(10);
    const claim = { after: { startUs: 11, traceId: 'a' }, pending: { startUs: 12, traceId: 'b' }, at: '2026-01-01T00:00:02.000Z' };
    const both = await Promise.all([store.evaluationSampling.advance('rc', 1, claim), store.evaluationSampling.advance('rc', 1, claim)]);
    expect(both.filter(Boolean)).toHaveLength(1);
    expect(await store.evaluationSampling.cursor('rc')).toMatchObject({ after: { startUs: 11, traceId: 'a' }, pending: { startUs: 12, traceId: 'b' }, version: 2 });
    expect(await store.evaluationSampling.advance('rc', 1, claim)).toBe(false);
    expect(await store.evaluationSampling.advance('rc', 2, { after: { startUs: 12, traceId: 'b' }, pending: null, at: '2026-01-01T00:00:03.000Z' })).toBe(true);
    expect(await store.evaluationSampling.cursor('rc')).toMatchObject({ after: { startUs: 12, traceId: 'b' }, pending: null, version: 3 });
  });

  it('pauseOthers marks the cursors of rules not listed, once; an advance clears the mark', async () => {
    for (const id of ['pa', 'pb']) await store.evaluationSampling.createCursor({ ruleId: id, orgId: 'o1', projectId: 'p1', after: { startUs: 0, traceId: '' }, updatedAt: '2026-01-01T00:00:00.000Z' });
    await store.evaluationSampling.pauseOthers(['pa', 'rc'], '2026-01-02T00:00:00.000Z');
    expect((await store.evaluationSampling.cursor('pa'))!.pausedAt).toBeNull();
    expect((await store.evaluationSampling.cursor('pb'))!.pausedAt).toBe('2026-01-02T00:00:00.000Z');
    await store.evaluationSampling.pauseOthers([], '2026-01-03T00:00:00.000Z');
    expect((await store.evaluationSampling.cursor('pb'))!.pausedAt).toBe('2026-01-02T00:00:00.000Z');
    expect((await store.evaluationSampling.cursor('pa'))!.pausedAt).toBe('2026-01-03T00:00:00.000Z');
    const v = (await store.evaluationSampling.cursor('pa'))!.version;
    await store.evaluationSampling.advance('pa', v, { after: { startUs: 5, traceId: '' }, pending: null, at: '2026-01-04T00:00:00.000Z' });
    expect((await store.evaluationSampling.cursor('pa'))!.pausedAt).toBeNull();
  });

  it('retries: due ones oldest first, a claim is a compare-and-set on attempts, null deletes, the record of a rule and run is replaced', async () => {
    await store.evaluationSampling.putRetry(retry({ ruleId: 'rr', traceId: 'late', nextAt: '2026-01-01T00:20:00.000Z' }));
    await store.evaluationSampling.putRetry(retry({ ruleId: 'rr', traceId: 'early', nextAt: '2026-01-01T00:10:00.000Z' }));
    await store.evaluationSampling.putRetry(retry({ ruleId: 'rr', traceId: 'gone', state: 'given_up', nextAt: '2026-01-01T00:00:00.000Z' }));
    const ids = (rs: SamplingRetry[]) => rs.map((r) => r.traceId);
    expect(ids(await store.evaluationSampling.dueRetries('rr', '2026-01-01T00:09:59.999Z', 10))).toEqual([]);
    expect(ids(await store.evaluationSampling.dueRetries('rr', '2026-01-01T00:30:00.000Z', 10))).toEqual(['early', 'late']);
    expect(ids(await store.evaluationSampling.dueRetries('rr', '2026-01-01T00:30:00.000Z', 1))).toEqual(['early']);
    const next = retry({ ruleId: 'rr', traceId: 'early', attempts: 2, nextAt: '2026-01-01T00:50:00.000Z' });
    const claims = await Promise.all([store.evaluationSampling.updateRetry('rr', 'early', 1, next), store.evaluationSampling.updateRetry('rr', 'early', 1, next)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.evaluationSampling.updateRetry('rr', 'gone', 1, null)).toBe(false); // given up: no longer claimable
    expect(await store.evaluationSampling.updateRetry('rr', 'late', 1, null)).toBe(true);
    await store.evaluationSampling.putRetry(retry({ ruleId: 'rr', traceId: 'gone', state: 'withheld', attempts: 1, reason: 'withheld: x' }));
    expect((await store.evaluationSampling.retries('rr')).map((r) => [r.traceId, r.state, r.attempts])).toEqual([
      ['early', 'waiting', 2],
      ['gone', 'withheld', 1],
    ]);
    expect(await store.evaluationSampling.retries('other')).toEqual([]);
  });
});
