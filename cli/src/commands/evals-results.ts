/**
 * `svc evals evaluate|results|unscored`: on-demand evaluation and the reads of results and unscored
 * subjects (`/api/v1/evaluation/evaluate`, `/evaluation/results`, `/evaluation/unscored-subjects`;
 * docs/evaluations.md). All act on the active project. `evaluate` is synchronous: the server allows five
 * minutes; Node's fetch gives up waiting for an answer's headers after 300
 * seconds, so an evaluation that takes the whole budget ends as a connection error here (its 504 is lost).
 */
import type { Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, nonEmpty, positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

const SUBJECT_KINDS = { run: 'SUBJECT_KIND_AGENT_RUN', step: 'SUBJECT_KIND_AGENT_STEP', session: 'SUBJECT_KIND_AGENT_SESSION', turn: 'SUBJECT_KIND_AGENT_TURN', 'dataset-item': 'SUBJECT_KIND_DATASET_ITEM' } as const;
const MODES = { 'on-demand': 'EVALUATION_MODE_ON_DEMAND', sampled: 'EVALUATION_MODE_SAMPLED', experiment: 'EVALUATION_MODE_EXPERIMENT', legacy: 'EVALUATION_MODE_LEGACY' } as const;

interface Result {
  result_id: string;
  metric_name: string;
  numeric_value?: number;
  label?: string;
  explanation?: string;
  provenance: {
    evaluator: { evaluator_id: string; version: number };
    mode: string;
    subject_kind: string;
    subject_ref: string;
    execution: { job_status?: string; cost_state?: string; charged_cost_nano_usd?: number; job_failure_class?: string };
  };
  occurred_at: string;
  evaluated_at: string;
}

const HEADERS = ['EVALUATED_AT', 'EVALUATOR', 'METRIC', 'SUBJECT', 'SCORE', 'LABEL', 'MODE', 'STATUS'];
const row = (r: Result): Cell[] => [
  r.evaluated_at,
  `${r.provenance.evaluator.evaluator_id}@${r.provenance.evaluator.version}`,
  r.metric_name,
  r.provenance.subject_ref,
  r.numeric_value,
  r.label,
  r.provenance.mode.replace(/^EVALUATION_MODE_/, '').toLowerCase(),
  r.provenance.execution.job_status,
];

/** `id@version` (an exact integer version: there is no latest alias). */
export function evaluatorRef(v: string): { evaluator_id: string; version: number } {
  const at = v.lastIndexOf('@');
  const version = at > 0 ? v.slice(at + 1) : '';
  if (!/^[0-9]+$/.test(version)) throw usageError(`--evaluator "${v}" must be <evaluator_id>@<version> with an exact integer version (there is no latest alias)`);
  return { evaluator_id: v.slice(0, at), version: Number(version) };
}

const pick = (flag: string, table: Record<string, string>) => (v: string) => {
  const full = table[v] ?? (Object.values(table).includes(v) ? v : undefined);
  if (!full) throw usageError(`${flag} "${v}" is not one of ${Object.keys(table).join(', ')}`);
  return full;
};

export function registerEvalsResults(evals: Command, ctx: Context): void {
  const project = (why: string) => ctx.projectQuery(why);

  bodyOptions(
    evals
      .command('evaluate')
      .description('evaluate one subject now with an exact evaluator version (synchronous; a stored answer comes back with already_evaluated)')
      .option('--evaluator <id@version>', 'the evaluator version, e.g. task-success@2', evaluatorRef)
      .option('--subject-kind <kind>', `${Object.keys(SUBJECT_KINDS).join(' | ')} (default run)`, pick('--subject-kind', SUBJECT_KINDS))
      .option('--subject <ref>', 'a run id; <run_id>/<span_id> for a step; a session key', nonEmpty('--subject')),
  ).action(async (opts: { evaluator?: { evaluator_id: string; version: number }; subjectKind?: string; subject?: string; body?: string; file?: string }) => {
    const flagged = opts.evaluator !== undefined || opts.subject !== undefined || opts.subjectKind !== undefined;
    let body: unknown;
    if (opts.body !== undefined || opts.file !== undefined) {
      if (flagged) throw usageError('give the evaluation either as --body/--file or as --evaluator and --subject, not both');
      body = readBody(opts);
    } else {
      if (!opts.evaluator || !opts.subject) throw usageError('--evaluator and --subject are required (or the whole body with --body or --file)');
      body = { evaluator: opts.evaluator, subject_kind: opts.subjectKind ?? SUBJECT_KINDS.run, subject_ref: opts.subject };
    }
    const answer = await ctx
      .client()
      .post<{ already_evaluated: boolean; stored: boolean; result: Result }>('/evaluation/evaluate', { query: project('an evaluation belongs to a project'), body });
    ctx.print(answer, () => {
      const note = answer.already_evaluated ? 'already evaluated: the stored answer (nothing re-run or spent)\n' : !answer.stored ? 'not stored: the model gave no usable answer\n' : '';
      return note + renderTable(HEADERS, [row(answer.result)], { color: ctx.color }) + (answer.result.explanation ? `\n${answer.result.explanation}\n` : '');
    });
  });

  evals
    .command('results')
    .description('evaluation results, newest evaluated first (history: one per evaluator version per subject)')
    .option('--metric <name>', 'metric_name', nonEmpty('--metric'))
    .option('--evaluator-id <id>', 'evaluator_id', nonEmpty('--evaluator-id'))
    .option('--subject <ref>', 'repeatable or comma-separated; at most 200 subjects', collect)
    .option('--mode <mode>', `repeatable: ${Object.keys(MODES).join(', ')}`, (v: string, prev: string[] | undefined) => collect(pick('--mode', MODES)(v), prev))
    .option('--start <time>', 'on occurred_at: RFC 3339 or a duration before now (7d)')
    .option('--end <time>', 'on occurred_at: RFC 3339 or a duration before now')
    .option('--limit <n>', 'one subject: page size (default 100, at most 500); several: each subject\'s share (at most 20)', positiveInt('--limit', 500))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { metric?: string; evaluatorId?: string; subject?: string[]; mode?: string[]; start?: string; end?: string; limit?: number; cursor?: string; all?: boolean }) => {
      const subjects = opts.subject && [...new Set(opts.subject.flatMap((v) => v.split(',')).filter(Boolean))];
      const query = {
        ...project('results belong to a project'),
        metric_name: opts.metric,
        evaluator_id: opts.evaluatorId,
        ...(subjects && subjects.length === 1 ? { subject_ref: subjects[0] } : { subject_refs: subjects }),
        mode: opts.mode,
        start: opts.start,
        end: opts.end,
      };
      if (subjects && subjects.length > 1) {
        // A read of several subjects is one answer (each subject's share), with no next page.
        const page = await ctx.client().get<{ results: Result[]; truncated: boolean; truncated_subject_refs: string[] }>('/evaluation/results', { query: { ...query, limit: opts.limit } });
        ctx.print(page, () => renderTable(HEADERS, page.results.map(row), { color: ctx.color }));
        if (page.truncated && ctx.format === 'table') ctx.note(`share cut for: ${page.truncated_subject_refs.join(', ')} (unknown beyond the share, not unevaluated)`);
        return;
      }
      const { items, next_cursor } = await readPages<Result>(ctx, '/evaluation/results', 'results', opts, query);
      ctx.print({ results: items, next_cursor }, () => renderTable(HEADERS, items.map(row), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more results: pass --cursor ${next_cursor} (or --all)`);
    });

  evals
    .command('unscored')
    .description('subjects an evaluator could not score: unmeasured (evaluated again later) or withheld by the content policy')
    .option('--evaluator-id <id>', 'evaluator_id', nonEmpty('--evaluator-id'))
    .option('--outcome <outcome>', 'unmeasured | withheld (repeatable)', collect)
    .option('--limit <n>', 'page size (default 100, at most 500)', positiveInt('--limit', 500))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { evaluatorId?: string; outcome?: string[]; limit?: number; cursor?: string; all?: boolean }) => {
      interface Unscored {
        evaluator: { evaluator_id: string; version: number };
        subject_ref: string;
        outcome: string;
        reason: string;
        attempts: number;
        last_at: string;
      }
      const query = { ...project('unscored subjects belong to a project'), evaluator_id: opts.evaluatorId, outcome: opts.outcome };
      const { items, next_cursor } = await readPages<Unscored>(ctx, '/evaluation/unscored-subjects', 'unscored_subjects', opts, query);
      ctx.print({ unscored_subjects: items, next_cursor }, () =>
        renderTable(
          ['LAST_AT', 'EVALUATOR', 'SUBJECT', 'OUTCOME', 'REASON', 'ATTEMPTS'],
          items.map((u) => [u.last_at, `${u.evaluator.evaluator_id}@${u.evaluator.version}`, u.subject_ref, u.outcome, u.reason, u.attempts]),
          { color: ctx.color },
        ),
      );
    });
}
