/**
 * The LLM model price table of a project (`/api/v1/llm/pricing`) and the price lookup of the agent-run
 * cost calculation (the `ModelPricing` port, docs/agent-model.md "Step cost").
 *
 * Prices are kept exactly as whole micro-dollars per million tokens; nanos per token are that / 1000
 * (fractional unless the price is a whole multiple of $0.001 per million tokens). The cost of a step
 * is rounded once, to whole nanos (`stepCostNanos` in pricing-port.ts).
 */
import { conflict, invalidRequest, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { ModelPrice, ModelPricing, ModelRef } from './pricing-port.js';
import { MAX_PRICE_DECIMALS, MAX_USD_PER_MILLION } from './schemas.js';
import type { LlmPricePosition, LlmPriceRecord } from './store.js';

/** Entries one project may hold; a PUT of a new entry beyond it is refused (replacing one is not). */
export const MAX_PRICES_PER_PROJECT = 10_000;

const MICROS = 1_000_000;

/**
 * USD per million tokens -> whole micro-dollars per million tokens; 400 when the value is not a finite
 * number from 0 to the maximum with at most 6 decimals. The number is read in its shortest decimal
 * form (what the client wrote, for up to 15 significant digits).
 */
export function toMicros(field: string, usd: unknown): number {
  if (typeof usd !== 'number' || !Number.isFinite(usd)) throw invalidRequest(`${field} must be a finite number`);
  if (usd < 0 || usd > MAX_USD_PER_MILLION) throw invalidRequest(`${field} must be between 0 and ${MAX_USD_PER_MILLION}`);
  if (usd === 0) return 0;
  const text = String(usd);
  // Below 1e-6 the shortest form uses an exponent: more than 6 decimals either way.
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m || (m[2] ?? '').length > MAX_PRICE_DECIMALS) throw invalidRequest(`${field} must have at most ${MAX_PRICE_DECIMALS} decimal places`);
  return Number(m[1]) * MICROS + Number((m[2] ?? '').padEnd(MAX_PRICE_DECIMALS, '0'));
}

/** Exact: a correctly rounded division gives the same number as parsing the decimal text. */
const toUsd = (micros: number) => micros / MICROS;

export function priceView(r: LlmPriceRecord) {
  return {
    project_id: r.projectId,
    model: r.model,
    provider: r.provider,
    input_usd_per_million_tokens: toUsd(r.inputMicrosPerMillion),
    output_usd_per_million_tokens: toUsd(r.outputMicrosPerMillion),
    updated_at: r.updatedAt,
    updated_by: { user_id: r.updatedByUserId, api_key_id: r.updatedByApiKeyId },
  };
}

const nanos = (r: LlmPriceRecord): ModelPrice => ({
  inputNanosPerToken: r.inputMicrosPerMillion / 1000,
  outputNanosPerToken: r.outputMicrosPerMillion / 1000,
});

/** '' names no provider, like an absent attribute. */
const providerOf = (p: string | null | undefined) => (p === undefined || p === null || p === '' ? null : p);

export interface PutPriceInput {
  model: string;
  provider?: string | null;
  input_usd_per_million_tokens: number;
  output_usd_per_million_tokens: number;
}

export class LlmPricingService implements ModelPricing {
  constructor(
    private readonly store: ControlStore,
    private readonly clock: Clock,
    private readonly maxPerProject = MAX_PRICES_PER_PROJECT,
  ) {}

  // --- the ModelPricing port ---

  async priceOf(projectId: string, provider: string | null, model: string): Promise<ModelPrice | undefined> {
    return (await this.pricesOf(projectId, [{ provider, model }]))[0];
  }

  async pricesOf(projectId: string, models: readonly ModelRef[]): Promise<(ModelPrice | undefined)[]> {
    if (models.length === 0) return [];
    const rows = await this.store.llmPrices.findModels(
      projectId,
      models.map((m) => m.model),
    );
    const byKey = new Map<string, LlmPriceRecord>();
    for (const r of rows) byKey.set(JSON.stringify([r.model, r.provider]), r);
    return models.map((m) => {
      const provider = providerOf(m.provider);
      const hit = (provider !== null && byKey.get(JSON.stringify([m.model, provider]))) || byKey.get(JSON.stringify([m.model, null]));
      return hit ? nanos(hit) : undefined;
    });
  }

  // --- the routes (the project is resolved by the route: rule 3 of Authentication) ---

  async list(projectId: string, opts: { model?: string; after?: LlmPricePosition; limit: number }) {
    return this.store.llmPrices.list(projectId, opts);
  }

  /** Inserts or replaces the entry; an identical PUT changes nothing and answers the stored entry. */
  async put(caller: Principal, project: { id: string; orgId: string }, input: PutPriceInput): Promise<LlmPriceRecord> {
    const provider = providerOf(input.provider);
    const inputMicros = toMicros('input_usd_per_million_tokens', input.input_usd_per_million_tokens);
    const outputMicros = toMicros('output_usd_per_million_tokens', input.output_usd_per_million_tokens);
    const existing = await this.store.llmPrices.find(project.id, input.model, provider);
    if (existing && existing.inputMicrosPerMillion === inputMicros && existing.outputMicrosPerMillion === outputMicros) return existing;
    if (!existing && (await this.store.llmPrices.count(project.id)) >= this.maxPerProject)
      throw conflict(`the project already has ${this.maxPerProject} model prices; delete some first`);
    const record: LlmPriceRecord = {
      orgId: project.orgId,
      projectId: project.id,
      model: input.model,
      provider,
      inputMicrosPerMillion: inputMicros,
      outputMicrosPerMillion: outputMicros,
      updatedAt: this.clock.now().toISOString(),
      updatedByUserId: caller.userId,
      updatedByApiKeyId: caller.kind === 'api_key' ? caller.keyId : null,
    };
    await this.store.llmPrices.put(record);
    return record;
  }

  async delete(projectId: string, model: string, provider: string | null | undefined): Promise<void> {
    if (!(await this.store.llmPrices.delete(projectId, model, providerOf(provider)))) throw notFound('model price');
  }

  /** The project was deleted: its prices go with it. */
  async forgetProject(projectId: string): Promise<void> {
    await this.store.llmPrices.deleteProject(projectId);
  }
}
