/**
 * `/receipt-chains/{chainId}/...`: signed checkpoints and RFC 6962 tree heads of a receipt chain, inclusion
 * and consistency proofs, and the entries with their canonical bytes for offline checks. Thin: the rules are
 * in service.ts. Every route needs agents:read and a project (`project_id`, or the project of the key).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import { requestProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import {
  ArtifactListQuery,
  ChainParams,
  CheckpointList,
  ArtifactParams,
  CheckpointView,
  ConsistencyProofView,
  ConsistencyQuery,
  EntriesQuery,
  EntriesView,
  InclusionProofView,
  InclusionQuery,
  TreeHeadList,
  TreeHeadView,
} from './schemas.js';
import { ARTIFACT_LIMIT, ENTRY_LIMIT, READ_SCOPE } from './service.js';
import type { ArtifactKind, ChainArtifactRecord } from './store.js';
import { artifactView, entryView } from './views.js';

const tags = ['receipt-chains'];
const config = { scope: READ_SCOPE };

/** Nothing signed comes from the client: a body naming anything is refused (no body, or `{}`, is the request). */
async function refuseBody(req: FastifyRequest) {
  const body = req.body;
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('this request takes no body');
  const named = Object.keys(body)[0];
  if (named !== undefined) throw invalidRequest(`${named} cannot be sent: everything in a signed artifact is read from the chain and the signing key`);
}

