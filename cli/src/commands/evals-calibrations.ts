/**
 * `svc evals calibrations create|list`: how far a model judge agrees with people's judgments
 * (`/api/v1/evaluation/evaluators/{id}/versions/{version}/calibrations`, `/api/v1/evaluation/evaluators/{id}/calibrations`;
 * docs/evaluations-calibration.md). `create` takes `--run` (repeatable or comma-separated) and
 * `--min-labels`, or the whole body with `--body`/`--file` (`--file -`: standard input), never both.
 * Creating needs evals:write, listing evals:read.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, positiveInt, traceIdFlag } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const MAX_CALIBRATION_RUNS = 200;
export const MAX_CALIBRATION_PAGE = 200;
export const CALIBRATION_STATES = ['CALIBRATED', 'UNCALIBRATED', 'INSUFFICIENT_LABELS', 'UNDEFINED_STATISTIC', 'NOT_APPLICABLE'] as const;

interface Calibration {
  calibration_id: string;
  evaluator: { evaluator_id: string; version: number };
  metric_name: string;
  state: string;
  statistic?: string;
  value_kind?: string;
  agreement?: number;
  agreement_rate?: number;
  pair_count: number;
  excluded_count: number;
  excluded: Record<string, number>;
  runs_without_judgment: number;
  min_labels: number;
  subject_refs: string[];
  judgment_ids: string[];
  result_ids: string[];
  created_at: string;
  created_by: string;
  created?: boolean;
}

const enc = encodeURIComponent;
const num = (v: number | undefined) => (v === undefined ? undefined : Number(v.toFixed(4)));

function versionArg(v: string): number {
  if (v === 'latest') throw usageError('there is no "latest" alias: name an exact version (svc evals evaluators get shows latest_version)');
  if (!/^[1-9][0-9]{0,9}$/.test(v)) throw usageError(`version must be an exact integer of at least 1, got "${v}"`);
  return Number(v);
}

const runFlag = (value: string, previous: string[] | undefined): string[] => {
  let out = previous;
  for (const item of value.split(',')) out = collect(traceIdFlag('--run')(item.trim()), out);
  return out ?? [];
};

const stateFlag = (value: string, previous: string[] | undefined): string[] => {
  let out = previous;
  for (const item of value.split(',')) {
    const s = item.trim().toUpperCase();
    if (!(CALIBRATION_STATES as readonly string[]).includes(s)) throw new InvalidArgumentError(`--state must be one of ${CALIBRATION_STATES.join(', ')}, got "${item}".`);
    out = collect(s, out);
  }
  return out ?? [];
};

function renderCalibration(c: Calibration, color: boolean): string {
  const rows: Cell[][] = [
    ['calibration_id', c.calibration_id],
    ['evaluator', `${c.evaluator.evaluator_id} v${c.evaluator.version}`],
    ['metric_name', c.metric_name],
    ['state', c.state],
    ['statistic', c.statistic],
    ['agreement', num(c.agreement)],
    ['agreement_rate', c.agreement_rate === undefined ? undefined : `${num(c.agreement_rate)} (raw match rate, not the calibration)`],
    ['pairs', c.pair_count],
    ['excluded', `${c.excluded_count}${c.excluded_count ? ` (${Object.entries(c.excluded).filter(([, n]) => n > 0).map(([k, n]) => `${k}: ${n}`).join(', ')})` : ''}`],
    ['runs_without_judgment', c.runs_without_judgment],
    ['min_labels', c.min_labels],
    ['runs', c.subject_refs.length],
    ['created_at', c.created_at],
    ['created_by', c.created_by],
  ];
  if (c.created === false) rows.push(['note', 'the same judgments and judge results were calibrated before: that record is shown, nothing was written']);
  return renderTable(['FIELD', 'VALUE'], rows, { color });
}

const HEADERS = ['CALIBRATION', 'VERSION', 'STATE', 'STATISTIC', 'AGREEMENT', 'PAIRS', 'MIN_LABELS', 'CREATED_AT'];
const row = (c: Calibration): Cell[] => [c.calibration_id, c.evaluator.version, c.state, c.statistic, num(c.agreement), c.pair_count, c.min_labels, c.created_at];

export function registerEvalsCalibrations(evals: Command, ctx: Context): void {
  const project = () => ctx.projectQuery('calibrations belong to a project');
  const cal = evals.command('calibrations').description("a model judge's agreement with people's judgments");

  bodyOptions(
    cal
      .command('create')
      .description('calibrate one exact evaluator version on some runs (the same inputs again answer the stored record)')
      .argument('<evaluator_id>')
      .argument('<version>', 'an exact integer of at least 1')
      .option('--run <run_id>', `a run to compare on; repeatable or comma-separated, at most ${MAX_CALIBRATION_RUNS}`, runFlag)
      .option('--min-labels <n>', 'the fewest comparable judgments that make a calibration (required; at least 1)', positiveInt('--min-labels')),
  ).action(async (id: string, rawVersion: string, opts: { run?: string[]; minLabels?: number; body?: string; file?: string }) => {
    const version = versionArg(rawVersion);
    let body: unknown;
    if (opts.body !== undefined || opts.file !== undefined) {
      if (opts.run !== undefined || opts.minLabels !== undefined) throw usageError('give the body with --body/--file or with --run/--min-labels, not both');
      body = readBody(opts);
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw usageError('the body must be a JSON object');
    } else {
      if (!opts.run?.length) throw usageError('name at least one run with --run (or give the body with --body/--file)');
      if (opts.minLabels === undefined) throw usageError('--min-labels is required');
      const runs = [...new Set(opts.run.map((r) => r.toLowerCase()))];
      if (runs.length > MAX_CALIBRATION_RUNS) throw usageError(`at most ${MAX_CALIBRATION_RUNS} runs per calibration, got ${runs.length}`);
      body = { subject_refs: runs, min_labels: opts.minLabels };
    }
    const c = await ctx.client().post<Calibration>(`/evaluation/evaluators/${enc(id)}/versions/${version}/calibrations`, { query: project(), body });
    ctx.print(c, () => renderCalibration(c, ctx.color));
  });

  cal
    .command('list')
    .description('the calibration records of an evaluator, newest first')
    .argument('<evaluator_id>')
    .option('--evaluator-version <n>', 'only records of this exact evaluator version', (v: string) => versionArg(v))
    .option('--state <state>', `repeatable or comma-separated: ${CALIBRATION_STATES.join(', ')}`, stateFlag)
    .option('--limit <n>', `page size (server default 50, at most ${MAX_CALIBRATION_PAGE})`, positiveInt('--limit', MAX_CALIBRATION_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (id: string, opts: { evaluatorVersion?: number; state?: string[]; limit?: number; cursor?: string; all?: boolean }) => {
      const state = opts.state && [...new Set(opts.state)];
      const { items, next_cursor } = await readPages<Calibration>(ctx, `/evaluation/evaluators/${enc(id)}/calibrations`, 'calibrations', opts, {
        ...project(),
        version: opts.evaluatorVersion,
        state,
      });
      ctx.print({ calibrations: items, next_cursor }, () => renderTable(HEADERS, items.map(row), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more calibrations: pass --cursor ${next_cursor} (or --all)`);
    });
}
