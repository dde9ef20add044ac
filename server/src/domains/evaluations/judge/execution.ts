/**
 * The execution record of a judge evaluation (model.ts `ScoredExecution`), over every call that answered
 * (retries included: their tokens were spent):
 *
 * - `input_tokens`, `output_tokens`: summed over the answered calls that report usage.
 * - `judge_model_state`: RECORDED with `judge_model` the model the last reply names; UNREPORTED when it names none.
 * - `cost_state`: UNREPORTED when any answered call reports no usage (a partial sum would understate the
 *   spend); else UNPRICED when any reply's model (the model it names, else the model asked) has no price
 *   in the project's price table; else CHARGED with `charged_cost_nano_usd` the sum of each call's cost.
 *   The amount is 0 for every state but CHARGED.
 */
import type { ModelPrices, ModelRef } from '../../agent-runs/pricing-port.js';
import { stepCostNanos } from '../../agent-runs/pricing-port.js';
import type { JobStatus, ScoredExecution } from '../model.js';
import type { JudgeCompletion } from './provider.js';

export async function judgeExecution(opts: {
  pricing: ModelPrices;
  projectId: string;
  /** The provider the judge's prices are listed under (null: the any-provider entry). */
  provider: string | null;
  askedModel: string;
  answered: readonly JudgeCompletion[];
  jobStatus: JobStatus;
  failureClasses: readonly string[];
}): Promise<ScoredExecution> {
  const { answered } = opts;
  const input = answered.reduce((n, c) => n + (c.usage?.input_tokens ?? 0), 0);
  const output = answered.reduce((n, c) => n + (c.usage?.output_tokens ?? 0), 0);
  const named = answered.at(-1)?.model;
  let cost: Pick<ScoredExecution, 'cost_state' | 'charged_cost_nano_usd'> = { cost_state: 'UNREPORTED', charged_cost_nano_usd: 0 };
  if (answered.length > 0 && answered.every((c) => c.usage !== undefined)) {
    const refs: ModelRef[] = answered.map((c) => ({ provider: opts.provider, model: c.model ?? opts.askedModel }));
    const prices = await opts.pricing.pricesOf(opts.projectId, refs);
    cost = prices.every((p) => p !== undefined)
      ? { cost_state: 'CHARGED', charged_cost_nano_usd: answered.reduce((n, c, i) => n + stepCostNanos(prices[i]!, c.usage!.input_tokens, c.usage!.output_tokens), 0) }
      : { cost_state: 'UNPRICED', charged_cost_nano_usd: 0 };
  }
  return {
    ...cost,
    input_tokens: input,
    output_tokens: output,
    ...(named !== undefined ? { judge_model_state: 'RECORDED' as const, judge_model: named } : { judge_model_state: 'UNREPORTED' as const }),
    job_status: opts.jobStatus,
    ...(opts.failureClasses.length > 0 ? { job_failure_class: opts.failureClasses.join(';') } : {}),
  };
}
