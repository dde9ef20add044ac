/**
 * `svc evals datasets list|get|create|update|delete|promote|remove|items|replay`: datasets of reviewed
 * cases and their sealed versions, and sandbox replay (docs/evaluations-datasets.md). Reads and replay
 * need evals:read; writes evals:write; promotion also scores:write through a signed-in person (an API key
 * cannot promote). Bodies go with `--body`/`--file` (`--file -`: standard input), or flags for the common case.
 */
import type { Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const MAX_DATASET_PAGE = 200;
export const MAX_ITEM_PAGE = 200;

interface DatasetSummary {
  dataset_id: string;
  display_name: string;
  description: string;
  latest_version: number;
  created_at: string;
  created_by: string;
  updated_at: string;
}
interface Version {
  version: number;
  item_count: number;
  change: string;
  changed_count: number;
  sealed_at: string;
  sealed_by: string;
  cited: boolean;
}
interface Dataset extends DatasetSummary {
  versions: Version[];
}
interface Seal {
  dataset: DatasetSummary;
  version: Version;
  sealed: boolean;
  subjects?: { subject_ref: string; item_id: string; added: boolean }[];
}
interface Item {
  item_id: string;
  position: number;
  review: { annotation_id: string; reviewer_id: string; reviewed_at: string };
  case: { run: { run_id: string; status: string | null; step_count: number; tool_calls: number }; withheld_classes: string[] };
}
interface Replay {
  plan_digest: string;
  counts: { steps: number; tool_calls: number; replayed: number; stubbed: number; nothing_recorded: number };
  sandbox_tools: string[];
  steps: { index: number; canonical_operation: string; tool_name: string | null; effect?: string; disposition: string }[];
}

const enc = encodeURIComponent;
const DATASET_HEADERS = ['DATASET', 'LATEST', 'NAME', 'UPDATED_AT'];
const datasetRow = (d: DatasetSummary): Cell[] => [d.dataset_id, d.latest_version, d.display_name, d.updated_at];
const VERSION_HEADERS = ['VERSION', 'ITEMS', 'CHANGE', 'CHANGED', 'SEALED_AT', 'SEALED_BY', 'CITED'];
const versionRow = (v: Version): Cell[] => [v.version, v.item_count, v.change, v.changed_count, v.sealed_at, v.sealed_by, String(v.cited)];
const ITEM_HEADERS = ['POS', 'ITEM', 'RUN', 'STATUS', 'STEPS', 'TOOLS', 'WITHHELD', 'REVIEWER', 'REVIEWED_AT'];
const itemRow = (i: Item): Cell[] => [
  i.position,
  i.item_id,
  i.case.run.run_id,
  i.case.run.status ?? '',
  i.case.run.step_count,
  i.case.run.tool_calls,
  i.case.withheld_classes.join(',') || '-',
  i.review.reviewer_id,
  i.review.reviewed_at,
];

/** A dataset version: an exact integer of at least 1 (no alias). */
export function datasetVersionArg(v: string): number {
  if (v === 'latest') throw usageError('there is no "latest" alias: name an exact version (svc evals datasets get shows latest_version)');
  if (!/^[1-9][0-9]{0,9}$/.test(v)) throw usageError(`version must be an exact integer of at least 1, got "${v}"`);
  return Number(v);
}

const EFFECTS = ['none', 'internal', 'external'];
function effectArg(flag: string, v: string): string {
  const e = v.toLowerCase().replace(/^sandbox_effect_/, '');
  if (!EFFECTS.includes(e)) throw usageError(`${flag} must be one of ${EFFECTS.join(', ')}, got "${v}"`);
  return `SANDBOX_EFFECT_${e.toUpperCase()}`;
}

function renderSeal(s: Seal, color: boolean): string {
  const head = s.sealed ? `sealed version ${s.version.version} of ${s.dataset.dataset_id}` : `nothing new: ${s.dataset.dataset_id} stays at version ${s.version.version}`;
  const subjects = s.subjects ? renderTable(['RUN', 'ITEM', 'ADDED'], s.subjects.map((x) => [x.subject_ref, x.item_id, String(x.added)]), { color }) : '';
  return `${head}\n${renderTable(VERSION_HEADERS, [versionRow(s.version)], { color })}${subjects}`;
}

export function registerEvalsDatasets(evals: Command, ctx: Context): void {
  const project = () => ctx.projectQuery('datasets belong to a project');
  const ds = evals.command('datasets').description('datasets of reviewed cases: immutable versions, promotion, removal, sandbox replay');

  ds.command('list')
    .description('the datasets of the active project')
    .option('--limit <n>', `page size (server default 50, at most ${MAX_DATASET_PAGE})`, positiveInt('--limit', MAX_DATASET_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { limit?: number; cursor?: string; all?: boolean }) => {
      const { items, next_cursor } = await readPages<DatasetSummary>(ctx, '/evaluation/datasets', 'datasets', opts, project());
      ctx.print({ datasets: items, next_cursor }, () => renderTable(DATASET_HEADERS, items.map(datasetRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more datasets: pass --cursor ${next_cursor} (or --all)`);
    });

  ds.command('get')
    .description('a dataset and its sealed versions')
    .argument('<dataset_id>')
    .action(async (id: string) => {
      const d = await ctx.client().get<Dataset>(`/evaluation/datasets/${enc(id)}`, { query: project() });
      ctx.print(d, () => `dataset ${d.dataset_id} (${d.display_name}), latest version ${d.latest_version}\n` + renderTable(VERSION_HEADERS, d.versions.map(versionRow), { color: ctx.color }));
    });

  ds.command('create')
    .description('create a dataset (no version until the first promotion)')
    .argument('<dataset_id>', 'a slug: lower-case letters, digits, ., _, -')
    .option('--name <display_name>', 'display name (default: the id)', nonEmpty('--name'))
    .option('--description <text>', 'description')
    .action(async (id: string, opts: { name?: string; description?: string }) => {
      const body = { dataset_id: id, ...(opts.name !== undefined ? { display_name: opts.name } : {}), ...(opts.description !== undefined ? { description: opts.description } : {}) };
      const d = await ctx.client().post<DatasetSummary>('/evaluation/datasets', { query: project(), body });
      ctx.print(d, () => renderTable(DATASET_HEADERS, [datasetRow(d)], { color: ctx.color }));
    });

  ds.command('update')
    .description('edit the metadata (display name, description); versions never change')
    .argument('<dataset_id>')
    .option('--name <display_name>', 'new display name', nonEmpty('--name'))
    .option('--description <text>', 'new description')
    .action(async (id: string, opts: { name?: string; description?: string }) => {
      if (opts.name === undefined && opts.description === undefined) throw usageError('give --name and/or --description');
      const body = { ...(opts.name !== undefined ? { display_name: opts.name } : {}), ...(opts.description !== undefined ? { description: opts.description } : {}) };
      const d = await ctx.client().patch<DatasetSummary>(`/evaluation/datasets/${enc(id)}`, { query: project(), body });
      ctx.print(d, () => renderTable(DATASET_HEADERS, [datasetRow(d)], { color: ctx.color }));
    });

  ds.command('delete')
    .description('delete a dataset (needs --yes; refused while a stored score cites one of its versions)')
    .argument('<dataset_id>')
    .option('--yes', 'confirm the deletion')
    .action(async (id: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `deleting dataset ${id}`);
      await ctx.client().delete(`/evaluation/datasets/${enc(id)}`, { query: project() });
      ctx.print({ deleted: true, dataset_id: id }, () => `Deleted dataset ${id}\n`);
    });

  bodyOptions(
    ds
      .command('promote')
      .description('promote reviewed runs (the body {subjects:[...]}, or --run RUN_ID:ANNOTATION_ID repeated); seals a new version')
      .argument('<dataset_id>')
      .option('--run <run:annotation>', 'a run id and the id of your judgment on it, joined by ":" (repeatable)', (v: string, prev: string[] | undefined) => collect(v, prev)),
  ).action(async (id: string, opts: { run?: string[]; body?: string; file?: string }) => {
    let body: unknown;
    if (opts.run && (opts.body !== undefined || opts.file !== undefined)) throw usageError('give the subjects with --run or with --body/--file, not both');
    if (opts.run) {
      body = {
        subjects: opts.run.map((r) => {
          const [run, annotation, ...rest] = r.split(':');
          if (!run || !annotation || rest.length > 0) throw usageError(`--run takes RUN_ID:ANNOTATION_ID, got "${r}"`);
          return { subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: run, review_annotation_id: annotation };
        }),
      };
    } else body = readBody(opts);
    const s = await ctx.client().post<Seal>(`/evaluation/datasets/${enc(id)}/promotions`, { query: project(), body });
    ctx.print(s, () => renderSeal(s, ctx.color));
  });

  ds.command('remove')
    .description('seal a new version without these items (earlier versions keep them)')
    .argument('<dataset_id>')
    .argument('<item_ids...>')
    .action(async (id: string, itemIds: string[]) => {
      const s = await ctx.client().post<Seal>(`/evaluation/datasets/${enc(id)}/removals`, { query: project(), body: { item_ids: itemIds } });
      ctx.print(s, () => renderSeal(s, ctx.color));
    });

  ds.command('items')
    .description('the items of one exact version (cases and reviews); --format json shows each case in full')
    .argument('<dataset_id>')
    .argument('<version>', 'an exact integer of at least 1 (no "latest")')
    .option('--limit <n>', `page size (server default 50, at most ${MAX_ITEM_PAGE})`, positiveInt('--limit', MAX_ITEM_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (id: string, raw: string, opts: { limit?: number; cursor?: string; all?: boolean }) => {
      const v = datasetVersionArg(raw);
      const { items, next_cursor } = await readPages<Item>(ctx, `/evaluation/datasets/${enc(id)}/versions/${v}/items`, 'items', opts, project());
      ctx.print({ dataset_id: id, version: v, items, next_cursor }, () => renderTable(ITEM_HEADERS, items.map(itemRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more items: pass --cursor ${next_cursor} (or --all)`);
    });

  bodyOptions(
    ds
      .command('replay')
      .description('replay an item in a sandbox (stores nothing): the plan as a body, or --tool NAME=EFFECT and --default EFFECT')
      .argument('<dataset_id>')
      .argument('<version>', 'an exact integer of at least 1')
      .argument('<item_id>')
      .option('--tool <name=effect>', `a tool and its effect (${EFFECTS.join(', ')}); repeatable`, (v: string, prev: string[] | undefined) => collect(v, prev))
      .option('--default <effect>', `the effect of tools not listed (${EFFECTS.join(', ')}; default external)`),
  ).action(async (id: string, raw: string, itemId: string, opts: { tool?: string[]; default?: string; body?: string; file?: string }) => {
    const v = datasetVersionArg(raw);
    const flags = opts.tool !== undefined || opts.default !== undefined;
    if (flags && (opts.body !== undefined || opts.file !== undefined)) throw usageError('give the plan with --tool/--default or with --body/--file, not both');
    const body = !flags && (opts.body !== undefined || opts.file !== undefined)
      ? readBody(opts)
      : {
          policies: (opts.tool ?? []).map((t) => {
            const eq = t.lastIndexOf('=');
            if (eq <= 0) throw usageError(`--tool takes NAME=EFFECT, got "${t}"`);
            return { tool_name: t.slice(0, eq), effect: effectArg('--tool', t.slice(eq + 1)) };
          }),
          ...(opts.default !== undefined ? { default_effect: effectArg('--default', opts.default) } : {}),
        };
    const r = await ctx.client().post<Replay>(`/evaluation/datasets/${enc(id)}/versions/${v}/items/${enc(itemId)}/replays`, { query: project(), body });
    ctx.print(r, () => {
      const c = r.counts;
      return (
        `plan ${r.plan_digest}\nsteps ${c.steps}, tool calls ${c.tool_calls}: replayed ${c.replayed}, stubbed ${c.stubbed}, nothing recorded ${c.nothing_recorded}\n` +
        `sandbox answered for: ${r.sandbox_tools.join(', ') || '-'}\n` +
        renderTable(['#', 'OPERATION', 'TOOL', 'EFFECT', 'DISPOSITION'], r.steps.map((s) => [s.index, s.canonical_operation.replace(/^CANONICAL_OPERATION_/, ''), s.tool_name ?? '', (s.effect ?? '').replace(/^SANDBOX_EFFECT_/, ''), s.disposition]), { color: ctx.color })
      );
    });
  });
}
