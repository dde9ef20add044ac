/**
 * `svc llm pricing list|set|delete`: the model price table of the active project
 * (`/api/v1/llm/pricing`; needs llm:read to list, llm:write to change).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Context } from '../context.js';
import { nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const MAX_USD_PER_MILLION = 10_000;

export interface LlmPrice {
  project_id: string;
  model: string;
  provider: string | null;
  input_usd_per_million_tokens: number;
  output_usd_per_million_tokens: number;
  updated_at: string;
  updated_by: { user_id: string | null; api_key_id: string | null };
}

const HEADERS = ['MODEL', 'PROVIDER', 'INPUT_USD_PER_MTOK', 'OUTPUT_USD_PER_MTOK', 'UPDATED_AT'];
const row = (p: LlmPrice): Cell[] => [p.model, p.provider ?? '(any)', p.input_usd_per_million_tokens, p.output_usd_per_million_tokens, p.updated_at];

/** A decimal number of US dollars per million tokens: 0 to 10000, at most 6 decimal places (the server's rule). */
export function usdPerMillion(what: string) {
  return (value: string): number => {
    const text = value.trim();
    if (!/^\d+(\.\d{1,6})?$/.test(text) || Number(text) > MAX_USD_PER_MILLION)
      throw new InvalidArgumentError(`${what} must be a decimal number of US dollars per million tokens from 0 to ${MAX_USD_PER_MILLION}, with at most 6 decimal places.`);
    return Number(text);
  };
}

export function registerLlm(program: Command, ctx: Context): void {
  const llm = program.command('llm').description('AI execution: LLM usage and cost');
  const pricing = llm.command('pricing').description('the model price table of the active project (cost of agent runs)');
  const projectId = () => ctx.activeProject()?.value;

  pricing
    .command('list')
    .description('list model prices (ordered by model, then provider)')
    .option('--model <model>', 'only the prices of this exact model', nonEmpty('--model'))
    .option('--limit <n>', 'page size', positiveInt('--limit'))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { model?: string; limit?: number; cursor?: string; all?: boolean }) => {
      const { items: prices, next_cursor: next } = await readPages<LlmPrice>(ctx, '/llm/pricing', 'prices', opts, {
        project_id: projectId(),
        model: opts.model,
      });
      ctx.print({ prices, next_cursor: next }, () => renderTable(HEADERS, prices.map(row), { color: ctx.color }));
      if (next !== null && ctx.format === 'table') ctx.note(`more prices: svc llm pricing list --cursor ${next}`);
    });

  pricing
    .command('set')
    .description('set the price of a model (insert or replace); without --provider it applies to any provider')
    .argument('<model>', 'the exact model name (gen_ai.response.model / gen_ai.request.model)')
    // Not --input/--output: --output is the global output format flag, parsed wherever it appears.
    .requiredOption('--input-price <usd_per_mtok>', 'US dollars per million input tokens (0 to 10000, at most 6 decimals)', usdPerMillion('--input-price'))
    .requiredOption('--output-price <usd_per_mtok>', 'US dollars per million output tokens (0 to 10000, at most 6 decimals)', usdPerMillion('--output-price'))
    .option('--provider <provider>', 'only for this provider (gen_ai.provider.name); it wins over the any-provider price', nonEmpty('--provider'))
    .action(async (model: string, opts: { inputPrice: number; outputPrice: number; provider?: string }) => {
      const body: Record<string, unknown> = { model, input_usd_per_million_tokens: opts.inputPrice, output_usd_per_million_tokens: opts.outputPrice };
      if (opts.provider !== undefined) body.provider = opts.provider;
      const price = await ctx.client().request<LlmPrice>('PUT', '/llm/pricing', { query: { project_id: projectId() }, body });
      ctx.print(price, () => renderTable(HEADERS, [row(price)], { color: ctx.color }));
    });

  pricing
    .command('delete')
    .description('delete the price of a model (needs --yes); without --provider, the any-provider price')
    .argument('<model>', 'the exact model name')
    .option('--provider <provider>', 'the provider-specific price instead', nonEmpty('--provider'))
    .option('--yes', 'confirm the deletion')
    .action(async (model: string, opts: { provider?: string; yes?: boolean }) => {
      const label = opts.provider === undefined ? `${model} (any provider)` : `${model} (provider ${opts.provider})`;
      requireYes(opts.yes, `deleting the price of ${label}`);
      await ctx.client().delete('/llm/pricing', { query: { project_id: projectId(), model, provider: opts.provider } });
      ctx.print({ deleted: true, model, provider: opts.provider ?? null }, () => `Deleted the price of ${label}\n`);
    });
}
