/**
 * The budget as the runner meets it (admit, charge) with the test clock: "429 | daily evaluation budget
 * spent", the UTC-day rollover, and the default of an organization that never set one. A real control
 * store (SQLite) holds the budget and the spend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import { fixedClock, openTestControl } from '../../../testing/app.js';
import type { ControlStore } from '../../../storage/control/stores.js';
import { EvaluationBudgetService } from './budget.js';

const clock = fixedClock('2026-05-01T23:59:00.000Z');
let store: ControlStore;
let drop: () => Promise<void>;
let svc: EvaluationBudgetService;

const owner = (orgId: string): Principal => ({ kind: 'api_key', keyId: 'k1', signInId: null, connectionId: null, orgId, projectId: null, scopes: new Set(['evals:write']), userId: null, role: null });

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(e)}`);
  return e;
}

beforeAll(async () => {
  const t = await openTestControl('sqlite');
  store = t.store;
  drop = t.drop;
  svc = new EvaluationBudgetService(store.evaluationBudget, clock);
});
afterAll(async () => drop());

describe('evaluation budget: admit and charge', () => {
  it('never set: a model judge is refused with 429 budget_not_set saying how to set one (nothing was spent: no Retry-After), free evaluations run uncapped', async () => {
    clock.set('2026-05-01T12:00:00.000Z');
    const e = await refusal(svc.admit('o-default', 'EVALUATOR_KIND_LLM_JUDGE'));
    expect(e.status).toBe(429);
    expect(e.code).toBe('budget_not_set');
    expect(e.message).toContain('no evaluation budget is set');
    expect(e.message).toContain('svc evals budget set --daily-limit-nano-usd');
    expect(e.message).not.toMatch(/spent|retry after/);
    expect(e.details).toMatchObject({ limit: 'daily_limit_nano_usd', daily_limit_nano_usd: 0, spent_nano_usd: 0, budget_set: false, day: '2026-05-01' });
    expect(e.headers ?? {}).toEqual({});
    for (let i = 0; i < 50; i++) {
      await svc.admit('o-default', 'EVALUATOR_KIND_DETERMINISTIC');
      await svc.charge('o-default', { costNanos: 0, kind: 'EVALUATOR_KIND_DETERMINISTIC' });
    }
    await svc.admit('o-default', 'EVALUATOR_KIND_REFERENCE_TRAJECTORY');
    expect((await svc.state('o-default')).spend).toEqual({ spentNanoUsd: 0, evaluations: 50 });
  });

  it('a judge is admitted only while spent < daily_limit_nano_usd; free kinds are not held by the cost cap', async () => {
    clock.set('2026-05-02T08:00:00.000Z');
    await svc.put(owner('o-cost'), { daily_limit_nano_usd: 1000 });
    await svc.admit('o-cost', 'EVALUATOR_KIND_LLM_JUDGE');
    await svc.charge('o-cost', { costNanos: 999, kind: 'EVALUATOR_KIND_LLM_JUDGE' });
    await svc.admit('o-cost', 'EVALUATOR_KIND_LLM_JUDGE'); // 999 < 1000
    await svc.charge('o-cost', { costNanos: 5, kind: 'EVALUATOR_KIND_LLM_JUDGE' }); // an admitted evaluation may end above the cap
    const e = await refusal(svc.admit('o-cost', 'EVALUATOR_KIND_LLM_JUDGE'));
    expect(e.details).toMatchObject({ limit: 'daily_limit_nano_usd', daily_limit_nano_usd: 1000, spent_nano_usd: 1004, evaluations: 2, budget_set: true });
    expect(e.message).toContain('daily_limit_nano_usd 1000');
    await svc.admit('o-cost', 'EVALUATOR_KIND_DETERMINISTIC');
  });

  it('daily_evaluation_limit counts every evaluation, free ones too, and refuses every kind when reached', async () => {
    clock.set('2026-05-03T00:00:00.000Z');
    await svc.put(owner('o-count'), { daily_limit_nano_usd: 1_000_000, daily_evaluation_limit: 3 });
    for (const kind of ['EVALUATOR_KIND_DETERMINISTIC', 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', 'EVALUATOR_KIND_LLM_JUDGE'] as const) {
      await svc.admit('o-count', kind);
      await svc.charge('o-count', { costNanos: 0, kind });
    }
    for (const kind of ['EVALUATOR_KIND_DETERMINISTIC', 'EVALUATOR_KIND_LLM_JUDGE'] as const) {
      const e = await refusal(svc.admit('o-count', kind));
      expect(e.details).toMatchObject({ limit: 'daily_evaluation_limit', daily_evaluation_limit: 3, evaluations: 3 });
      expect(e.message).toContain('daily_evaluation_limit');
    }
  });

  it('the day rolls over at UTC midnight by the service clock: Retry-After counts down to it, and the next day starts at zero', async () => {
    clock.set('2026-05-04T23:59:30.000Z');
    await svc.put(owner('o-roll'), { daily_limit_nano_usd: 10 });
    await svc.charge('o-roll', { costNanos: 10, kind: 'EVALUATOR_KIND_LLM_JUDGE' });
    const e = await refusal(svc.admit('o-roll', 'EVALUATOR_KIND_LLM_JUDGE'));
    expect(e.headers!['retry-after']).toBe('30');
    expect(e.details).toMatchObject({ day: '2026-05-04', retry_after_seconds: 30 });
    clock.set('2026-05-04T23:59:59.999Z');
    await expect(svc.admit('o-roll', 'EVALUATOR_KIND_LLM_JUDGE')).rejects.toThrow(/spent/);
    clock.set('2026-05-05T00:00:00.000Z');
    await svc.admit('o-roll', 'EVALUATOR_KIND_LLM_JUDGE');
    const s = await svc.state('o-roll');
    expect(s.day).toBe('2026-05-05');
    expect(s.spend).toEqual({ spentNanoUsd: 0, evaluations: 0 });
    expect(s.resetsAt).toBe('2026-05-06T00:00:00.000Z');
    // Yesterday's spend is kept under its own day.
    expect(await store.evaluationBudget.spend('o-roll', '2026-05-04')).toEqual({ spentNanoUsd: 10, evaluations: 1 });
  });

  it('"concurrent charges never lose an update": 30 charges at once add up exactly', async () => {
    clock.set('2026-05-06T10:00:00.000Z');
    await Promise.all(Array.from({ length: 30 }, () => svc.charge('o-many', { costNanos: 7, kind: 'EVALUATOR_KIND_LLM_JUDGE' })));
    expect((await svc.state('o-many')).spend).toEqual({ spentNanoUsd: 210, evaluations: 30 });
  });

  it('a charge that is not a whole non-negative number of nano-dollars is a programming error, and counts nothing', async () => {
    for (const costNanos of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) await expect(svc.charge('o-bad', { costNanos, kind: 'EVALUATOR_KIND_LLM_JUDGE' })).rejects.toThrow(/whole/);
    expect((await svc.state('o-bad')).spend).toEqual({ spentNanoUsd: 0, evaluations: 0 });
  });

  it('organizations do not share a budget or a spend', async () => {
    clock.set('2026-05-07T10:00:00.000Z');
    await svc.put(owner('o-x'), { daily_limit_nano_usd: 100 });
    await svc.charge('o-x', { costNanos: 100, kind: 'EVALUATOR_KIND_LLM_JUDGE' });
    await svc.put(owner('o-y'), { daily_limit_nano_usd: 100 });
    await svc.admit('o-y', 'EVALUATOR_KIND_LLM_JUDGE');
    await expect(svc.admit('o-x', 'EVALUATOR_KIND_LLM_JUDGE')).rejects.toThrow(/spent/);
  });
});
