/**
 * The model prices the run cost reads (docs/agent-model.md, "Step cost"). The contract is the llm
 * domain's port (`domains/llm/pricing-port.ts`, implemented by `LlmPricingService`, `ctx.llmPricing`):
 * this file names the part the agent reads use, so the agent-runs domain depends on nothing else of the
 * llm domain and tests can pass a fake.
 *
 * Used: `pricesOf(projectId, models)` answering, aligned with `models`, the price of each (provider,
 * model) in that project's price table, `undefined` where no entry applies (never a zero price for a
 * missing one). Prices are read when a run is read; `priceOf` is not used here.
 */
import type { ModelPrice, ModelPricing, ModelRef } from '../llm/pricing-port.js';

export { stepCostNanos } from '../llm/pricing-port.js';
export type { ModelPrice, ModelRef };

/** The part of the pricing service the agent reads call. */
export type ModelPrices = Pick<ModelPricing, 'pricesOf'>;
