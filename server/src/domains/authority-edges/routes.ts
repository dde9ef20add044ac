/**
 * `/authority-edges`: list (`agents:read`) and revoke (`agents:write`; a record, not a delete). The
 * revoker comes from the credential: a body naming one is refused.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { resolveProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import { fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import { EdgeParams, ListEdgesQuery, ListEdgesResponse, RevokeBody, RevokeResponse } from './schemas.js';
import { EDGE_PAGE } from './service.js';
import { edgeView } from './views.js';

const tags = ['receipts'];
const ACTOR_FIELDS = ['revoked_by', 'revoked_at', 'revoker', 'actor', 'user_id', 'revoked'];

async function refuseActors(req: FastifyRequest) {
  const body = req.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const named = ACTOR_FIELDS.find((f) => Object.hasOwn(body, f));
    if (named) throw invalidRequest(`${named} is taken from the credential and the edge's record, and cannot be sent`);
  }
}

export function authorityEdgeRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.authorityEdges;

  app.get(
    '/authority-edges',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listAuthorityEdges',
        tags,
        summary: 'delegations of authority (principal, tool, purpose) with their sightings; revoked ones only with include_revoked=true',
        description: `Newest first. Default ${EDGE_PAGE.default}, at most ${EDGE_PAGE.max} a page.`,
        querystring: ListEdgesQuery,
        response: { 200: ListEdgesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const q = req.query;
      const p = await resolveProject(req.principal, ctx.projects, q.project_id);
      const filter = { orgId: req.principal.orgId, projectId: p.id, principal: q.from_principal, includeRevoked: q.include_revoked === true };
      const limit = readLimit(q.limit, EDGE_PAGE);
      const fp = fingerprint(['authority-edges', filter]);
      const pos = readCursor(q.cursor, fp);
      const rows = await svc.list(filter, { limit, after: pos && { createdAt: String(pos.k), id: pos.id } });
      const { items, next_cursor } = pageOf(rows, limit, (e) => makeCursor(fp, e.createdAt, e.id));
      return { authority_edges: items.map(edgeView), next_cursor };
    },
  );

  app.post(
    '/authority-edges/:edgeId/revoke',
    {
      config: { scope: 'agents:write' },
      preValidation: refuseActors,
      schema: {
        operationId: 'revokeAuthorityEdge',
        tags,
        summary: 'revoke an authority edge (a record, not a delete)',
        description:
          '`reason` required. The revoker and the instant come from the credential and the clock. Repeating answers `already_revoked: true` with the first ' +
          'reason and instant. A later AUTHORIZED entry exercising the edge does not restore it and blocks nothing; it raises ' +
          'REVIEW_SIGNAL_KIND_REVOKED_AUTHORITY_EXERCISED. `project_id` (optional) narrows: an edge of another project or organization is 404.',
        querystring: ProjectQuery,
        params: EdgeParams,
        body: RevokeBody,
        response: { 200: RevokeResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { edge, alreadyRevoked } = await svc.revoke(req.principal, req.params.edgeId, req.body.reason, req.query.project_id || undefined);
      return { ...edgeView(edge), already_revoked: alreadyRevoked };
    },
  );
}
