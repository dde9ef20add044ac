/**
 * `svc receipts list|get|report` and `svc authority-edges list|revoke`. Action receipts are folds of an
 * action's transitions; reported entries come from a JSON file (`{entries:[...]}` or an array). Revoking
 * an edge needs --yes. The receipt chain's commands (server check and offline verification) are in
 * receipt-chains.ts.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { generalError, projectRequired, usageError } from '../errors.js';
import { collect, nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const MAX_RECEIPT_PAGE = 200;
export const MAX_REPORT_BATCH = 100;

export interface ReceiptEntry {
  seq: number;
  chain_seq: number;
  state: string;
  authority: string;
  requester_principal: string;
  effect_class: string;
  occurred_at: string;
  entry_sha256: string;
}

export interface Receipt {
  action_id: string;
  authority: string;
  final_state: string;
  remediation: string;
  requester_principal: string;
  effect_class: string;
  destructive: boolean;
  approver_principal: string;
  policy_id: string;
  policy_version: string;
  conflicting_requester_principals: string[];
  conflicting_policies: string[];
  malformed_policy_records: string[];
  occurred_at: string;
  entry_count: number;
  entries?: ReceiptEntry[];
}

export interface AuthorityEdge {
  id: string;
  from_principal: string;
  tool: string;
  purpose: string;
  sighting_count: number;
  last_exercised_at?: string;
  revoked: boolean;
  revocation?: { reason: string; revoked_by: string; revoked_at: string };
  already_revoked?: boolean;
}


const policy = (r: { policy_id: string; policy_version: string }) => (r.policy_id ? `${r.policy_id}@${r.policy_version}` : null);
const receiptRow = (r: Receipt): Cell[] => [r.action_id, r.authority.replace('RECEIPT_AUTHORITY_', ''), r.final_state.replace('RECEIPT_STATE_', ''), r.effect_class.replace('EFFECT_CLASS_', ''), policy(r), String(r.entry_count), r.occurred_at];

function renderReceipt(r: Receipt, color: boolean): string {
  const rows: Cell[][] = [
    ['action_id', r.action_id],
    ['authority', r.authority],
    ['final_state', r.final_state],
    ['remediation', r.remediation || null],
    ['requester', r.requester_principal || null],
    ['approver', r.approver_principal || null],
    ['effect_class', `${r.effect_class}${r.destructive ? ' (destructive)' : ''}`],
    ['policy', policy(r)],
  ];
  if (r.conflicting_requester_principals.length) rows.push(['conflicting_requesters', r.conflicting_requester_principals.join(', ')]);
  if (r.conflicting_policies.length) rows.push(['conflicting_policies', r.conflicting_policies.join(', ')]);
  if (r.malformed_policy_records.length) rows.push(['malformed_policy_records', r.malformed_policy_records.join('; ')]);
  let out = renderTable(['FIELD', 'VALUE'], rows, { color });
  if (r.entries?.length)
    out += renderTable(
      ['SEQ', 'CHAIN_SEQ', 'STATE', 'AUTHORITY', 'REQUESTER', 'EFFECT', 'OCCURRED_AT'],
      r.entries.map((e) => [String(e.seq), String(e.chain_seq), e.state, e.authority, e.requester_principal || null, e.effect_class, e.occurred_at]),
      { color },
    );
  return out;
}

const edgeRow = (e: AuthorityEdge): Cell[] => [e.id, e.from_principal, e.tool, e.purpose, String(e.sighting_count), e.last_exercised_at ?? null, e.revoked ? `revoked ${e.revocation?.revoked_at ?? ''}` : 'active'];

/** The project every receipt command acts on. */
function project(ctx: Context, what: string): string {
  const p = ctx.activeProject();
  if (!p) throw projectRequired(what);
  return p.value;
}

function readBatch(file: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw usageError(`--file ${file}: ${e instanceof SyntaxError ? 'not valid JSON' : 'cannot be read'}`);
  }
  const entries = Array.isArray(parsed) ? parsed : (parsed as { entries?: unknown })?.entries;
  if (!Array.isArray(entries) || entries.length === 0) throw usageError(`--file ${file}: give a JSON array of entries or {"entries": [...]}`);
  if (entries.length > MAX_REPORT_BATCH) throw usageError(`--file ${file}: at most ${MAX_REPORT_BATCH} entries a batch (the server refuses more); split the file`);
  return entries;
}

