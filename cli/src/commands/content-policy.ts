/**
 * `svc content-policy get|set|allow|list|retention get|set|refusals|erase|erasures`: what recorded content a project
 * may store, serve, export or send to an evaluation model (docs/content-policy.md). A project without a
 * policy stores and serves no recorded content; `svc content-policy allow --class all --boundary store,read`
 * is the quickstart's way to see prompts and tool arguments.
 */
import type { Command } from 'commander';
import { readBody } from '../body.js';
import type { Context } from '../context.js';
import { projectRequired, usageError } from '../errors.js';
import { collect, integerInRange, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const CLASSES = ['model_transcript', 'tool_arguments', 'replay_dom', 'person_properties', 'memory_item', 'group_properties'];
export const BOUNDARIES = ['store', 'read', 'export', 'judge_transfer'];
const DECISIONS = ['allow', 'allow_metadata', 'deny'];
const MAX_PAGE = 200;

interface Rule {
  content_class: string;
  sink: string;
  decision: string;
}
interface Policy {
  project_id: string;
  version: number;
  rules: Rule[];
  updated_by?: { user_id?: string; api_key_id?: string };
  updated_at?: string;
}

/** Values of a repeatable or comma-separated flag, each one of `allowed` (or `all`). */
function pick(flag: string, values: string[] | undefined, allowed: string[]): string[] {
  if (!values || values.length === 0) throw usageError(`${flag} is required (one of ${allowed.join(', ')}, or all; repeatable or comma-separated)`);
  const out = new Set<string>();
  for (const v of values.flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean)) {
    if (v === 'all') allowed.forEach((a) => out.add(a));
    else if (allowed.includes(v)) out.add(v);
    else throw usageError(`${flag} "${v}" is not one of ${allowed.join(', ')}, all`);
  }
  return [...out];
}

function renderPolicy(p: Policy, color: boolean): string {
  const grid: Cell[][] = CLASSES.map((c) => [c, ...BOUNDARIES.map((b) => p.rules.find((r) => r.content_class === c && r.sink === b)?.decision ?? 'deny')]);
  const by = p.updated_by ? ` by ${p.updated_by.user_id ?? p.updated_by.api_key_id}` : '';
  const head = p.version === 0 ? `project ${p.project_id}: no policy (every cell deny)\n` : `project ${p.project_id}: version ${p.version}, updated ${p.updated_at}${by}\n`;
  return head + renderTable(['CLASS', ...BOUNDARIES.map((b) => b.toUpperCase())], grid, { color });
}

