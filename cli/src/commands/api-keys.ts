/**
 * `svc api-keys create|list|get|update|revoke`: the API keys of the organization
 * (`/api/v1/account/api-keys`, needs api_key:write). A new key is bound to the active project, or to
 * none with --org-wide, and always expires (default 30 days, at most 365). The secret is printed once.
 */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { projectRequired, usageError } from '../errors.js';
import { DEFAULT_EXPIRY, expiryDays, MAX_EXPIRY_DAYS } from '../expiry.js';
import { collect, nameArgument, nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { checkScopes } from '../scopes.js';

export const MAX_KEY_PAGE = 200;

export interface ApiKeyEntry {
  id: string;
  name: string;
  status: string;
  project_id: string | null;
  org_wide: boolean;
  key_prefix: string;
  scopes: string[];
  expires_at: string;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

const HEADERS = ['ID', 'NAME', 'STATUS', 'PROJECT', 'SCOPES', 'PREFIX', 'EXPIRES_AT', 'LAST_USED_AT'];
const projectCell = (k: ApiKeyEntry) => k.project_id ?? '(org-wide)';
const row = (k: ApiKeyEntry): Cell[] => [
  k.id,
  k.name,
  k.status,
  projectCell(k),
  (k.scopes ?? []).join(','),
  k.key_prefix,
  k.expires_at,
  k.last_used_at,
];
const keyPath = (id: string, suffix = '') => `/account/api-keys/${encodeURIComponent(id)}${suffix}`;

/** One key as FIELD/VALUE rows (the secret first when there is one). */
function renderKey(k: ApiKeyEntry & { key?: string }, color: boolean): string {
  const rows: Cell[][] = [];
  if (k.key !== undefined) rows.push(['key', k.key]);
  for (const [field, value] of Object.entries(k)) {
    if (field === 'key') continue;
    rows.push([field, field === 'scopes' ? (value as string[]).join(', ') : field === 'project_id' ? projectCell(k) : (value as Cell)]);
  }
  return renderTable(['FIELD', 'VALUE'], rows, { color });
}

const scopeHelp = 'a scope (repeatable or comma-separated), e.g. metrics:read';

export function registerApiKeys(program: Command, ctx: Context): void {
  const keys = program.command('api-keys').description('API keys: create (the secret is shown once), list, update, revoke');

  keys
    .command('create')
    .description('create an API key bound to the active project (or --org-wide); prints the secret once')
    .argument('<name>', 'name of the key')
    .option('--scope <scope>', `${scopeHelp}; at least one`, collect)
    .option('--org-wide', 'an organization-level key, bound to no project (contradicts --project)')
    .option('--expires-in <duration>', `lifetime in whole days: 30d, 4w or 90 (default ${DEFAULT_EXPIRY}, at most ${MAX_EXPIRY_DAYS}d)`)
    .option('--expires-at <time>', `expiry as an RFC 3339 timestamp, 1 to ${MAX_EXPIRY_DAYS} days ahead (rounded down to whole days from now)`)
    .action(async (arg: string, opts: { scope?: string[]; orgWide?: boolean; expiresIn?: string; expiresAt?: string }) => {
      const name = nameArgument(arg, undefined);
      if (!opts.scope?.length) throw usageError(`give at least one --scope (${scopeHelp})`);
      const scopes = checkScopes(opts.scope);
      const expiresInDays = expiryDays(opts, ctx.now);
      const body: Record<string, unknown> = { name, scopes, expires_in_days: expiresInDays };
      if (opts.orgWide) {
        if (ctx.opts.project !== undefined)
          throw usageError('--org-wide and --project contradict each other: an organization-wide key is bound to no project');
        body.org_wide = true;
      } else {
        const project = ctx.activeProject();
        if (!project) throw projectRequired('the key needs a project (or --org-wide for an organization-wide key)');
        body.project_id = project.value;
      }
      const created = await ctx.client().post<ApiKeyEntry & { key: string }>('/account/api-keys', { body });
      ctx.print(created, () => renderKey(created, ctx.color));
      if (ctx.format === 'table') ctx.note('the secret is shown only this once: store it now');
    });

  keys
    .command('list')
    .description('list the API keys (every page), newest first')
    .option('--limit <n>', `page size (server default 100, at most ${MAX_KEY_PAGE})`, positiveInt('--limit', MAX_KEY_PAGE))
    .action(async (opts: { limit?: number }) => {
      const { items } = await readPages<ApiKeyEntry>(ctx, '/account/api-keys', 'api_keys', { limit: opts.limit, all: true });
      ctx.print({ api_keys: items, next_cursor: null }, () => renderTable(HEADERS, items.map(row), { color: ctx.color }));
    });

  keys
    .command('get')
    .description('show one API key (never its secret)')
    .argument('<id>', 'key id')
    .action(async (id: string) => {
      const key = await ctx.client().get<ApiKeyEntry>(keyPath(id));
      ctx.print(key, () => renderKey(key, ctx.color));
    });

  keys
    .command('update')
    .description('rename a key or narrow its scopes (scopes can only be narrowed)')
    .argument('<id>', 'key id')
    .option('--name <name>', 'new name', nonEmpty('--name'))
    .option('--scope <scope>', `the new scope list: ${scopeHelp}`, collect)
    .action(async (id: string, opts: { name?: string; scope?: string[] }) => {
      const body: Record<string, unknown> = {};
      if (opts.name !== undefined) body.name = opts.name;
      if (opts.scope !== undefined) body.scopes = checkScopes(opts.scope);
      if (Object.keys(body).length === 0) throw usageError('nothing to update: pass --name and/or --scope');
      const key = await ctx.client().patch<ApiKeyEntry>(keyPath(id), { body });
      ctx.print(key, () => renderKey(key, ctx.color));
    });

  keys
    .command('revoke')
    .description('revoke a key at once (needs --yes; cannot be undone)')
    .argument('<id>', 'key id')
    .option('--yes', 'confirm the revocation')
    .action(async (id: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `revoking API key ${id}`);
      const key = await ctx.client().post<ApiKeyEntry>(keyPath(id, '/revoke'));
      ctx.print(key, () => `Revoked API key ${key?.id ?? id}${key?.name ? ` (${key.name})` : ''}\n`);
    });
}