export function registerReceipts(program: Command, ctx: Context): void {
  const r = program.command('receipts').description('action receipts: list, get (with entries), report entries of your agent');
  const showReceipt = (x: Receipt) => ctx.print(x, () => renderReceipt(x, ctx.color));

  r.command('list')
    .description('receipts of the active project, newest client time first')
    .option('--authority <a>', 'RECEIPT_AUTHORITY_MEDIATED or _REPORTED (repeatable or comma-separated)', collect)
    .option('--final-state <s>', 'RECEIPT_STATE_* (repeatable or comma-separated)', collect)
    .option('--normalizer-version <n>', 'fold version (repeatable)', collect)
    .option('--action <id>', 'one action', nonEmpty('--action'))
    .option('--run <id>', 'the receipts of one agent run', nonEmpty('--run'))
    .option('--chain <id>', "without --action: only the receipt holding the chain's newest entry", nonEmpty('--chain'))
    .option('--limit <n>', `page size (server default 100, at most ${MAX_RECEIPT_PAGE})`, positiveInt('--limit', MAX_RECEIPT_PAGE))
    .option('--all', 'every page')
    .action(async (o: { authority?: string[]; finalState?: string[]; normalizerVersion?: string[]; action?: string; run?: string; chain?: string; limit?: number; all?: boolean }) => {
      const query = {
        project_id: project(ctx, 'receipts belong to a project'),
        authority: o.authority,
        final_state: o.finalState,
        normalizer_versions: o.normalizerVersion,
        action_id: o.action,
        run_id: o.run,
        chain_id: o.chain,
      };
      const { items, next_cursor } = await readPages<Receipt>(ctx, '/action-receipts', 'action_receipts', { limit: o.limit, all: o.all }, query);
      ctx.print({ action_receipts: items, next_cursor }, () =>
        renderTable(['ACTION', 'AUTHORITY', 'FINAL_STATE', 'EFFECT', 'POLICY', 'ENTRIES', 'OCCURRED_AT'], items.map(receiptRow), { color: ctx.color }),
      );
    });

  r.command('get')
    .description('one receipt with every entry')
    .argument('<action-id>')
    .action(async (id: string) => {
      const query = { project_id: project(ctx, 'receipts belong to a project') };
      showReceipt(await ctx.client().get<Receipt>(`/action-receipts/${encodeURIComponent(id)}`, { query }));
    });

  r.command('report')
    .description(`report entries (authority REPORTED; the key needs ingest:write): a JSON file of at most ${MAX_REPORT_BATCH} entries, all or nothing`)
    .requiredOption('--file <path>', 'a JSON array of entries, or {"entries": [...]}')
    .option('--request-id <id>', 'makes a retry safe: the same answer again, nothing appended twice', nonEmpty('--request-id'))
    .action(async (o: { file: string; requestId?: string }) => {
      const entries = readBatch(o.file);
      const body: Record<string, unknown> = { project_id: project(ctx, 'receipts belong to a project'), entries };
      if (o.requestId !== undefined) body.request_id = o.requestId;
      const answer = await ctx.client().post<{ accepted: number; duplicates: number; entries: { index: number; action_id: string; seq: number; chain_seq: number; duplicate: boolean }[] }>(
        '/action-receipts/entries',
        { body },
      );
      ctx.print(answer, () =>
        renderTable(['INDEX', 'ACTION', 'SEQ', 'CHAIN_SEQ', 'DUPLICATE'], answer.entries.map((e) => [String(e.index), e.action_id, String(e.seq), String(e.chain_seq), e.duplicate ? 'yes' : 'no']), { color: ctx.color }),
      );
    });

  const edges = program.command('authority-edges').description('delegations of authority (principal, tool, purpose): list, revoke');
  edges
    .command('list')
    .description('edges of the active project, newest first (revoked ones only with --include-revoked)')
    .option('--from <principal>', 'only edges delegated by this principal', nonEmpty('--from'))
    .option('--include-revoked', 'revoked edges too')
    .option('--limit <n>', `page size (server default 100, at most ${MAX_RECEIPT_PAGE})`, positiveInt('--limit', MAX_RECEIPT_PAGE))
    .option('--all', 'every page')
    .action(async (o: { from?: string; includeRevoked?: boolean; limit?: number; all?: boolean }) => {
      const query = { project_id: project(ctx, 'authority edges belong to a project'), from_principal: o.from, include_revoked: o.includeRevoked ? 'true' : undefined };
      const { items, next_cursor } = await readPages<AuthorityEdge>(ctx, '/authority-edges', 'authority_edges', { limit: o.limit, all: o.all }, query);
      ctx.print({ authority_edges: items, next_cursor }, () =>
        renderTable(['ID', 'FROM', 'TOOL', 'PURPOSE', 'SIGHTINGS', 'LAST_EXERCISED', 'STATE'], items.map(edgeRow), { color: ctx.color }),
      );
    });
  edges
    .command('revoke')
    .description('revoke an edge (a record, not a delete; later use raises a review signal and blocks nothing); needs --yes')
    .argument('<edge-id>')
    .requiredOption('--reason <text>', 'why (required, at most 1024 characters)')
    .option('--yes', 'confirm')
    .action(async (id: string, o: { reason: string; yes?: boolean }) => {
      requireYes(o.yes, `revoking authority edge ${id}`);
      const query = { project_id: ctx.activeProject()?.value };
      const e = await ctx.client().post<AuthorityEdge>(`/authority-edges/${encodeURIComponent(id)}/revoke`, { query, body: { reason: o.reason } });
      ctx.print(e, () => renderTable(['ID', 'FROM', 'TOOL', 'PURPOSE', 'SIGHTINGS', 'LAST_EXERCISED', 'STATE'], [edgeRow(e)], { color: ctx.color }) + (e.already_revoked ? 'already revoked: the first revocation stands\n' : ''));
    });

}
