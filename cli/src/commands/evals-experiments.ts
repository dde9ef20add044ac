/**
 * `svc evals experiments list|get|create|trial|run|compare`: experiments over an exact dataset version
 * (`/api/v1/evaluation/experiments`; docs/evaluations-experiments.md). All act on the active project.
 * `run` asks for at most a bounded number of evaluations per call; `--until-complete` keeps calling while
 * the server reports work remaining within its bound (it stops when the daily budget is spent, or when a
 * call makes no progress).
 */
import type { Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, nonEmpty, positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { evaluatorRef } from './evals-results.js';

const ROLES = { baseline: 'TRIAL_ROLE_BASELINE', candidate: 'TRIAL_ROLE_CANDIDATE' } as const;

interface Ref {
  evaluator_id: string;
  version: number;
}
interface Experiment {
  experiment_id: string;
  display_name: string;
  dataset: { dataset_id: string; version: number };
  evaluators: Ref[];
  created_at: string;
  items?: number;
  trials?: Array<{ trial_id: string; role: string; label: string; subjects: string; mapped_items: number; status: string; counts: Record<string, number> }>;
}
interface RunReport {
  asked: number;
  scored: number;
  unmeasured: number;
  withheld: number;
  already_evaluated: number;
  not_evaluated: { unreadable: number; in_progress: number; refused: number };
  missing: number;
  stopped: string | null;
  truncated: boolean;
  remaining: number;
  complete: boolean;
}
interface Comparison {
  baseline_trial_id: string | null;
  complete: boolean;
  pending: number;
  metrics: Array<{
    evaluator: Ref;
    metric_name: string;
    trials: Array<{ trial_id: string; role: string; counts: Record<string, number>; mean?: number }>;
    versus_baseline: Array<{ trial_id: string; delta?: number; paired: { items: number; delta?: number } }>;
  }>;
}

/** `dataset_id@version` (an exact integer version). */
function datasetRef(v: string): { dataset_id: string; version: number } {
  const at = v.lastIndexOf('@');
  const version = at > 0 ? v.slice(at + 1) : '';
  if (!/^[1-9][0-9]*$/.test(version)) throw usageError(`--dataset "${v}" must be <dataset_id>@<version> with an exact integer version (there is no latest alias)`);
  return { dataset_id: v.slice(0, at), version: Number(version) };
}

const short = (role: string) => role.replace(/^TRIAL_ROLE_/, '').toLowerCase();
const ref = (r: Ref) => `${r.evaluator_id}@${r.version}`;

export function registerEvalsExperiments(evals: Command, ctx: Context): void {
  const project = () => ctx.projectQuery('an experiment belongs to a project');
  const path = (id: string, rest = '') => `/evaluation/experiments/${encodeURIComponent(id)}${rest}`;
  const exps = evals.command('experiments').description('experiments: trials over an exact dataset version, scored by exact evaluator versions, and their comparison');

  exps
    .command('list')
    .description('the experiments of the active project, by id')
    .option('--dataset <dataset_id>', 'only experiments over this dataset', nonEmpty('--dataset'))
    .option('--limit <n>', 'page size (default 50, at most 200)', positiveInt('--limit', 200))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { dataset?: string; limit?: number; cursor?: string; all?: boolean }) => {
      const { items, next_cursor } = await readPages<Experiment>(ctx, '/evaluation/experiments', 'experiments', opts, { ...project(), dataset_id: opts.dataset });
      ctx.print({ experiments: items, next_cursor }, () =>
        renderTable(
          ['EXPERIMENT', 'NAME', 'DATASET', 'EVALUATORS', 'CREATED_AT'],
          items.map((e) => [e.experiment_id, e.display_name, `${e.dataset.dataset_id}@${e.dataset.version}`, e.evaluators.map(ref).join(','), e.created_at]),
          { color: ctx.color },
        ),
      );
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more experiments: pass --cursor ${next_cursor} (or --all)`);
    });

  exps
    .command('get <experimentId>')
    .description('an experiment with its trials, their status and counts')
    .action(async (id: string) => {
      const e = await ctx.client().get<Experiment>(path(id), { query: project() });
      ctx.print(e, () =>
        `${e.experiment_id}: ${e.display_name} — dataset ${e.dataset.dataset_id}@${e.dataset.version} (${e.items} items), evaluators ${e.evaluators.map(ref).join(', ')}\n` +
        renderTable(
          ['TRIAL', 'ROLE', 'LABEL', 'SUBJECTS', 'STATUS', 'SCORED', 'UNMEASURED', 'WITHHELD', 'MISSING', 'PENDING'],
          (e.trials ?? []).map((t): Cell[] => [t.trial_id, short(t.role), t.label, t.subjects.toLowerCase(), t.status.replace(/^TRIAL_STATUS_/, '').toLowerCase(), t.counts.scored, t.counts.unmeasured, t.counts.withheld, t.counts.missing, t.counts.pending]),
          { color: ctx.color },
        ),
      );
    });

  bodyOptions(
    exps
      .command('create')
      .description('create an experiment (the identical one again answers it; other fields under the id are refused)')
      .option('--id <experiment_id>', 'caller-chosen id', nonEmpty('--id'))
      .option('--name <display_name>', 'display name', nonEmpty('--name'))
      .option('--dataset <dataset_id@version>', 'the exact dataset version', datasetRef)
      .option('--evaluator <id@version>', 'repeatable: exact evaluator versions (1 to 8)', (v: string, prev: Ref[] | undefined) => [...(prev ?? []), evaluatorRef(v)]),
  ).action(async (opts: { id?: string; name?: string; dataset?: { dataset_id: string; version: number }; evaluator?: Ref[]; body?: string; file?: string }) => {
    const flagged = opts.id !== undefined || opts.name !== undefined || opts.dataset !== undefined || opts.evaluator !== undefined;
    let body: unknown;
    if (opts.body !== undefined || opts.file !== undefined) {
      if (flagged) throw usageError('give the experiment either as --body/--file or as flags, not both');
      body = readBody(opts);
    } else {
      if (!opts.id || !opts.dataset || !opts.evaluator) throw usageError('--id, --dataset and --evaluator are required (or the whole body with --body or --file)');
      body = { experiment_id: opts.id, display_name: opts.name ?? opts.id, dataset: opts.dataset, evaluators: opts.evaluator };
    }
    const e = await ctx.client().post<Experiment & { created: boolean }>('/evaluation/experiments', { query: project(), body });
    ctx.print(e, () => `${e.created ? 'created' : 'exists (identical; nothing written)'}: ${e.experiment_id} over ${e.dataset.dataset_id}@${e.dataset.version}\n`);
  });

  bodyOptions(
    exps
      .command('trial <experimentId>')
      .description('add a trial: without runs it scores the frozen cases; with runs (--run item=run_id, or runs in --body/--file) new runs of those cases')
      .option('--trial-id <id>', 'caller-chosen id', nonEmpty('--trial-id'))
      .option('--role <role>', 'baseline | candidate (default candidate)', (v: string) => {
        const full = (ROLES as Record<string, string>)[v];
        if (!full) throw usageError(`--role "${v}" is not one of baseline, candidate`);
        return full;
      })
      .option('--label <label>', 'what the arm is, for people', nonEmpty('--label'))
      .option('--release <release>', 'the release the arm stands for', nonEmpty('--release'))
      .option('--run <item=run_id>', 'repeatable: the new run of an item', collect),
  ).action(async (id: string, opts: { trialId?: string; role?: string; label?: string; release?: string; run?: string[]; body?: string; file?: string }) => {
    const flagged = opts.trialId !== undefined || opts.role !== undefined || opts.label !== undefined || opts.release !== undefined || opts.run !== undefined;
    let body: unknown;
    if (opts.body !== undefined || opts.file !== undefined) {
      if (flagged) throw usageError('give the trial either as --body/--file or as flags, not both');
      body = readBody(opts);
    } else {
      if (!opts.trialId || !opts.label) throw usageError('--trial-id and --label are required (or the whole body with --body or --file)');
      const runs = opts.run?.map((p) => {
        const eq = p.indexOf('=');
        if (eq <= 0 || eq === p.length - 1) throw usageError(`--run "${p}" must be <item_id>=<run_id>`);
        return [p.slice(0, eq), p.slice(eq + 1)];
      });
      body = { trial_id: opts.trialId, role: opts.role ?? ROLES.candidate, label: opts.label, ...(opts.release ? { release: opts.release } : {}), ...(runs ? { runs: Object.fromEntries(runs) } : {}) };
    }
    const tr = await ctx.client().post<{ trial_id: string; role: string; subjects: string; mapped_items: number; created: boolean }>(path(id, '/trials'), { query: project(), body });
    ctx.print(tr, () => `${tr.created ? 'added' : 'exists (identical; nothing written)'}: ${tr.trial_id} (${short(tr.role)}, ${tr.subjects.toLowerCase()}${tr.subjects === 'RUNS' ? `, ${tr.mapped_items} items mapped` : ''})\n`);
  });

  exps
    .command('run <experimentId>')
    .description('score what is not scored yet (every trial × item × evaluator), a bounded number of evaluations per call')
    .option('--max-evaluations <n>', 'evaluations per call (default 200, at most 200)', positiveInt('--max-evaluations', 200))
    .option('--until-complete', 'call again while work remains and the last call made progress (stops when the budget is spent)')
    .action(async (id: string, opts: { maxEvaluations?: number; untilComplete?: boolean }) => {
      const reports: RunReport[] = [];
      for (;;) {
        const r = await ctx.client().post<RunReport>(path(id, '/run'), { query: project(), body: opts.maxEvaluations ? { max_evaluations: opts.maxEvaluations } : {} });
        reports.push(r);
        const progressed = r.scored + r.unmeasured + r.withheld + r.already_evaluated > 0;
        if (!opts.untilComplete || r.complete || r.stopped === 'budget_exhausted' || !progressed) break;
      }
      const last = reports[reports.length - 1];
      const sum = (f: (r: RunReport) => number) => reports.reduce((n, r) => n + f(r), 0);
      const total = { calls: reports.length, scored: sum((r) => r.scored), unmeasured: sum((r) => r.unmeasured), withheld: sum((r) => r.withheld), already_evaluated: sum((r) => r.already_evaluated), last };
      ctx.print(opts.untilComplete ? total : last, () =>
        renderTable(
          ['CALLS', 'SCORED', 'UNMEASURED', 'WITHHELD', 'ALREADY', 'NOT_EVALUATED', 'MISSING', 'REMAINING', 'STOPPED', 'COMPLETE'],
          [[total.calls, total.scored, total.unmeasured, total.withheld, total.already_evaluated, last.not_evaluated.unreadable + last.not_evaluated.in_progress + last.not_evaluated.refused, last.missing, last.remaining, last.stopped ?? '', last.complete]],
          { color: ctx.color },
        ),
      );
      if (!last.complete && ctx.format === 'table') ctx.note(last.stopped === 'budget_exhausted' ? 'the daily evaluation budget is spent: run again when it allows' : `${last.remaining} cells remain: run again`);
    });

  exps
    .command('compare <experimentId>')
    .description('per metric: each trial\'s counts and mean, and each candidate minus the baseline (neutral, not a verdict)')
    .action(async (id: string) => {
      const c = await ctx.client().get<Comparison>(path(id, '/comparison'), { query: project() });
      const num = (v: number | undefined) => (v === undefined ? '—' : Number(v.toPrecision(6)));
      ctx.print(c, () => {
        const rows: Cell[][] = [];
        for (const m of c.metrics)
          for (const a of m.trials) {
            const vs = m.versus_baseline.find((v) => v.trial_id === a.trial_id);
            rows.push([ref(m.evaluator), m.metric_name, a.trial_id, short(a.role), a.counts.scored, a.counts.unmeasured + a.counts.withheld, a.counts.missing, a.counts.pending, num(a.mean), vs ? num(vs.delta) : '', vs ? `${num(vs.paired.delta)} (${vs.paired.items})` : '']);
          }
        return renderTable(['EVALUATOR', 'METRIC', 'TRIAL', 'ROLE', 'SCORED', 'UNSCORED', 'MISSING', 'PENDING', 'MEAN', 'DELTA', 'PAIRED_DELTA (ITEMS)'], rows, { color: ctx.color });
      });
      if (ctx.format === 'table' && !c.complete) ctx.note(`${c.pending} cells are not evaluated yet: run the experiment again`);
      if (ctx.format === 'table' && c.baseline_trial_id === null) ctx.note('no baseline trial: nothing is compared');
    });
}
