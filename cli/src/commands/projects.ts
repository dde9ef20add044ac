/** `svc projects list|create|update|delete|use|current`. */
import type { Command } from 'commander';
import { updateProfile } from '../config.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { finiteNumber, nameArgument, nonEmpty, positiveInt, requireYes } from '../flags.js';
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
