/**
 * The price lookup the agent-run cost calculation uses (docs/agent-model.md, "Step cost"). Built by
 * the llm domain (`ctx.llmPricing`, an `LlmPricingService`); the run-cost code depends on this port only.
 *
 * A price belongs to one project and names a model (the exact `gen_ai.response.model`, else
 * `gen_ai.request.model`) and optionally a provider (`gen_ai.provider.name`). For a step with provider
 * P and model M the price is the entry (P, M) when there is one, else the any-provider entry (null, M);
 * a step without a provider matches only (null, M). Case and spacing are compared exactly.
 *
 * A missing price is `undefined`, never zero: the run then reports `unpriced_model`.
 */

/** Billionths of a US dollar per token; may be fractional (USD per million tokens × 1000). */
export interface ModelPrice {
  inputNanosPerToken: number;
  outputNanosPerToken: number;
}

/** One model as a step names it. */
export interface ModelRef {
  /** `gen_ai.provider.name` (else `gen_ai.system`); null or '' when the step names none. */
  provider: string | null;
  model: string;
}

export interface ModelPricing {
  /** The price of one model in a project, or undefined when the project has no entry that applies. */
  priceOf(projectId: string, provider: string | null, model: string): Promise<ModelPrice | undefined>;
  /**
   * Many models at once (one query for the distinct models): the answer is aligned with `models`,
   * `undefined` where no entry applies.
   */
  pricesOf(projectId: string, models: readonly ModelRef[]): Promise<(ModelPrice | undefined)[]>;
}

/**
 * The calculated cost of one model step in whole nanos: input tokens × input price + output tokens ×
 * output price, computed exactly (prices are whole micro-dollars per million tokens, i.e. thousandths
 * of a nano per token) and rounded ONCE, half up, to a whole nano. Token counts are non-negative
 * integers; a count the step does not report is the caller's decision (see `missing_usage`).
 */
export function stepCostNanos(price: ModelPrice, inputTokens: number, outputTokens: number): number {
  // nanos per token = micros per million tokens / 1000, so × 1000 recovers the stored integer exactly.
  const inMilli = Math.round(price.inputNanosPerToken * 1000);
  const outMilli = Math.round(price.outputNanosPerToken * 1000);
  const inTokens = Math.trunc(inputTokens);
  const outTokens = Math.trunc(outputTokens);
  // In doubles while every term is an exact integer (nearly always: a session's list prices thousands of
  // calls); in BigInt otherwise. Both round half up on the same exact sum.
  const exact = inTokens * inMilli + outTokens * outMilli + 500;
  if (Number.isSafeInteger(exact) && exact >= 0 && Number.isSafeInteger(inTokens * inMilli) && Number.isSafeInteger(outTokens * outMilli)) {
    // The quotient of a double division can land on the next integer near 2^53: corrected exactly.
    let q = Math.floor(exact / 1000);
    if (q * 1000 > exact) q--;
    else if ((q + 1) * 1000 <= exact) q++;
    return q;
  }
  const milliNanos = BigInt(inTokens) * BigInt(inMilli) + BigInt(outTokens) * BigInt(outMilli);
  return Number((milliNanos + 500n) / 1000n);
}
