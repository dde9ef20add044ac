/**
 * `svc evals budget get|set`: the organization's daily evaluation budget (`/api/v1/evaluation/budget`;
 * docs/evaluations-sampling.md). Organization-wide: no project is sent. `set` takes flags and/or a JSON
 * body (`--body`, `--file`, `--file -`); flags win over the body's fields, and a field given by neither
 * keeps its current value (read first), so changing one limit never clears the other.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { renderTable, type Cell } from '../output.js';

export interface EvaluationBudget {
  daily_limit_nano_usd: number;
  daily_evaluation_limit: number | null;
  budget_set: boolean;
  day: string;
  spent_nano_usd: number;
  evaluations: number;
  remaining_nano_usd: number;
  remaining_evaluations: number | null;
  resets_at: string;
  updated_at: string | null;
  updated_by: string | null;
  version: number;
}

const PATH = '/evaluation/budget';

/** A whole number from `min`, exact in a double; `none` (count limit only) is kept as the word (commander drops a null). */
function wholeNumber(what: string, min: number, allowNone: boolean) {
  return (v: string): number | 'none' => {
    if (allowNone && v === 'none') return 'none';
    if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v)))
      throw new InvalidArgumentError(`${what} must be a whole number from ${min} to ${Number.MAX_SAFE_INTEGER}${allowNone ? ', or none' : ''}.`);
    return Number(v);
  };
}

const usd = (nanos: number) => `${(nanos / 1e9).toFixed(9).replace(/0+$/, '').replace(/\.$/, '')} USD`;

function renderBudget(b: EvaluationBudget, color: boolean): string {
  const rows: Cell[][] = [
    ['daily_limit_nano_usd', `${b.daily_limit_nano_usd} (${usd(b.daily_limit_nano_usd)})`],
    ['daily_evaluation_limit', b.daily_evaluation_limit ?? 'none'],
    ['day (UTC)', b.day],
    ['spent_nano_usd', `${b.spent_nano_usd} (${usd(b.spent_nano_usd)})`],
    ['evaluations', b.evaluations],
    ['remaining_nano_usd', b.remaining_nano_usd],
    ['remaining_evaluations', b.remaining_evaluations ?? 'no cap'],
    ['resets_at', b.resets_at],
    ['budget_set', b.budget_set ? 'yes' : 'no (default: model judges refused, free evaluations uncapped)'],
    ['updated_at', b.updated_at ?? undefined],
    ['updated_by', b.updated_by ?? undefined],
    ['version', b.version],
  ];
  return renderTable(['FIELD', 'VALUE'], rows, { color });
}

export function registerEvalsBudget(evals: Command, ctx: Context): void {
  const budget = evals.command('budget').description("the organization's daily evaluation budget (organization-wide; no project)");

  budget
    .command('get')
    .description("the budget in force and today's (UTC) spend against it")
    .action(async () => {
      const b = await ctx.client().get<EvaluationBudget>(PATH);
      ctx.print(b, () => renderBudget(b, ctx.color));
    });

  bodyOptions(
    budget
      .command('set')
      .description('sets the budget (needs evals:write and an organization-level credential)')
      .option('--daily-limit-nano-usd <n>', 'charged model-judge cost per UTC day, in billionths of a US dollar (0 refuses model judges)', wholeNumber('--daily-limit-nano-usd', 0, false))
      .option('--daily-evaluation-limit <n|none>', 'evaluations of every kind per UTC day, or none for no cap', wholeNumber('--daily-evaluation-limit', 1, true)),
  ).action(async (opts: { dailyLimitNanoUsd?: number; dailyEvaluationLimit?: number | 'none'; body?: string; file?: string }) => {
    const fromBody = opts.body !== undefined || opts.file !== undefined ? readBody(opts) : {};
    if (typeof fromBody !== 'object' || fromBody === null || Array.isArray(fromBody)) throw usageError('the body must be a JSON object');
    const body: Record<string, unknown> = { ...fromBody };
    if (opts.dailyLimitNanoUsd !== undefined) body.daily_limit_nano_usd = opts.dailyLimitNanoUsd;
    if (opts.dailyEvaluationLimit !== undefined) body.daily_evaluation_limit = opts.dailyEvaluationLimit === 'none' ? null : opts.dailyEvaluationLimit;
    if (Object.keys(body).length === 0) throw usageError('give --daily-limit-nano-usd, --daily-evaluation-limit, or a body with --body or --file');
    const missing = ['daily_limit_nano_usd', 'daily_evaluation_limit'].filter((f) => !Object.hasOwn(body, f));
    if (missing.length) {
      // A PUT replaces the budget: the limits not given keep their current values.
      const current = await ctx.client().get<EvaluationBudget>(PATH);
      if (missing.includes('daily_limit_nano_usd') && !current.budget_set) throw usageError('no budget is set yet: give --daily-limit-nano-usd too');
      for (const f of missing) body[f] = current[f as 'daily_limit_nano_usd' | 'daily_evaluation_limit'];
    }
    const b = await ctx.client().put<EvaluationBudget>(PATH, { body });
    ctx.print(b, () => renderBudget(b, ctx.color));
  });
}
