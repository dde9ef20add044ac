/**
 * `svc evals evaluators list|get|create|versions add|versions get` and `svc evals rules list|put|delete`:
 * evaluators, their immutable versions and sampling rules of the active project (docs/evaluations.md).
 * Reads need evals:read, writes evals:write. Bodies go with `--body`/`--file` (`--file -`: standard
 * input), or with flags for the common case; a `config_json` given as a JSON object in a body is sent
 * serialized (the service takes the configuration as a string holding JSON).
 */
import type { Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { enumValue } from './assets.js';

export const MAX_EVALUATOR_PAGE = 200;
export const MAX_RULE_PAGE = 200;
export const EVALUATOR_KIND = { prefix: 'EVALUATOR_KIND_', values: ['deterministic', 'reference_trajectory', 'llm_judge'] } as const;

interface EvaluatorVersion {
  evaluator_id: string;
  version: number;
  display_name: string;
  metric_name: string;
  kind: string;
  config_json: string;
  created_at: string;
  created_by: string;
  created?: boolean;
}

interface Evaluator {
  evaluator_id: string;
  kind: string;
  latest_version: number;
  versions?: number[];
  created_at: string;
  created_by: string;
  latest: EvaluatorVersion;
}

interface SamplingRule {
  rule_id: string;
  evaluator: { evaluator_id: string; version: number };
  subject_kind: string;
  sampling_rate: number;
  per_tick_limit: number;
  enabled: boolean;
  active: boolean;
  updated_at: string;
  updated_by: string;
  created?: boolean;
}

const short = (kind: string) => kind.replace(/^EVALUATOR_KIND_|^SUBJECT_KIND_/, '').toLowerCase();
const EVALUATOR_HEADERS = ['EVALUATOR', 'KIND', 'LATEST', 'METRIC', 'NAME', 'UPDATED_AT'];
const evaluatorRow = (e: Evaluator): Cell[] => [e.evaluator_id, short(e.kind), e.latest_version, e.latest.metric_name, e.latest.display_name, e.latest.created_at];
const RULE_HEADERS = ['RULE', 'EVALUATOR', 'VERSION', 'SUBJECT', 'RATE', 'PER_TICK', 'ENABLED', 'ACTIVE', 'UPDATED_BY'];
const ruleRow = (r: SamplingRule): Cell[] => [r.rule_id, r.evaluator.evaluator_id, r.evaluator.version, short(r.subject_kind), r.sampling_rate, r.per_tick_limit, String(r.enabled), String(r.active), r.updated_by];

function renderVersion(v: EvaluatorVersion, color: boolean): string {
  const rows: Cell[][] = [
    ['evaluator', v.evaluator_id],
    ['version', v.version],
    ['kind', short(v.kind)],
    ['display_name', v.display_name],
    ['metric_name', v.metric_name],
    ['created_at', v.created_at],
    ['created_by', v.created_by],
    ['config_json', v.config_json],
  ];
  if (v.created === false) rows.push(['note', 'identical to the latest version: nothing was written']);
  return renderTable(['FIELD', 'VALUE'], rows, { color });
}

const renderEvaluator = (e: Evaluator, color: boolean) =>
  `evaluator ${e.evaluator_id} (${short(e.kind)}), versions ${e.versions ? e.versions.join(', ') : e.latest_version}\n` + renderVersion(e.latest, color);

/** A body read with --body/--file; a config_json object is serialized (the service takes a string holding JSON). */
function bodyWithConfigText(opts: { body?: string; file?: string }): Record<string, unknown> {
  const b = readBody(opts);
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw usageError('the body must be a JSON object');
  const o = { ...(b as Record<string, unknown>) };
  if (o.config_json !== null && typeof o.config_json === 'object') o.config_json = JSON.stringify(o.config_json);
  return o;
}

/** Either a body (--body/--file) or the flags (flag name -> body field), never both; `required` names flags. */
function bodyOrFlags(opts: Record<string, string | undefined>, fields: Record<string, string>, required: string[]): Record<string, unknown> {
  const given = Object.keys(fields).filter((f) => opts[f] !== undefined);
  if (opts.body !== undefined || opts.file !== undefined) {
    if (given.length > 0) throw usageError(`give the body with --body/--file or with flags, not both (got ${given.map((f) => `--${f}`).join(', ')})`);
    return bodyWithConfigText(opts);
  }
  const missing = required.filter((f) => opts[f] === undefined);
  if (missing.length > 0) throw usageError(`missing ${missing.map((f) => `--${f}`).join(', ')} (or give the whole body with --body/--file)`);
  return Object.fromEntries(given.map((f) => [fields[f], opts[f]]));
}

function versionArg(v: string): number {
  if (v === 'latest') throw usageError('there is no "latest" alias: name an exact version (svc evals evaluators get shows latest_version)');
  if (!/^[1-9][0-9]{0,9}$/.test(v)) throw usageError(`version must be an exact integer of at least 1, got "${v}"`);
  return Number(v);
}

const kindFlag = (v: string) => enumValue('--kind', EVALUATOR_KIND, v);
const enc = encodeURIComponent;

export function registerEvalsEvaluators(evals: Command, ctx: Context): void {
  const project = () => ctx.projectQuery('evaluators and sampling rules belong to a project');
  const ev = evals.command('evaluators').description('evaluators and their immutable versions');

  ev.command('list')
    .description('the evaluators of the active project with their latest versions')
    .option('--kind <kind>', `repeatable or comma-separated: ${EVALUATOR_KIND.values.join(', ')}`, (v: string, prev: string[] | undefined) =>
      collect(v.split(',').map(kindFlag).join(','), prev),
    )
    .option('--limit <n>', `page size (server default 50, at most ${MAX_EVALUATOR_PAGE})`, positiveInt('--limit', MAX_EVALUATOR_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { kind?: string[]; limit?: number; cursor?: string; all?: boolean }) => {
      const kind = opts.kind && [...new Set(opts.kind.flatMap((v) => v.split(',')))];
      const { items, next_cursor } = await readPages<Evaluator>(ctx, '/evaluation/evaluators', 'evaluators', opts, { ...project(), kind });
      ctx.print({ evaluators: items, next_cursor }, () => renderTable(EVALUATOR_HEADERS, items.map(evaluatorRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more evaluators: pass --cursor ${next_cursor} (or --all)`);
    });

  ev.command('get')
    .description('an evaluator: its latest version and every version number')
    .argument('<evaluator_id>')
    .action(async (id: string) => {
      const e = await ctx.client().get<Evaluator>(`/evaluation/evaluators/${enc(id)}`, { query: project() });
      ctx.print(e, () => renderEvaluator(e, ctx.color));
    });

  bodyOptions(
    ev
      .command('create')
      .description('create an evaluator with its version 1 (the body, or --id --name --metric --kind --config)')
      .option('--id <evaluator_id>', 'a slug: lower-case letters, digits, ., _, -', nonEmpty('--id'))
      .option('--name <display_name>', 'display name', nonEmpty('--name'))
      .option('--metric <metric_name>', 'the metric its results carry', nonEmpty('--metric'))
      .option('--kind <kind>', EVALUATOR_KIND.values.join(' | '), kindFlag)
      .option('--config <json>', 'the configuration (JSON text, sent as config_json)', nonEmpty('--config')),
  ).action(async (opts: Record<string, string | undefined>) => {
    const fields = { id: 'evaluator_id', name: 'display_name', metric: 'metric_name', kind: 'kind', config: 'config_json' };
    const body = bodyOrFlags(opts, fields, Object.keys(fields));
    const e = await ctx.client().post<Evaluator>('/evaluation/evaluators', { query: project(), body });
    ctx.print(e, () => renderEvaluator(e, ctx.color));
  });

  const versions = ev.command('versions').description('append or read exact versions (no "latest" alias)');
  bodyOptions(
    versions
      .command('add')
      .description('append a version (the body, or --kind --config with optional --name --metric); identical to the latest writes nothing')
      .argument('<evaluator_id>')
      .option('--kind <kind>', `${EVALUATOR_KIND.values.join(' | ')} (the evaluator's own kind)`, kindFlag)
      .option('--config <json>', 'the configuration (JSON text, sent as config_json)', nonEmpty('--config'))
      .option('--name <display_name>', 'a new display name', nonEmpty('--name'))
      .option('--metric <metric_name>', 'a new metric name', nonEmpty('--metric')),
  ).action(async (id: string, opts: Record<string, string | undefined>) => {
    const body = bodyOrFlags(opts, { kind: 'kind', config: 'config_json', name: 'display_name', metric: 'metric_name' }, ['kind', 'config']);
    const v = await ctx.client().post<EvaluatorVersion>(`/evaluation/evaluators/${enc(id)}/versions`, { query: project(), body });
    ctx.print(v, () => renderVersion(v, ctx.color));
  });

  versions
    .command('get')
    .description('one exact version of an evaluator')
    .argument('<evaluator_id>')
    .argument('<version>', 'an exact integer of at least 1')
    .action(async (id: string, raw: string) => {
      const v = await ctx.client().get<EvaluatorVersion>(`/evaluation/evaluators/${enc(id)}/versions/${versionArg(raw)}`, { query: project() });
      ctx.print(v, () => renderVersion(v, ctx.color));
    });

  const rules = evals.command('rules').description('sampling rules: which new runs an evaluator version scores automatically');

  rules
    .command('list')
    .description('the sampling rules of the active project')
    .option('--evaluator <evaluator_id>', 'only rules citing this evaluator', nonEmpty('--evaluator'))
    .option('--enabled <bool>', 'true or false', (v: string) => {
      if (v !== 'true' && v !== 'false') throw usageError(`--enabled must be true or false, got "${v}"`);
      return v;
    })
    .option('--limit <n>', `page size (server default 50, at most ${MAX_RULE_PAGE})`, positiveInt('--limit', MAX_RULE_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { evaluator?: string; enabled?: string; limit?: number; cursor?: string; all?: boolean }) => {
      const query = { ...project(), evaluator_id: opts.evaluator, enabled: opts.enabled };
      const { items, next_cursor } = await readPages<SamplingRule>(ctx, '/evaluation/sampling-rules', 'sampling_rules', opts, query);
      ctx.print({ sampling_rules: items, next_cursor }, () => renderTable(RULE_HEADERS, items.map(ruleRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more rules: pass --cursor ${next_cursor} (or --all)`);
    });

  bodyOptions(rules.command('put').description('create or replace a sampling rule (the body: rule_id, evaluator, subject_kind, sampling_rate, per_tick_limit, enabled)')).action(
    async (opts: { body?: string; file?: string }) => {
      const r = await ctx.client().put<SamplingRule>('/evaluation/sampling-rules', { query: project(), body: bodyWithConfigText(opts) });
      ctx.print(r, () => renderTable(RULE_HEADERS, [ruleRow(r)], { color: ctx.color }) + (r.created ? 'created\n' : 'replaced (or unchanged)\n'));
    },
  );

  rules
    .command('delete')
    .description('delete a sampling rule (needs --yes)')
    .argument('<rule_id>')
    .option('--yes', 'confirm the deletion')
    .action(async (id: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `deleting sampling rule ${id}`);
      await ctx.client().delete(`/evaluation/sampling-rules/${enc(id)}`, { query: project() });
      ctx.print({ deleted: true, rule_id: id }, () => `Deleted sampling rule ${id}\n`);
    });
}