export function chainProofRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.chainProofs;
  const project = requestProject(ctx.projects);

  const signRoute = (kind: ArtifactKind, path: string, operationId: string, summary: string, description: string, view: typeof CheckpointView | typeof TreeHeadView) =>
    app.post(
      path,
      {
        config,
        preValidation: refuseBody,
        schema: {
          operationId,
          tags,
          summary,
          description:
            `${description} The chain is verified first: a chain that does not verify is not signed (409, \`details.reason\` \`chain_invalid\` with ` +
            '`detail` and `first_invalid_seq`); an empty chain is 409 `chain_empty`; entries gone from the end or rewritten since the service ' +
            'last read them are 409 `chain_truncated` or `chain_rewritten`. A never-opened chain is 404. Takes no body.',
          params: ChainParams,
          querystring: ProjectQuery,
          response: { 201: view, ...errors(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const p = await project(req);
        const r = kind === 'checkpoint' ? await svc.checkpoint(req.principal, p, req.params.chainId) : await svc.treeHead(req.principal, p, req.params.chainId);
        return reply.code(201).send(artifactView<never>(r));
      },
    );

  signRoute(
    'checkpoint',
    '/receipt-chains/:chainId/checkpoints',
    'createReceiptCheckpoint',
    'sign a checkpoint of the chain at its last entry',
    'Signs `svc.receipt-checkpoint.v1` (domain `svc.receipt-checkpoint.signature.v1`): `seq` and `entry_sha256` of the last entry (42 entries checkpoint at 41). Keep it: a later chain shorter than it, or with another digest at its `seq`, was cut or rewritten.',
    CheckpointView,
  );
  signRoute(
    'tree_head',
    '/receipt-chains/:chainId/tree-heads',
    'createReceiptTreeHead',
    'sign the RFC 6962 Merkle tree head (size, root) of the chain',
    'Signs `svc.receipt-tree-head.v1` (domain `svc.receipt-tree-head.signature.v1`): `tree_size` and `root_sha256` over every entry (leaf = the entry canonical bytes). With a kept tree head, a consistency proof shows a later tree extends it.',
    TreeHeadView,
  );

  const listRoute = (kind: ArtifactKind, path: string, operationId: string, key: 'checkpoints' | 'tree_heads', response: typeof CheckpointList | typeof TreeHeadList) =>
    app.get(
      path,
      {
        config,
        schema: {
          operationId,
          tags,
          summary: `stored ${kind === 'checkpoint' ? 'checkpoints' : 'signed tree heads'} of the chain, newest first`,
          description: `Paged with \`cursor\` and \`limit\` (default ${ARTIFACT_LIMIT.default}, at most ${ARTIFACT_LIMIT.max}). A never-opened chain is 404.`,
          params: ChainParams,
          querystring: ArtifactListQuery,
          response: { 200: response, ...errors(400, 401, 403, 404) },
        },
      },
      async (req) => {
        const p = await project(req);
        const limit = readLimit(req.query.limit, ARTIFACT_LIMIT);
        const after = decodeCursor(req.query.cursor);
        if (after && typeof after.k !== 'string') throw invalidRequest('cursor is malformed or expired');
        const rows = await svc.list(p, req.params.chainId, kind, limit, after && { createdAt: String(after.k), id: after.id });
        const { items, next_cursor } = page(rows, limit, (r: ChainArtifactRecord) => ({ k: r.createdAt, id: r.id }));
        return { [key]: items.map((r) => artifactView(r)), next_cursor } as never;
      },
    );

  listRoute('checkpoint', '/receipt-chains/:chainId/checkpoints', 'listReceiptCheckpoints', 'checkpoints', CheckpointList);
  listRoute('tree_head', '/receipt-chains/:chainId/tree-heads', 'listReceiptTreeHeads', 'tree_heads', TreeHeadList);

  const getRoute = (kind: ArtifactKind, path: string, operationId: string, view: typeof CheckpointView | typeof TreeHeadView) =>
    app.get(
      path,
      {
        config,
        schema: {
          operationId,
          tags,
          summary: `one stored ${kind === 'checkpoint' ? 'checkpoint' : 'signed tree head'}, as signed`,
          params: ArtifactParams,
          querystring: ProjectQuery,
          response: { 200: view, ...errors(400, 401, 403, 404) },
        },
      },
      async (req) => artifactView<never>(await svc.get(await project(req), req.params.chainId, kind, req.params.id)),
    );

  getRoute('checkpoint', '/receipt-chains/:chainId/checkpoints/:id', 'getReceiptCheckpoint', CheckpointView);
  getRoute('tree_head', '/receipt-chains/:chainId/tree-heads/:id', 'getReceiptTreeHead', TreeHeadView);

  app.get(
    '/receipt-chains/:chainId/proofs/inclusion',
    {
      config,
      schema: {
        operationId: 'getReceiptInclusionProof',
        tags,
        summary: 'RFC 6962 audit path of one entry in the tree of the first tree_size entries',
        description:
          'Check it against the `root_sha256` of a signed tree head of that size (RFC 9162 2.1.3.2). `seq` below `tree_size`, `tree_size` from 1 to the ' +
          'chain size; anything else is 400. A chain cut or rewritten since the service last read it is 409.',
        params: ChainParams,
        querystring: InclusionQuery,
        response: { 200: InclusionProofView, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => svc.inclusion(await project(req), req.params.chainId, req.query.seq, req.query.tree_size),
  );

  app.get(
    '/receipt-chains/:chainId/proofs/consistency',
    {
      config,
      schema: {
        operationId: 'getReceiptConsistencyProof',
        tags,
        summary: 'RFC 6962 consistency proof: the tree of the first `first` entries is a prefix of the tree of the first `second`',
        description:
          'Check it against a kept tree head of size `first` and a later one of size `second` (RFC 9162 2.1.4.2): it fails when entries were removed ' +
          'or rewritten in between. 1 <= first <= second <= chain size; anything else is 400.',
        params: ChainParams,
        querystring: ConsistencyQuery,
        response: { 200: ConsistencyProofView, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => svc.consistency(await project(req), req.params.chainId, req.query.first, req.query.second),
  );

  app.get(
    '/receipt-chains/:chainId/entries',
    {
      config,
      schema: {
        operationId: 'listReceiptChainEntries',
        tags,
        summary: 'the chain entries with their canonical bytes, in seq order (for export and offline verification)',
        description: `From \`from_seq\` (default 0; above the chain size is 400), at most \`limit\` (default ${ENTRY_LIMIT.default}, at most ${ENTRY_LIMIT.max}). \`next_from_seq\` continues; null at the end.`,
        params: ChainParams,
        querystring: EntriesQuery,
        response: { 200: EntriesView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const limit = readLimit(req.query.limit, ENTRY_LIMIT);
      const r = await svc.entries(await project(req), req.params.chainId, req.query.from_seq ?? 0, limit);
      return { ...r, entries: r.entries.map(entryView) };
    },
  );
}
