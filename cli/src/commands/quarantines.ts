/**
 * `svc quarantines request|approve|withdraw|lift|reenforce|list|get`: containment of an agent under the
 * two-person rule (`/api/v1/quarantines`). One person requests (quarantine:request), another approves
 * (quarantine:approve). Moves that act on credentials (approve, lift) need --yes.
 */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { projectRequired, usageError } from '../errors.js';
import { collect, nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const MAX_QUARANTINE_PAGE = 200;
const ACTIONS = ['freeze_writes', 'revoke_credentials', 'kill'];

export interface QuarantineEntry {
  id: string;
  project_id: string;
  status: string;
  action: string;
  asset_id?: string;
  observation_key?: string;
  api_key_id?: string;
  reason: string;
  requested_at: string;
  requested_by: { user_id?: string; api_key_id?: string };
  approved_at?: string;
  credentials: { api_key_id: string; effect: string; enforcement: string; detail_code?: string; released_at?: string }[];
  unenforceable_sightings: number;
  retried?: number;
}

const HEADERS = ['ID', 'STATUS', 'ACTION', 'TARGET', 'CREDENTIALS', 'REQUESTED_AT', 'REASON'];
const target = (q: QuarantineEntry) =>
  q.asset_id !== undefined ? `asset ${q.asset_id}` : q.observation_key !== undefined ? `agent ${q.observation_key}` : `key ${q.api_key_id}`;
const row = (q: QuarantineEntry): Cell[] => [q.id, q.status, q.action, target(q), String(q.credentials.length), q.requested_at, q.reason];

function render(q: QuarantineEntry, color: boolean): string {
  const rows: Cell[][] = [
    ['id', q.id],
    ['status', q.status],
    ['action', q.action],
    ['target', target(q)],
    ['reason', q.reason],
    ['requested', `${q.requested_at} by ${q.requested_by.user_id ?? q.requested_by.api_key_id ?? '?'}`],
  ];
  if (q.approved_at) rows.push(['approved', q.approved_at]);
  if (q.retried !== undefined) rows.push(['retried', String(q.retried)]);
  rows.push(['unenforceable_sightings', String(q.unenforceable_sightings)]);
  let out = renderTable(['FIELD', 'VALUE'], rows, { color });
  if (q.credentials.length)
    out += renderTable(
      ['API_KEY', 'EFFECT', 'ENFORCEMENT', 'DETAIL', 'RELEASED_AT'],
      q.credentials.map((c) => [c.api_key_id, c.effect, c.enforcement, c.detail_code ?? null, c.released_at ?? null]),
      { color },
    );
  return out;
}

const path = (id: string, suffix = '') => `/quarantines/${encodeURIComponent(id)}${suffix}`;

export function registerQuarantines(program: Command, ctx: Context): void {
  const q = program.command('quarantines').description('contain an agent under the two-person rule: request, approve, lift, withdraw, reenforce, list, get');
  const show = (entry: QuarantineEntry) => ctx.print(entry, () => render(entry, ctx.color));

  q.command('request')
    .description('request the containment of an agent (pending until another person approves); exactly one target')
    .option('--asset <id>', 'an inventory asset', nonEmpty('--asset'))
    .option('--observation-key <key>', 'an agent identity (service/agent-name, or its agent id)', nonEmpty('--observation-key'))
    .option('--key-id <id>', 'one API key, by id', nonEmpty('--key-id'))
    .requiredOption('--reason <text>', 'why (required, at most 1024 characters)')
    .option('--action <action>', `${ACTIONS.join(' | ')} (default freeze_writes)`)
    .option('--environment <name>', 'where the agent misbehaved (recorded)')
    .option('--request-id <id>', 'makes a retry idempotent')
    .action(async (opts: { asset?: string; observationKey?: string; keyId?: string; reason: string; action?: string; environment?: string; requestId?: string }) => {
      const targets = [opts.asset, opts.observationKey, opts.keyId].filter((x) => x !== undefined);
      if (targets.length !== 1) throw usageError('give exactly one target: --asset, --observation-key or --key-id');
      if (opts.action !== undefined && !ACTIONS.includes(opts.action)) throw usageError(`--action must be one of ${ACTIONS.join(', ')}`);
      const project = ctx.activeProject();
      if (!project) throw projectRequired('a containment belongs to a project');
      const body: Record<string, unknown> = { reason: opts.reason };
      if (opts.asset !== undefined) body.asset_id = opts.asset;
      if (opts.observationKey !== undefined) body.observation_key = opts.observationKey;
      if (opts.keyId !== undefined) body.api_key_id = opts.keyId;
      if (opts.action !== undefined) body.action = opts.action;
      if (opts.environment !== undefined) body.environment = opts.environment;
      if (opts.requestId !== undefined) body.request_id = opts.requestId;
      show(await ctx.client().post<QuarantineEntry>('/quarantines', { query: { project_id: project.value }, body }));
    });

  q.command('approve')
    .description("approve someone else's pending containment: acts on the keys at once (needs --yes)")
    .argument('<id>', 'containment id')
    .option('--yes', 'confirm')
    .action(async (id: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `approving containment ${id} (its keys are frozen or revoked at once)`);
      show(await ctx.client().post<QuarantineEntry>(path(id, '/approve')));
    });

  q.command('lift')
    .description('lift an active containment (frozen keys write again unless another containment holds them; revoked keys stay revoked)')
    .argument('<id>', 'containment id')
    .requiredOption('--reason <text>', 'why (required)')
    .option('--yes', 'confirm')
    .action(async (id: string, opts: { reason: string; yes?: boolean }) => {
      requireYes(opts.yes, `lifting containment ${id}`);
      show(await ctx.client().post<QuarantineEntry>(path(id, '/lift'), { body: { reason: opts.reason } }));
    });

  q.command('withdraw')
    .description('withdraw a pending containment')
    .argument('<id>', 'containment id')
    .requiredOption('--reason <text>', 'why (required)')
    .action(async (id: string, opts: { reason: string }) => {
      show(await ctx.client().post<QuarantineEntry>(path(id, '/withdraw'), { body: { reason: opts.reason } }));
    });

  q.command('reenforce')
    .description('retry the credentials an active containment recorded as failed (prints retried; 0 is success)')
    .argument('<id>', 'containment id')
    .action(async (id: string) => {
      show(await ctx.client().post<QuarantineEntry>(path(id, '/reenforce')));
    });

  q.command('get')
    .description('show one containment and its credentials')
    .argument('<id>', 'containment id')
    .action(async (id: string) => show(await ctx.client().get<QuarantineEntry>(path(id))));

  q.command('list')
    .description('containments of the active project (or of the organization without one), newest first')
    .option('--status <status>', 'pending, active, lifted, withdrawn (repeatable or comma-separated)', collect)
    .option('--limit <n>', `page size (server default 100, at most ${MAX_QUARANTINE_PAGE})`, positiveInt('--limit', MAX_QUARANTINE_PAGE))
    .option('--all', 'every page')
    .action(async (opts: { status?: string[]; limit?: number; all?: boolean }) => {
      const query = { project_id: ctx.activeProject()?.value, status: opts.status };
      const { items, next_cursor } = await readPages<QuarantineEntry>(ctx, '/quarantines', 'quarantines', { limit: opts.limit, all: opts.all }, query);
      ctx.print({ quarantines: items, next_cursor }, () => renderTable(HEADERS, items.map(row), { color: ctx.color }));
    });
}
