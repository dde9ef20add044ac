/**
 * Cost rules (docs/agent-model.md "Run" `cost_nanos`, "Step cost"; spec 3: "missing or unpriced is not
 * zero", session cost "a zero is treated as unmeasured").
 *
 * - A step's cost is its reported `svc.cost.nanos`; else its tokens times its model's prices (rounded
 *   once, half up, to a whole nano); a step reporting only one of the two token counts is priced on that
 *   count (an embeddings call reports input tokens only). Otherwise it has no cost.
 * - A run's cost is the sum of its model steps' costs, or absent with a reason: `no_model_calls` (no
 *   model step), `missing_usage` (a model step with neither a reported cost nor a token count),
 *   `unpriced_model` (a model step to be priced names no model, or its model has no price). When both
 *   of the last two apply, `missing_usage` is reported.
 * - Model calls read outside runs (`/llm/calls`, `/llm/usage`, domains/llm/calls-service.ts) are priced by
 *   `stepCost` and summed by `sumCallCosts`, as the steps and runs here.
 * - A session's (or turn's) cost is the sum of its runs' model costs. A run that made no model call
 *   adds nothing (it has no model cost to miss); a run whose model cost is missing or unpriced makes
 *   the sum absent with `run_cost_unavailable`; a sum of 0 is absent with `zero_cost`.
 */
import type { ModelPrice, ModelPrices, ModelRef } from './pricing-port.js';
import { stepCostNanos } from './pricing-port.js';
import type { ModelUsageRow } from './store.js';

export const RUN_COST_REASONS = ['no_model_calls', 'missing_usage', 'unpriced_model'] as const;
export type RunCostReason = (typeof RUN_COST_REASONS)[number];
export const GROUP_COST_REASONS = ['run_cost_unavailable', 'zero_cost'] as const;
export type GroupCostReason = (typeof GROUP_COST_REASONS)[number];

export type Cost<R extends string> = { cost_nanos: number } | { cost_unavailable_reason: R };

const modelKey = (provider: string | null, model: string) => JSON.stringify([provider || null, model]);

/** The prices of every model named by these steps, read once. */
export class PriceBook {
  private constructor(private readonly prices: Map<string, ModelPrice | undefined>) {}

  static async load(pricing: ModelPrices, projectId: string, steps: { provider: string | null; model: string | null }[]): Promise<PriceBook> {
    // Distinct models by provider first (a session page names a few models across thousands of calls), then keys.
    const byProvider = new Map<string, Set<string>>();
    for (const s of steps) {
      if (!s.model) continue;
      const p = s.provider || '';
      let models = byProvider.get(p);
      if (!models) byProvider.set(p, (models = new Set()));
      models.add(s.model);
    }
    const refs = new Map<string, ModelRef>();
    for (const [p, models] of byProvider) for (const model of models) refs.set(modelKey(p, model), { provider: p || null, model });
    const list = [...refs.entries()];
    const answers = list.length ? await pricing.pricesOf(projectId, list.map(([, r]) => r)) : [];
    return new PriceBook(new Map(list.map(([k], i) => [k, answers[i]])));
  }

  /** By provider ('' for none), then model: a lookup per priced call without building a key. */
  private readonly byProvider = new Map<string, Map<string, ModelPrice | undefined>>();

  price(provider: string | null, model: string | null): ModelPrice | undefined {
    if (!model) return undefined;
    let models = this.byProvider.get(provider || '');
    if (!models) this.byProvider.set(provider || '', (models = new Map()));
    if (!models.has(model)) models.set(model, this.prices.get(modelKey(provider, model)));
    return models.get(model);
  }
}

export type StepCost = { cost_nanos: number } | { cost_unavailable_reason: 'missing_usage' | 'unpriced_model' };

export interface StepUsage {
  provider: string | null;
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  reportedCostNanos: number | null;
}

export function stepCost(s: StepUsage, book: PriceBook): StepCost {
  if (s.reportedCostNanos !== null) return { cost_nanos: s.reportedCostNanos };
  if (s.inputTokens === null && s.outputTokens === null) return { cost_unavailable_reason: 'missing_usage' };
  const price = book.price(s.provider, s.model);
  if (!price) return { cost_unavailable_reason: 'unpriced_model' };
  return { cost_nanos: stepCostNanos(price, s.inputTokens ?? 0, s.outputTokens ?? 0) };
}

/**
 * The sum of model-call costs (each counted `count` times: equal calls cost the same), or absent with a
 * reason: `no_model_calls` when there is no call; `missing_usage` before `unpriced_model`.
 */
export function sumCallCosts(costs: Iterable<{ cost: StepCost; count: number }>): Cost<RunCostReason> {
  let sum = 0;
  let calls = 0;
  let missing = false;
  let unpriced = false;
  for (const { cost, count } of costs) {
    calls += count;
    if ('cost_nanos' in cost) sum += cost.cost_nanos * count;
    else if (cost.cost_unavailable_reason === 'missing_usage') missing = true;
    else unpriced = true;
  }
  if (calls === 0) return { cost_unavailable_reason: 'no_model_calls' };
  if (missing) return { cost_unavailable_reason: 'missing_usage' };
  if (unpriced) return { cost_unavailable_reason: 'unpriced_model' };
  return { cost_nanos: sum };
}

/** The cost of each run (by trace id) from its model steps' usage. */
export function runCosts(traceIds: string[], usage: ModelUsageRow[], book: PriceBook): Map<string, Cost<RunCostReason>> {
  const byRun = new Map<string, { cost: StepCost; count: number }[]>(traceIds.map((id) => [id, []]));
  for (const u of usage) byRun.get(u.traceId)?.push({ cost: stepCost(u, book), count: u.steps });
  return new Map([...byRun].map(([id, costs]) => [id, sumCallCosts(costs)]));
}

/**
 * Session cost from the model calls of all its runs at once: the same answer as `groupCost` over its runs'
 * costs (a run without a model call adds nothing; a call missing usage or unpriced makes its run's cost, and
 * so the sum, unavailable; a sum of 0 is `zero_cost`), without a cost per run.
 */
export function pooledGroupCost(calls: Omit<ModelUsageRow, 'traceId'>[], book: PriceBook): Cost<GroupCostReason> {
  const c = sumCallCosts(calls.map((u) => ({ cost: stepCost(u, book), count: u.steps })));
  if ('cost_nanos' in c) return c.cost_nanos === 0 ? { cost_unavailable_reason: 'zero_cost' } : c;
  return c.cost_unavailable_reason === 'no_model_calls' ? { cost_unavailable_reason: 'zero_cost' } : { cost_unavailable_reason: 'run_cost_unavailable' };
}

/** Session or turn cost from its runs' costs. */
export function groupCost(runs: Cost<RunCostReason>[]): Cost<GroupCostReason> {
  let sum = 0;
  for (const c of runs) {
    if ('cost_nanos' in c) sum += c.cost_nanos;
    else if (c.cost_unavailable_reason !== 'no_model_calls') return { cost_unavailable_reason: 'run_cost_unavailable' };
  }
  return sum === 0 ? { cost_unavailable_reason: 'zero_cost' } : { cost_nanos: sum };
}
