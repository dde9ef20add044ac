/** `svc projects list|create|update|delete|use|current|retention get|set`. */
import type { Command } from 'commander';
import { readBody } from '../body.js';
import { updateProfile } from '../config.js';
import type { Context } from '../context.js';
import { projectRequired, usageError } from '../errors.js';
import { finiteNumber, integerInRange, nameArgument, nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable } from '../output.js';
import { readPages } from '../paged.js';

export interface Project {
  id: string;
  name: string;
  sampling_rate: number;
  created_at: string;
}

const HEADERS = ['ID', 'NAME', 'SAMPLING_RATE', 'CREATED_AT'];
const row = (p: Project) => [p.id, p.name, p.sampling_rate, p.created_at];
const projectPath = (id: string) => `/projects/${encodeURIComponent(id)}`;
const samplingRate = finiteNumber('sampling rate', { min: 0, max: 1 });

/** Telemetry retention windows (docs/retention.md): whole days per signal; a signal without one is kept. */
export const RETENTION_MAX_DAYS = 3650;
const SIGNAL_FLAGS = [
  ['metrics', 'SIGNAL_METRICS'],
  ['spans', 'SIGNAL_SPANS'],
  ['logs', 'SIGNAL_LOGS'],
] as const;
interface RetentionWindows {
  project_id: string;
  windows: { signal: string; retention_days: number; updated_at: string }[];
}

