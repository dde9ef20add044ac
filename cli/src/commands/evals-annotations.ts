/**
 * `svc evals annotate|annotations`: human judgments (`/api/v1/agent-runs/{run_id}/annotations`,
 * `/evaluation/annotations`; docs/evaluations-human.md). Recording a judgment needs a signed-in person
 * (`svc login`); an API key is refused by the server. Both act on the active project.
 */
import type { Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, finiteNumber, nonEmpty, positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

interface Annotation {
  annotation_id: string;
  run_id: string;
  metric_name: string;
  numeric_value?: number;
  label?: string;
  comment: string;
  author_id: string;
  created_at: string;
}

const HEADERS = ['CREATED_AT', 'RUN', 'METRIC', 'SCORE', 'LABEL', 'AUTHOR', 'ANNOTATION_ID'];
const row = (a: Annotation): Cell[] => [a.created_at, a.run_id, a.metric_name, a.numeric_value, a.label, a.author_id, a.annotation_id];

export function registerEvalsAnnotations(evals: Command, ctx: Context): void {
  const project = (why: string) => ctx.projectQuery(why);

  bodyOptions(
    evals
      .command('annotate <run_id>')
      .description('record your judgment of an agent run (signed-in person only: svc login); replaces only your own judgment of the same metric')
      .option('--metric <name>', 'metric_name (trimmed and lower-cased by the server)', nonEmpty('--metric'))
      .option('--value <number>', 'numeric_value (0 is a score of zero; omit for no score)', finiteNumber('--value'))
      .option('--label <label>', 'a verdict label', nonEmpty('--label'))
      .option('--comment <text>', 'a comment'),
  ).action(async (runId: string, opts: { metric?: string; value?: number; label?: string; comment?: string; body?: string; file?: string }) => {
    const flagged = opts.metric !== undefined || opts.value !== undefined || opts.label !== undefined || opts.comment !== undefined;
    let body: unknown;
    if (opts.body !== undefined || opts.file !== undefined) {
      if (flagged) throw usageError('give the judgment either as --body/--file or as --metric with --value/--label, not both');
      body = readBody(opts);
    } else {
      if (!opts.metric) throw usageError('--metric is required (or the whole body with --body or --file)');
      if (opts.value === undefined && opts.label === undefined) throw usageError('a judgment needs --value, --label or both');
      body = { metric_name: opts.metric, numeric_value: opts.value, label: opts.label, comment: opts.comment };
    }
    const answer = await ctx
      .client()
      .post<{ annotation: Annotation; replaced_annotation_id: string | null }>(`/agent-runs/${encodeURIComponent(runId)}/annotations`, { query: project('a judgment belongs to a project'), body });
    ctx.print(answer, () => (answer.replaced_annotation_id ? `replaced your judgment ${answer.replaced_annotation_id}\n` : '') + renderTable(HEADERS, [row(answer.annotation)], { color: ctx.color }));
  });

  evals
    .command('annotations')
    .description('human judgments, oldest first: of one run (--run) or of the project (filters --subject, --metric, --author)')
    .option('--run <run_id>', 'every reviewer\'s judgments of this run', nonEmpty('--run'))
    .option('--subject <run_id>', 'repeatable or comma-separated; at most 200 runs', collect)
    .option('--metric <name>', 'metric_name', nonEmpty('--metric'))
    .option('--author <user_id>', 'author_id', nonEmpty('--author'))
    .option('--limit <n>', 'page size (default 100, at most 500)', positiveInt('--limit', 500))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { run?: string; subject?: string[]; metric?: string; author?: string; limit?: number; cursor?: string; all?: boolean }) => {
      if (opts.run !== undefined && (opts.subject !== undefined || opts.author !== undefined)) throw usageError('--run reads one run\'s judgments; --subject and --author filter the project\'s (use one or the other)');
      const subjects = opts.subject && [...new Set(opts.subject.flatMap((v) => v.split(',')).filter(Boolean))];
      const base = project('judgments belong to a project');
      const [path, query] =
        opts.run !== undefined
          ? [`/agent-runs/${encodeURIComponent(opts.run)}/annotations`, { ...base, metric_name: opts.metric }]
          : ['/evaluation/annotations', { ...base, subject_refs: subjects, metric_name: opts.metric, author_id: opts.author }];
      const { items, next_cursor } = await readPages<Annotation>(ctx, path, 'annotations', opts, query);
      ctx.print({ annotations: items, next_cursor }, () => renderTable(HEADERS, items.map(row), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more judgments: pass --cursor ${next_cursor} (or --all)`);
    });
}