export function registerContentPolicy(program: Command, ctx: Context): void {
  const cp = program.command('content-policy').description('what recorded content a project may store, serve, export or send to an evaluation model; retention windows; the refusal audit');
  const project = () => {
    const p = ctx.activeProject();
    if (!p) throw projectRequired('a content policy belongs to a project');
    return encodeURIComponent(p.value);
  };
  const path = (suffix = '') => `/projects/${project()}/content-policy${suffix}`;
  const show = (p: Policy) => ctx.print(p, () => renderPolicy(p, ctx.color));

  cp.command('get')
    .description("the active project's policy: every cell, denied ones included")
    .action(async () => show(await ctx.client().get<Policy>(path())));

  cp.command('set')
    .description('replace the whole grid from JSON: {"rules":[{"content_class","sink","decision"}], "expected_version"?} or a list of rules; an omitted cell is deny')
    .option('--body <json>', 'the JSON body')
    .option('--file <path>', 'read the JSON body from a file (- for standard input)')
    .option('--expected-version <n>', 'write only at this version (0: only when there is no policy yet)', integerInRange('--expected-version', 0, 2147483647))
    .action(async (opts: { body?: string; file?: string; expectedVersion?: number }) => {
      const raw = readBody(opts);
      const body = (Array.isArray(raw) ? { rules: raw } : raw) as Record<string, unknown>;
      if (body === null || typeof body !== 'object') throw usageError('the body must be a JSON object or a list of rules');
      if (opts.expectedVersion !== undefined) body.expected_version = opts.expectedVersion;
      show(await ctx.client().put<Policy>(path(), { body }));
    });

  cp.command('allow')
    .description('set cells of the current grid (others unchanged), written at the version just read: e.g. --class all --boundary store,read')
    .option('--class <class>', `${CLASSES.join(', ')} or all (repeatable or comma-separated)`, collect)
    .option('--boundary <boundary>', `${BOUNDARIES.join(', ')} or all (repeatable or comma-separated)`, collect)
    .option('--decision <decision>', `${DECISIONS.join(', ')} (default allow)`, 'allow')
    .action(async (opts: { class?: string[]; boundary?: string[]; decision: string }) => {
      const classes = pick('--class', opts.class, CLASSES);
      const boundaries = pick('--boundary', opts.boundary, BOUNDARIES);
      if (!DECISIONS.includes(opts.decision)) throw usageError(`--decision must be one of ${DECISIONS.join(', ')}`);
      const current = await ctx.client().get<Policy>(path());
      const cells = new Map(current.rules.map((r) => [`${r.content_class}/${r.sink}`, r.decision]));
      for (const c of classes) for (const b of boundaries) cells.set(`${c}/${b}`, opts.decision);
      const rules = [...cells].map(([k, decision]) => ({ content_class: k.split('/')[0], sink: k.split('/')[1], decision }));
      show(await ctx.client().put<Policy>(path(), { body: { expected_version: current.version, rules } }));
    });

  cp.command('list')
    .description('the policy of every project (a project key: its own), newest-changed first')
    .option('--limit <n>', `page size (server default 100, at most ${MAX_PAGE})`, positiveInt('--limit', MAX_PAGE))
    .option('--all', 'every page')
    .action(async (opts: { limit?: number; all?: boolean }) => {
      const { items, next_cursor } = await readPages<Policy>(ctx, '/content-policies', 'content_policies', { limit: opts.limit, all: opts.all });
      ctx.print({ content_policies: items, next_cursor }, () =>
        renderTable(
          ['PROJECT', 'VERSION', 'UPDATED_AT', 'ALLOWED_CELLS'],
          items.map((p) => [p.project_id, String(p.version), p.updated_at ?? null, String(p.rules.filter((r) => r.decision !== 'deny').length)]),
          { color: ctx.color },
        ),
      );
    });

  const retention = cp.command('retention').description('retention windows per content class (1 to 365 days; a class without one has none)');
  const showRetention = (r: { windows: { content_class: string; retention_days: number; updated_at: string }[] }) =>
    ctx.print(r, () => renderTable(['CLASS', 'DAYS', 'UPDATED_AT'], r.windows.map((w) => [w.content_class, String(w.retention_days), w.updated_at]), { color: ctx.color }));
  retention
    .command('get')
    .description('the windows of the active project')
    .action(async () => showRetention(await ctx.client().get(path('/retention'))));
  retention
    .command('set')
    .description('replace every window from JSON: {"windows":[{"content_class","retention_days"}]} or a list of windows')
    .option('--body <json>', 'the JSON body')
    .option('--file <path>', 'read the JSON body from a file (- for standard input)')
    .action(async (opts: { body?: string; file?: string }) => {
      const raw = readBody(opts);
      showRetention(await ctx.client().put(path('/retention'), { body: Array.isArray(raw) ? { windows: raw } : raw }));
    });

  cp.command('refusals')
    .description('the refusal audit: values the policy withheld, per minute, class, boundary and decider (newest first)')
    .option('--class <class>', `one of ${CLASSES.join(', ')}`)
    .option('--boundary <boundary>', `one of ${BOUNDARIES.join(', ')}`)
    .option('--from <time>', 'RFC 3339 or a duration before now (30m, 6h, 7d)')
    .option('--to <time>', 'RFC 3339 or a duration before now')
    .option('--limit <n>', `page size (server default 100, at most ${MAX_PAGE})`, positiveInt('--limit', MAX_PAGE))
    .option('--all', 'every page')
    .action(async (opts: { class?: string; boundary?: string; from?: string; to?: string; limit?: number; all?: boolean }) => {
      const query = { content_class: opts.class, boundary: opts.boundary, from: opts.from, to: opts.to };
      type Refusal = { minute: string; content_class: string; boundary: string; decided_by: string; decision: string; count: number };
      const { items, next_cursor } = await readPages<Refusal>(ctx, path('/refusals'), 'refusals', { limit: opts.limit, all: opts.all }, query);
      ctx.print({ refusals: items, next_cursor }, () =>
        renderTable(['MINUTE', 'CLASS', 'BOUNDARY', 'DECIDED_BY', 'DECISION', 'COUNT'], items.map((r) => [r.minute, r.content_class, r.boundary, r.decided_by, r.decision, String(r.count)]), {
          color: ctx.color,
        }),
      );
    });

  // Erasure (docs/content-policy.md "Erasure"): a subject's recorded content now; the list includes the scheduled retention erasures.
  type Erasure = { id: string; kind: string; subject_kind: string | null; subject_id: string | null; content_classes: string[]; status: string; counts: { attributes: number } | null; created_at: string };
  const erasureRows = (es: Erasure[]): Cell[][] =>
    es.map((e) => [e.id, e.kind, e.subject_kind ? `${e.subject_kind}=${e.subject_id}` : null, e.content_classes.join(','), e.status, e.counts ? String(e.counts.attributes) : null, e.created_at]);
  const erasureHead = ['ID', 'KIND', 'SUBJECT', 'CLASSES', 'STATUS', 'ATTRIBUTES_REMOVED', 'CREATED'];
  const erasurePath = (suffix = '') => `/projects/${project()}/content-erasures${suffix}`;
  cp.command('erase')
    .description("erase one subject's recorded content now (a session, a trace or an end user); writes a mediated receipt; needs --yes")
    .requiredOption('--subject-kind <kind>', 'session_key, trace_id or enduser_id')
    .requiredOption('--subject-id <id>', 'the session key, trace id or end-user id')
    .requiredOption('--reason <text>', 'why (required, at most 1024 characters)')
    .option('--class <class>', `a class to erase (repeatable; default every class): ${CLASSES.join(', ')}`, collect)
    .option('--request-id <id>', 'makes a retry safe: the same request id returns the first erasure')
    .option('--yes', 'confirm')
    .action(async (opts: { subjectKind: string; subjectId: string; reason: string; class?: string[]; requestId?: string; yes?: boolean }) => {
      requireYes(opts.yes, `erasing the recorded content of ${opts.subjectKind} ${opts.subjectId}`);
      const body = { subject_kind: opts.subjectKind, subject_id: opts.subjectId, reason: opts.reason, content_classes: opts.class, request_id: opts.requestId };
      const e = await ctx.client().post<Erasure>(erasurePath(), { body });
      ctx.print(e, () => renderTable(erasureHead, erasureRows([e]), { color: ctx.color }));
    });
  cp.command('erasures')
    .description('the erasures of recorded content, newest first (subject and scheduled retention erasures)')
    .option('--kind <kind>', 'subject or retention')
    .option('--limit <n>', `page size (server default 100, at most ${MAX_PAGE})`, positiveInt('--limit', MAX_PAGE))
    .option('--all', 'every page')
    .action(async (opts: { kind?: string; limit?: number; all?: boolean }) => {
      const { items, next_cursor } = await readPages<Erasure>(ctx, erasurePath(), 'erasures', { limit: opts.limit, all: opts.all }, { kind: opts.kind });
      ctx.print({ erasures: items, next_cursor }, () => renderTable(erasureHead, erasureRows(items), { color: ctx.color }));
    });
}