export function registerProjects(program: Command, ctx: Context): void {
  const projects = program.command('projects').description('manage projects');

  projects
    .command('list')
    .description('list projects')
    .option('--limit <n>', 'page size', positiveInt('--limit'))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { limit?: number; cursor?: string; all?: boolean }) => {
      const { items: all, next_cursor: next } = await readPages<Project>(ctx, '/projects', 'projects', opts);
      ctx.print({ projects: all, next_cursor: next }, () => renderTable(HEADERS, all.map(row), { color: ctx.color }));
      if (next !== null && ctx.format === 'table') ctx.note(`more projects: svc projects list --cursor ${next}`);
    });

  projects
    .command('create')
    .description('create a project: svc projects create NAME')
    .argument('[name]', 'project name')
    .option('--name <name>', 'project name (the same as the argument, kept for compatibility)', nonEmpty('--name'))
    .option('--sampling-rate <rate>', 'sampling rate between 0 and 1', samplingRate)
    .action(async (arg: string | undefined, opts: { name?: string; samplingRate?: number }) => {
      const body: Record<string, unknown> = { name: nameArgument(arg, opts.name) };
      if (opts.samplingRate !== undefined) body.sampling_rate = opts.samplingRate;
      const project = await ctx.client().post<Project>('/projects', { body });
      ctx.print(project, () => renderTable(HEADERS, [row(project)], { color: ctx.color }));
    });

  projects
    .command('update')
    .description('change the name or sampling rate of a project')
    .argument('<id>', 'project id')
    .option('--name <name>', 'new name', nonEmpty('--name'))
    .option('--sampling-rate <rate>', 'new sampling rate between 0 and 1', samplingRate)
    .action(async (id: string, opts: { name?: string; samplingRate?: number }) => {
      const body: Record<string, unknown> = {};
      if (opts.name !== undefined) body.name = opts.name;
      if (opts.samplingRate !== undefined) body.sampling_rate = opts.samplingRate;
      if (Object.keys(body).length === 0) throw usageError('nothing to update: pass --name and/or --sampling-rate');
      const project = await ctx.client().patch<Project>(projectPath(id), { body });
      ctx.print(project, () => renderTable(HEADERS, [row(project)], { color: ctx.color }));
    });

  projects
    .command('delete')
    .description('delete a project (needs --yes)')
    .argument('<id>', 'project id')
    .option('--yes', 'confirm the deletion')
    .action(async (id: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `deleting project ${id}`);
      await ctx.client().delete(projectPath(id));
      ctx.print({ deleted: true, id }, () => `Deleted project ${id}\n`);
    });

  projects
    .command('use')
    .description('make a project the active one of the current profile')
    .argument('<id>', 'project id')
    .action(async (id: string) => {
      const project = await ctx.client().get<Project>(projectPath(id));
      const profile = ctx.profile().name.value;
      updateProfile(ctx.configPath, profile, 'project', id);
      // --project or SVC_PROJECT still win over the profile: say so, also in JSON (the quickstart exports SVC_PROJECT).
      const s = ctx.settings();
      const over = s.project && s.project.source !== 'profile' ? { by: s.project.source === 'flag' ? '--project' : 'SVC_PROJECT', value: s.project.value } : undefined;
      ctx.print(
        { profile, project, ...(over ? { overridden_by: over.by, active_project_id: over.value } : {}) },
        () => `Active project of profile "${profile}" is now ${id} (${project?.name ?? id})\n`,
      );
      if (over) ctx.note(`note: ${over.by} (${over.value}) still takes precedence; unset it to use this project`);
    });

  // Telemetry retention windows of a project (the argument, else the active project).
  const retention = projects
    .command('retention')
    .description(`telemetry retention windows per signal (1 to ${RETENTION_MAX_DAYS} days): older telemetry leaves every read and is deleted within the hour`);
  const retentionPath = (id: string | undefined) => {
    const project = id ?? ctx.activeProject()?.value;
    if (!project) throw projectRequired('retention windows belong to a project');
    return `${projectPath(project)}/retention`;
  };
  const showRetention = (r: RetentionWindows) =>
    ctx.print(r, () =>
      r.windows.length === 0
        ? `Project ${r.project_id} has no retention window: every signal is kept\n`
        : renderTable(['SIGNAL', 'DAYS', 'UPDATED_AT'], r.windows.map((w) => [w.signal, String(w.retention_days), w.updated_at]), { color: ctx.color }),
    );
  retention
    .command('get')
    .description('the windows of a project (only signals that have one)')
    .argument('[id]', 'project id (default: the active project)')
    .action(async (id: string | undefined) => showRetention(await ctx.client().get<RetentionWindows>(retentionPath(id))));
  const days = (flag: string) => integerInRange(flag, 1, RETENTION_MAX_DAYS);
  retention
    .command('set')
    .description(
      'replace every window: --metrics/--spans/--logs DAYS (a signal not given gets no window and is kept), --none for no window at all, ' +
        'or --body/--file with {"windows":[{"signal","retention_days"}]} or a list of windows. A new or shorter window deletes data: it also needs the delete scope of its signal',
    )
    .argument('[id]', 'project id (default: the active project)')
    .option('--metrics <days>', 'days of metric points and histogram samples', days('--metrics'))
    .option('--spans <days>', 'days of spans (traces, agent runs, sessions, events, LLM calls)', days('--spans'))
    .option('--logs <days>', 'days of log records', days('--logs'))
    .option('--none', 'remove every window (everything is kept)')
    .option('--body <json>', 'the JSON body')
    .option('--file <path>', 'read the JSON body from a file (- for standard input)')
    .option('--yes', 'confirm a new or shorter window: it deletes the telemetry older than it')
    .action(async (id: string | undefined, opts: { metrics?: number; spans?: number; logs?: number; none?: boolean; body?: string; file?: string; yes?: boolean }) => {
      const flagged = SIGNAL_FLAGS.filter(([flag]) => opts[flag] !== undefined).map(([flag, signal]) => ({ signal, retention_days: opts[flag]! }));
      const json = opts.body !== undefined || opts.file !== undefined;
      if ([flagged.length > 0, opts.none === true, json].filter(Boolean).length !== 1)
        throw usageError('give the windows with --metrics/--spans/--logs, or --none, or a JSON body with --body/--file (exactly one of these)');
      let body: unknown = { windows: flagged };
      if (json) {
        const raw = readBody(opts);
        body = Array.isArray(raw) ? { windows: raw } : raw;
        if (body === null || typeof body !== 'object') throw usageError('the body must be a JSON object {"windows":[...]} or a list of windows');
      }
      const path = retentionPath(id);
      // Destructive commands never prompt: a window that brings deletion forward (new, or shorter than the
      // current one) needs --yes; lengthening or removing windows deletes nothing.
      if (!opts.yes) {
        const wanted = (body as { windows?: unknown }).windows;
        const asked = Array.isArray(wanted) ? wanted.filter((w): w is { signal: string; retention_days: number } => !!w && typeof w === 'object' && typeof w.signal === 'string' && typeof w.retention_days === 'number') : [];
        if (asked.length > 0) {
          const current = new Map((await ctx.client().get<RetentionWindows>(path)).windows.map((w) => [w.signal, w.retention_days]));
          const forward = asked.filter((w) => !current.has(w.signal) || w.retention_days < current.get(w.signal)!).map((w) => w.signal);
          if (forward.length > 0)
            throw usageError(`a new or shorter window for ${forward.join(', ')} deletes the telemetry older than it: pass --yes to confirm (destructive commands never prompt)`);
        }
      }
      showRetention(await ctx.client().put<RetentionWindows>(path, { body }));
    });

  projects
    .command('current')
    .description('show the active project (--project, then SVC_PROJECT, then the profile)')
    .action(async () => {
      const active = ctx.activeProject();
      if (!active) {
        ctx.print(
          { project: null },
          () => 'No active project is set (use --project, SVC_PROJECT, or `svc projects use <id>`)\n',
        );
        return;
      }
      const project = await ctx.client().get<Project>(projectPath(active.value));
      ctx.print({ project, source: active.source }, () =>
        renderTable([...HEADERS, 'SOURCE'], [[...row(project), active.source]], { color: ctx.color }),
      );
    });
}
