/**
 * `svc llm pricing list|set|delete`: the model price table of the active project
 * (`/api/v1/llm/pricing`; needs llm:read to list, llm:write to change).
 * `svc llm calls` and `svc llm usage`: the project's model calls, inside agent runs or not, and their
 * tokens and cost by provider and model (`/api/v1/llm/calls`, `/api/v1/llm/usage`; need llm:read).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Context } from '../context.js';
import { nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { windowQuery } from '../time.js';
import { formatCostUsd, formatMs } from './agent-runs.js';
import { windowFlags } from './traces.js';

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

/** A cost, or absent with its reason. */
interface Costed {
  cost_nanos?: number;
  cost_unavailable_reason?: string;
}

export interface LlmCall extends Costed {
  trace_id: string;
  span_id: string;
  started_at: string;
  duration_ms: number;
  canonical_operation: string;
  service_name?: string;
  provider?: string;
  model?: string;
  input_tokens?: number;
  output_tokens?: number;
  span_status: string;
}

export interface LlmUsageSums extends Costed {
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
  calls_without_usage: number;
}

export interface LlmUsage {
  groups: (LlmUsageSums & { provider?: string; model?: string })[];
  totals: LlmUsageSums;
  truncated: boolean;
  since: string;
  until: string;
}

export const MAX_CALL_LIMIT = 200;

/** Dollars, or the reason there is no cost. */
export const costCell = (c: Costed): string =>
  c.cost_nanos !== undefined ? formatCostUsd(c.cost_nanos) : `— (${c.cost_unavailable_reason ?? 'unknown'})`;

const CALL_HEADERS = ['STARTED_AT', 'TRACE_ID', 'SPAN_ID', 'OPERATION', 'SERVICE', 'PROVIDER', 'MODEL', 'INPUT_TOKENS', 'OUTPUT_TOKENS', 'COST_USD', 'DURATION_MS', 'STATUS'];
const callRow = (c: LlmCall): Cell[] => [
  c.started_at,
  c.trace_id,
  c.span_id,
  c.canonical_operation.replace(/^CANONICAL_OPERATION_/, '').toLowerCase(),
  c.service_name,
  c.provider,
  c.model,
  c.input_tokens,
  c.output_tokens,
  costCell(c),
  formatMs(c.duration_ms),
  c.span_status,
];

const USAGE_HEADERS = ['PROVIDER', 'MODEL', 'CALLS', 'INPUT_TOKENS', 'OUTPUT_TOKENS', 'CALLS_WITHOUT_USAGE', 'COST_USD'];
const usageRow = (provider: Cell, model: Cell, u: LlmUsageSums): Cell[] => [
  provider,
  model,
  u.model_calls,
  u.input_tokens,
  u.output_tokens,
  u.calls_without_usage,
  costCell(u),
];

interface CallFilterOpts {
  since?: string;
  until?: string;
  model?: string;
  provider?: string;
  service?: string;
}

/** The filter flags of `svc llm calls` and `svc llm usage`. */
const callFilterFlags = (cmd: Command) =>
  windowFlags(cmd, 'calls starting')
    .option('--model <model>', 'only the calls of this exact model', nonEmpty('--model'))
    .option('--provider <provider>', 'only the calls of this exact provider', nonEmpty('--provider'))
    .option('--service <name>', 'only the calls of this exact service.name', nonEmpty('--service'));

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

  const callFilter = (opts: CallFilterOpts) => ({
    project_id: projectId(),
    ...windowQuery(opts, ctx.now),
    model: opts.model,
    provider: opts.provider,
    service_name: opts.service,
  });

  callFilterFlags(llm.command('calls').description('model calls of the active project, inside agent runs or not, newest first, priced as run steps'))
    .option('--limit <n>', `page size (server default 100, at most ${MAX_CALL_LIMIT})`, positiveInt('--limit', MAX_CALL_LIMIT))
    .option('--cursor <cursor>', 'continue from a next_cursor (of the same query)')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: CallFilterOpts & { limit?: number; cursor?: string; all?: boolean }) => {
      const { items: calls, next_cursor } = await readPages<LlmCall>(ctx, '/llm/calls', 'calls', opts, callFilter(opts));
      ctx.print({ calls, next_cursor }, () => renderTable(CALL_HEADERS, calls.map(callRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more calls: pass --cursor ${next_cursor} (or --all)`);
    });

  callFilterFlags(llm.command('usage').description('model calls, tokens and cost of the active project by provider and model, with totals')).action(
    async (opts: CallFilterOpts) => {
      const usage = await ctx.client().get<LlmUsage>('/llm/usage', { query: callFilter(opts) });
      ctx.print(usage, () =>
        renderTable(
          USAGE_HEADERS,
          [...usage.groups.map((g) => usageRow(g.provider, g.model, g)), usageRow('TOTAL', '', usage.totals)],
          { color: ctx.color },
        ),
      );
      if (usage.truncated && ctx.format === 'table') ctx.note(`more than ${usage.groups.length} provider/model groups: the list is cut (TOTAL covers all); narrow with --model, --provider or --service`);
    },
  );

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
