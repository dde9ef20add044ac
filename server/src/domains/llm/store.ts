/** Storage port of the LLM price table (`/api/v1/llm/pricing`). */
export interface LlmPriceRecord {
  orgId: string;
  projectId: string;
  /** Exact model string, as in `gen_ai.response.model` / `gen_ai.request.model`. */
  model: string;
  /** Exact `gen_ai.provider.name`; null: any provider. */
  provider: string | null;
  /** Whole micro-dollars (USD × 10^6) per million tokens; exact, no floating point in storage. */
  inputMicrosPerMillion: number;
  outputMicrosPerMillion: number;
  updatedAt: string;
  /** Who set the price, from the credential: the person behind it, and the API key when it was one. */
  updatedByUserId: string | null;
  updatedByApiKeyId: string | null;
}

/** The position of a list page: entries are ordered by model, then provider (any-provider first). */
export interface LlmPricePosition {
  model: string;
  provider: string | null;
}

export interface LlmPriceStore {
  /** Inserts or replaces the entry with the same (project, model, provider). */
  put(r: LlmPriceRecord): Promise<void>;
  find(projectId: string, model: string, provider: string | null): Promise<LlmPriceRecord | undefined>;
  /** Every entry (any provider) of these models in the project. */
  findModels(projectId: string, models: readonly string[]): Promise<LlmPriceRecord[]>;
  /** Up to `limit + 1` entries after the position, ordered by (model, provider), any-provider first. */
  list(projectId: string, opts: { model?: string; after?: LlmPricePosition; limit: number }): Promise<LlmPriceRecord[]>;
  count(projectId: string): Promise<number>;
  /** false when there was no such entry. */
  delete(projectId: string, model: string, provider: string | null): Promise<boolean>;
  /** Removes every price of a project (the project was deleted); returns how many. */
  deleteProject(projectId: string): Promise<number>;
}
