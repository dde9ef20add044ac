/**
 * The organization's daily evaluation budget (docs/evaluations-sampling.md "Budget"): a cap on the charged
 * cost of model-judge evaluations per UTC day and, optionally, on the number of evaluations of every kind.
 * Never set, the budget is the default: no judge spend (a model judge is refused), no count cap (free
 * evaluations run). The day rolls over at UTC midnight by the service clock.
 */
import { ApiError, invalidRequest, permissionDenied } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock } from '../../../lib/clock.js';
import { secondsToNextUtcDay, utcDay } from '../../agent-connections/budgets-service.js';
import { principalRef } from '../../assets/signals.js';
import type { EvaluatorKind } from '../model.js';
import type { EvaluationBudget } from '../ports.js';
import type { BudgetRecord, DaySpend, EvaluationBudgetStore } from './store.js';

/** The largest cost or count a budget holds: integers stay exact in JSON and in a double. */
export const MAX_BUDGET_INTEGER = Number.MAX_SAFE_INTEGER;

/** The budget of an organization that never set one. */
export const DEFAULT_BUDGET = { dailyLimitNanoUsd: 0, dailyEvaluationLimit: null } as const;

export interface BudgetInput {
  daily_limit_nano_usd: number;
  daily_evaluation_limit?: number | null;
}

/** The budget in force and today's spend against it. */
export interface BudgetState {
  budget: BudgetRecord | undefined;
  limits: { dailyLimitNanoUsd: number; dailyEvaluationLimit: number | null };
  day: string;
  spend: DaySpend;
  resetsAt: string;
}

const DAY_MS = 86_400_000;

export class EvaluationBudgetService implements EvaluationBudget {
  constructor(
    private readonly store: EvaluationBudgetStore,
    private readonly clock: Clock,
  ) {}

  async state(orgId: string, now = this.clock.now()): Promise<BudgetState> {
    const day = utcDay(now);
    const [budget, spend] = await Promise.all([this.store.find(orgId), this.store.spend(orgId, day)]);
    const limits = budget ? { dailyLimitNanoUsd: budget.dailyLimitNanoUsd, dailyEvaluationLimit: budget.dailyEvaluationLimit } : DEFAULT_BUDGET;
    const resetsAt = new Date((Math.floor(now.getTime() / DAY_MS) + 1) * DAY_MS).toISOString();
    return { budget, limits, day, spend, resetsAt };
  }

  /** Sets the budget: an organization-level credential only (a project-bound key is 403); who set it comes from the credential. */
  async put(caller: Principal, input: BudgetInput): Promise<BudgetState> {
    if (caller.projectId !== null)
      throw permissionDenied('the evaluation budget is organization-wide: set it with an organization-level credential, not a project-bound key');
    const cost = input.daily_limit_nano_usd;
    const count = input.daily_evaluation_limit ?? null;
    // The route's schema checks these too; the service holds the rule for any other caller.
    if (!Number.isSafeInteger(cost) || cost < 0) throw invalidRequest(`daily_limit_nano_usd must be an integer from 0 to ${MAX_BUDGET_INTEGER}`);
    if (count !== null && (!Number.isSafeInteger(count) || count < 1))
      throw invalidRequest(`daily_evaluation_limit must be an integer from 1 to ${MAX_BUDGET_INTEGER}, or null for no count cap`);
    const now = this.clock.now();
    await this.store.put({ orgId: caller.orgId, dailyLimitNanoUsd: cost, dailyEvaluationLimit: count, updatedAt: now.toISOString(), updatedBy: principalRef(caller) });
    return this.state(caller.orgId, now);
  }

  async admit(orgId: string, kind: EvaluatorKind): Promise<void> {
    const now = this.clock.now();
    const s = await this.state(orgId, now);
    const { dailyEvaluationLimit: countCap, dailyLimitNanoUsd: costCap } = s.limits;
    if (countCap !== null && s.spend.evaluations >= countCap)
      throw exhausted(s, now, 'daily_evaluation_limit', `today's ${countCap} evaluations (daily_evaluation_limit) are used`);
    if (kind === 'EVALUATOR_KIND_LLM_JUDGE' && !s.budget) throw notSet(s);
    if (kind === 'EVALUATOR_KIND_LLM_JUDGE' && s.spend.spentNanoUsd >= costCap)
      throw exhausted(s, now, 'daily_limit_nano_usd', `today's judge spend ${s.spend.spentNanoUsd} reached daily_limit_nano_usd ${costCap} (billionths of a US dollar)`);
  }

  async charge(orgId: string, spend: { costNanos: number; kind: EvaluatorKind }): Promise<void> {
    if (!Number.isSafeInteger(spend.costNanos) || spend.costNanos < 0) throw new Error(`a charge is a whole, non-negative number of billionths of a US dollar, got ${spend.costNanos}`);
    await this.store.charge(orgId, utcDay(this.clock.now()), { spentNanoUsd: spend.costNanos, evaluations: 1 });
  }
}

/**
 * A model judge in an organization that never set a budget: nothing was spent and waiting does not help, so
 * this is not `budget_exhausted` and carries no Retry-After; it says how to set one.
 */
function notSet(s: BudgetState): ApiError {
  return new ApiError(
    429,
    'budget_not_set',
    'no evaluation budget is set for this organization, so model-judge evaluations are refused: an owner or admin sets one with ' +
      '`svc evals budget set --daily-limit-nano-usd 1000000000` ($1 a day) or PUT /api/v1/evaluation/budget',
    { limit: 'daily_limit_nano_usd', day: s.day, daily_limit_nano_usd: 0, daily_evaluation_limit: s.limits.dailyEvaluationLimit, spent_nano_usd: s.spend.spentNanoUsd, evaluations: s.spend.evaluations, budget_set: false },
  );
}

function exhausted(s: BudgetState, now: Date, limit: 'daily_limit_nano_usd' | 'daily_evaluation_limit', why: string): ApiError {
  const retryAfter = secondsToNextUtcDay(now);
  return new ApiError(
    429,
    'budget_exhausted',
    `the organization's daily evaluation budget is spent: ${why}; it resets at ${s.resetsAt} (retry after ${retryAfter} seconds)`,
    {
      limit,
      day: s.day,
      daily_limit_nano_usd: s.limits.dailyLimitNanoUsd,
      daily_evaluation_limit: s.limits.dailyEvaluationLimit,
      spent_nano_usd: s.spend.spentNanoUsd,
      evaluations: s.spend.evaluations,
      budget_set: s.budget !== undefined,
      retry_after_seconds: retryAfter,
    },
    { 'retry-after': String(retryAfter) },
  );
}
