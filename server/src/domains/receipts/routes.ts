/**
 * `/action-receipts` (reads, and the ingest of reported entries) and `/receipt-chains/{chainId}/verify`.
 * Thin: the rules are in service.ts and fold.ts. Reads and verify need `agents:read`; reported entries
 * need `ingest:write` and are refused to a key a containment froze, as telemetry is.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { checkBodyProjectSelector } from '../../http/auth.js';
import { invalidRequest, notFound } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { requestProject, resolveProject } from '../../http/project-scope.js';
import { listParam } from '../../http/query.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import { closedFilter, fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import { ACTIONS_CHAIN_ID, MAX_BATCH, RECEIPT_AUTHORITIES, RECEIPT_PAGE, RECEIPT_STATES } from './model.js';
import {
  ActionParams,
  ActionReceiptWithEntries,
  ChainParams,
  ChainVerificationResponse,
  ListReceiptsQuery,
  ListReceiptsResponse,
  ReportEntriesBody,
  ReportEntriesResponse,
} from './schemas.js';
import type { ReceiptFilter } from './store.js';
import { entryView, receiptView } from './views.js';

const tags = ['receipts'];
const read = { scope: 'agents:read' };

/** Fields the platform sets (from the credential or its own records): naming one is refused, not ignored. */
const ACTOR_FIELDS = ['authority', 'reported_by', 'recorded_at', 'approver_principal', 'approved_by', 'approved_at', 'approver', 'actor', 'chain_seq', 'entry_sha256', 'seq'];

function refuseActorFields(req: FastifyRequest) {
  const named = (o: unknown) => (o && typeof o === 'object' && !Array.isArray(o) ? ACTOR_FIELDS.find((f) => Object.hasOwn(o, f)) : undefined);
  const body = req.body as { entries?: unknown } | undefined;
  const top = named(body);
  if (top) throw invalidRequest(`${top} is set by the platform (from the credential or its records) and cannot be sent`);
  const entries = body && typeof body === 'object' && Array.isArray(body.entries) ? body.entries.slice(0, MAX_BATCH + 1) : [];
  for (const [i, e] of entries.entries()) {
    const f = named(e);
    if (f) throw invalidRequest(`entries[${i}].${f} is set by the platform (from the credential or its records) and cannot be sent`, { index: i, field: f });
  }
}

/** Open numbers: each must be an integer; a version no receipt has simply matches nothing. */
function versions(raw: string | string[] | undefined): number[] | undefined {
  const values = listParam(raw);
  if (values === undefined) return undefined;
  return values
    .map((v) => {
      if (!/^\d{1,9}$/.test(v)) throw invalidRequest(`normalizer_versions "${v}" is not a version number (a non-negative integer)`);
      return Number(v);
    })
    .sort((a, b) => a - b);
}

export function receiptRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.receipts;
  const project = requestProject(ctx.projects);

  app.post(
    '/action-receipts/entries',
    {
      // Receipts are agent telemetry of a kind: a frozen key cannot write them; the chain is their record (no audit line each).
      config: { scope: 'ingest:write', telemetryWrite: true, audit: 'none' },
      preValidation: async (req) => refuseActorFields(req),
      schema: {
        operationId: 'reportActionReceiptEntries',
        tags,
        summary: 'report action-receipt entries (authority REPORTED): checked, linked into the chain and folded, all or nothing',
        description:
          `1 to ${MAX_BATCH} entries. The authority is always RECEIPT_AUTHORITY_REPORTED and \`reported_by\` is the credential; fields the platform sets are refused. ` +
          'One refused entry refuses the batch with 400 naming its index (`details.index`, `details.field`); nothing is stored. Refused: half a policy pair, ' +
          'an action already recorded under the other authority, compensation or rollback with no earlier EXECUTED, EFFECT_VERIFIED or EFFECT_UNKNOWN entry, ' +
          'unknown or *_UNSPECIFIED states. Retries: `request_id` returns the first answer to the same principal and 409 to another; `entry_id` appends an ' +
          'entry once per action (same content again: `duplicate: true`; other content: 409). A key frozen by a containment is answered 401 as a revoked one.',
        body: ReportEntriesBody,
        response: { 200: ReportEntriesResponse, ...errors(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (req) => {
      checkBodyProjectSelector(req.principal, req.body.project_id);
      const p = await resolveProject(req.principal, ctx.projects, req.body.project_id);
      return svc.ingestReported(req.principal, p, req.body);
    },
  );

  app.get(
    '/action-receipts',
    {
      config: read,
      schema: {
        operationId: 'listActionReceipts',
        tags,
        summary: 'action receipts of a project, newest client occurred_at first',
        description:
          '`authority`, `final_state` (closed: unknown values are 400), `normalizer_versions` (open numbers: an unseen version gives an empty page): repeated or ' +
          "comma-separated, OR within, AND across. `chain_id` without `action_id` answers the one receipt holding the chain's newest entry (platform sequence " +
          `order), no cursor. Default ${RECEIPT_PAGE.default}, at most ${RECEIPT_PAGE.max} a page.`,
        querystring: ListReceiptsQuery,
        response: { 200: ListReceiptsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const q = req.query;
      const { id: projectId } = await resolveProject(req.principal, ctx.projects, q.project_id);
      const filter: ReceiptFilter = {
        projectId,
        authorities: closedFilter('authority', q.authority, RECEIPT_AUTHORITIES),
        finalStates: closedFilter('final_state', q.final_state, RECEIPT_STATES),
        normalizerVersions: versions(q.normalizer_versions),
        chainId: q.chain_id,
        actionId: q.action_id,
        runId: q.run_id?.toLowerCase(),
      };
      const limit = readLimit(q.limit, RECEIPT_PAGE);
      const fp = fingerprint(['receipts', filter]);
      const pos = readCursor(q.cursor, fp);
      if (filter.chainId !== undefined && filter.actionId === undefined) {
        if (pos) return { action_receipts: [], next_cursor: null };
        const latest = await svc.latestInChain(filter);
        return { action_receipts: latest ? [receiptView(latest)] : [], next_cursor: null };
      }
      const rows = await svc.list(filter, { limit, after: pos && { occurredAt: String(pos.k), actionId: pos.id } });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.occurredAt, r.actionId));
      return { action_receipts: items.map(receiptView), next_cursor };
    },
  );

  app.get(
    '/action-receipts/:actionId',
    {
      config: read,
      schema: {
        operationId: 'getActionReceipt',
        tags,
        summary: 'one action receipt with every entry',
        querystring: ProjectQuery,
        params: ActionParams,
        response: { 200: ActionReceiptWithEntries, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { receipt, entries } = await svc.get((await project(req)).id, req.params.actionId);
      return { ...receiptView(receipt), entries: entries.map(entryView) };
    },
  );

  app.get(
    '/receipt-chains/:chainId/verify',
    {
      config: read,
      schema: {
        operationId: 'verifyReceiptChain',
        tags,
        summary: "recompute every link and digest of a project's receipt chain",
        description:
          "A project's chain is `actions`. A chain never opened (no receipt recorded) is 404. `valid: false` comes with 200, `first_invalid_seq` and a " +
          'short `detail`. This check cannot see entries removed from the end together with the head: compare `entry_count` and `last_entry_sha256` ' +
          'with a checkpoint you kept.',
        querystring: ProjectQuery,
        params: ChainParams,
        response: { 200: ChainVerificationResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const p = await project(req);
      const result = req.params.chainId === ACTIONS_CHAIN_ID ? await ctx.receiptChain.verify(p.id, req.params.chainId) : null;
      if (!result) throw notFound('receipt chain');
      return result;
    },
  );
}
