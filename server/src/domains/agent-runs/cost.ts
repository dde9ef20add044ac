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
 *   `stepCost` and summed by `callGroupCosts`, as the steps and runs here.
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
    const refs = new Map<string, ModelRef>();
    for (const s of steps) if (s.model) refs.set(modelKey(s.provider, s.model), { provider: s.provider || null, model: s.model });
    const list = [...refs.entries()];
    const answers = list.length ? await pricing.pricesOf(projectId, list.map(([, r]) => r)) : [];
    return new PriceBook(new Map(list.map(([k], i) => [k, answers[i]])));
  }

  price(provider: string | null, model: string | null): ModelPrice | undefined {
    return model ? this.prices.get(modelKey(provider, model)) : undefined;
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
 * The cost of each group of model calls (by key): the sum of its calls' costs, or absent with a reason
 * (`no_model_calls` for a key without calls; `missing_usage` wins over `unpriced_model`). `count` equal
 * calls cost the same, so each is priced once and counted.
 */
export function callGroupCosts<K>(keys: readonly K[], calls: { key: K; usage: StepUsage; count: number }[], book: PriceBook): Map<K, Cost<RunCostReason>> {
  const acc = new Map<K, { sum: number; steps: number; missing: boolean; unpriced: boolean }>();
  for (const k of keys) acc.set(k, { sum: 0, steps: 0, missing: false, unpriced: false });
  for (const { key, usage, count } of calls) {
    const a = acc.get(key);
    if (!a) continue;
    a.steps += count;
    const c = stepCost(usage, book);
    if ('cost_nanos' in c) a.sum += c.cost_nanos * count;
    else if (c.cost_unavailable_reason === 'missing_usage') a.missing = true;
    else a.unpriced = true;
  }
  const out = new Map<K, Cost<RunCostReason>>();
  for (const [k, a] of acc) {
    if (a.steps === 0) out.set(k, { cost_unavailable_reason: 'no_model_calls' });
    else if (a.missing) out.set(k, { cost_unavailable_reason: 'missing_usage' });
    else if (a.unpriced) out.set(k, { cost_unavailable_reason: 'unpriced_model' });
    else out.set(k, { cost_nanos: a.sum });
  }
  return out;
}

/** The cost of each run (by trace id) from its model steps' usage. */
export function runCosts(traceIds: string[], usage: ModelUsageRow[], book: PriceBook): Map<string, Cost<RunCostReason>> {
  return callGroupCosts(traceIds, usage.map((u) => ({ key: u.traceId, usage: u, count: u.steps })), book);
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
