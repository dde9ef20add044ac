/**
 * `svc evals release-series` and `svc evals gates list|get|create|evaluate`: one exact evaluator
 * version's mean per release, and release gates (`/api/v1/evaluation/release-series`,
 * `/evaluation/gates`; docs/evaluations-gates.md). All act on the active project. `gates create` takes the
 * gate as JSON with `--body` or `--file` (`--file -` reads standard input). `gates evaluate` records a
 * decision; `--fail-on-hold` makes a held release exit 1, for deployment pipelines.
 */
import type { Command } from 'commander';
import { bodyOptions, readBody } from '../body.js';
import type { Context } from '../context.js';
import { generalError, usageError } from '../errors.js';
import { nonEmpty, positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { evaluatorRef } from './evals-results.js';

interface Aggregate {
  sample_count: number;
  mean: number;
  first_observed_at: string;
  last_observed_at: string;
}
interface Series {
  ordering_strategy: string;
  points: (Aggregate & { release: string; delta_mean: number | null })[];
  unreleased_present: boolean;
  unreleased: Aggregate | null;
  excluded_counts: Record<string, number>;
  truncated: boolean;
}
interface Gate {
  gate_id: string;
  display_name: string;
  evaluator: { evaluator_id: string; version: number };
  release: string;
  baseline_release: string | null;
  min_samples: number;
  min_mean: number | null;
  max_mean: number | null;
  max_mean_drop: number | null;
  max_mean_rise: number | null;
}
interface Decision {
  decision_id: string;
  idempotency_key: string;
  decided_at: string;
  outcome: string;
  reading: string;
  reasons: { code: string; message: string }[];
  evidence: { candidate: { sample_count: number; mean: number | null }; baseline: { release: string; mean: number | null } | null; delta_mean: number | null };
}

const num = (v: number | null | undefined): Cell => (v === null || v === undefined ? '' : Number(v.toPrecision(6)));
const GATE_HEADERS = ['GATE', 'EVALUATOR', 'RELEASE', 'BASELINE', 'MIN_SAMPLES', 'MIN_MEAN', 'MAX_MEAN', 'MAX_DROP', 'MAX_RISE'];
const gateRow = (g: Gate): Cell[] => [
  g.gate_id,
  `${g.evaluator.evaluator_id}@${g.evaluator.version}`,
  g.release,
  g.baseline_release ?? '(previous in series)',
  g.min_samples,
  num(g.min_mean),
  num(g.max_mean),
  num(g.max_mean_drop),
  num(g.max_mean_rise),
];
const DECISION_HEADERS = ['DECIDED_AT', 'KEY', 'OUTCOME', 'READING', 'SAMPLES', 'MEAN', 'BASELINE', 'DELTA', 'REASONS'];
const decisionRow = (d: Decision): Cell[] => [
  d.decided_at,
  d.idempotency_key,
  d.outcome,
  d.reading,
  d.evidence.candidate.sample_count,
  num(d.evidence.candidate.mean),
  d.evidence.baseline ? `${d.evidence.baseline.release} (${num(d.evidence.baseline.mean) || '-'})` : '',
  num(d.evidence.delta_mean),
  d.reasons.map((r) => r.code).join(','),
];

export function registerEvalsGates(evals: Command, ctx: Context): void {
  const project = (why: string) => ctx.projectQuery(why);

  evals
    .command('release-series')
    .description('one exact evaluator version\'s mean score per release, oldest release first (runs without a release apart)')
    .option('--evaluator <id@version>', 'the exact evaluator version, e.g. task-success@2 (required)', evaluatorRef)
    .option('--metric <name>', 'metric_name', nonEmpty('--metric'))
    .option('--start <time>', 'on run time: RFC 3339 or a duration before now (7d)')
    .option('--end <time>', 'on run time: RFC 3339 or a duration before now')
    .action(async (opts: { evaluator?: { evaluator_id: string; version: number }; metric?: string; start?: string; end?: string }) => {
      if (!opts.evaluator) throw usageError('--evaluator <id@version> is required: a series pins one exact evaluator version');
      const query = {
        ...project('a release series belongs to a project'),
        evaluator_id: opts.evaluator.evaluator_id,
        evaluator_version: opts.evaluator.version,
        metric_name: opts.metric,
        start: opts.start,
        end: opts.end,
      };
      const s = await ctx.client().get<Series>('/evaluation/release-series', { query });
      ctx.print(s, () => {
        const rows: Cell[][] = s.points.map((p) => [p.release, p.sample_count, num(p.mean), num(p.delta_mean), p.first_observed_at, p.last_observed_at]);
        if (s.unreleased) rows.push(['(no release)', s.unreleased.sample_count, num(s.unreleased.mean), '', s.unreleased.first_observed_at, s.unreleased.last_observed_at]);
        const excluded = Object.entries(s.excluded_counts).map(([k, n]) => `${k} ${n}`);
        return (
          `ordering: ${s.ordering_strategy}${s.truncated ? ' (truncated: only the most recent releases)' : ''}\n` +
          renderTable(['RELEASE', 'SAMPLES', 'MEAN', 'DELTA', 'FIRST_OBSERVED', 'LAST_OBSERVED'], rows, { color: ctx.color }) +
          (excluded.length > 0 ? `not evidence: ${excluded.join(', ')}\n` : '')
        );
      });
    });

  const gates = evals.command('gates').description('release gates: admit or hold a release on one exact evaluator version\'s results');

  gates
    .command('list')
    .description('the release gates of the project, by gate id')
    .option('--release <name>', 'only gates deciding on this release', nonEmpty('--release'))
    .option('--evaluator-id <id>', 'only gates bound to this evaluator', nonEmpty('--evaluator-id'))
    .option('--limit <n>', 'page size (default 50, at most 200)', positiveInt('--limit', 200))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { release?: string; evaluatorId?: string; limit?: number; cursor?: string; all?: boolean }) => {
      const query = { ...project('gates belong to a project'), release: opts.release, evaluator_id: opts.evaluatorId };
      const { items, next_cursor } = await readPages<Gate>(ctx, '/evaluation/gates', 'gates', opts, query);
      ctx.print({ gates: items, next_cursor }, () => renderTable(GATE_HEADERS, items.map(gateRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more gates: pass --cursor ${next_cursor} (or --all)`);
    });

  gates
    .command('get <gateId>')
    .description('a gate with its decision history, newest first')
    .action(async (gateId: string) => {
      const g = await ctx.client().get<Gate & { decisions: Decision[]; decision_count: number; decisions_truncated: boolean }>(`/evaluation/gates/${encodeURIComponent(gateId)}`, {
        query: project('gates belong to a project'),
      });
      ctx.print(g, () => renderTable(GATE_HEADERS, [gateRow(g)], { color: ctx.color }) + '\n' + renderTable(DECISION_HEADERS, g.decisions.map(decisionRow), { color: ctx.color }));
      if (g.decisions_truncated && ctx.format === 'table') ctx.note(`showing the newest ${g.decisions.length} of ${g.decision_count} decisions`);
    });

  bodyOptions(gates.command('create').description('create a gate from JSON (--body or --file); the same gate_id and definition again answers it, a different one is refused')).action(
    async (opts: { body?: string; file?: string }) => {
      const body = readBody(opts);
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw usageError('the gate is a JSON object (gate_id, evaluator {evaluator_id, version}, release, min_samples, ...)');
      const g = await ctx.client().post<Gate & { created: boolean }>('/evaluation/gates', { query: project('a gate belongs to a project'), body });
      ctx.print(g, () => (g.created ? '' : 'already exists with this definition\n') + renderTable(GATE_HEADERS, [gateRow(g)], { color: ctx.color }));
    },
  );

  gates
    .command('evaluate <gateId>')
    .description('read the evidence now and record a decision (ADMIT or HOLD); the same idempotency key answers the original decision')
    .option('--idempotency-key <key>', 'the intent of this evaluation (e.g. the deployment id); omitted: the stable default intent, which always answers the first default decision', nonEmpty('--idempotency-key'))
    .option('--fail-on-hold', 'exit 1 when the release is held (for deployment pipelines)')
    .action(async (gateId: string, opts: { idempotencyKey?: string; failOnHold?: boolean }) => {
      const answer = await ctx.client().post<{ decision: Decision; created: boolean }>(`/evaluation/gates/${encodeURIComponent(gateId)}/evaluations`, {
        query: project('a gate belongs to a project'),
        body: opts.idempotencyKey === undefined ? {} : { idempotency_key: opts.idempotencyKey },
      });
      const d = answer.decision;
      ctx.print(answer, () => {
        const note = answer.created ? '' : `the decision already recorded under key "${d.idempotency_key}" (pass a new --idempotency-key for fresh evidence)\n`;
        return note + renderTable(DECISION_HEADERS, [decisionRow(d)], { color: ctx.color }) + d.reasons.map((r) => `- ${r.message}\n`).join('');
      });
      if (opts.failOnHold && d.outcome !== 'ADMIT') throw generalError('release_held', `gate ${gateId} holds the release: ${d.reasons.map((r) => r.code).join(', ')}`);
    });
}
