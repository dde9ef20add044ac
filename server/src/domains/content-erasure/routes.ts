/**
 * Erasure of recorded content (docs/content-policy.md "Erasure"): `POST /projects/{projectId}/content-erasures`
 * erases one subject's content now (`governance:write`); the list and the single read show every
 * erasure, scheduled ones included (`governance:read`). A project-scoped credential is pinned to its own
 * project, like every content-policy route. Thin: the rules are in service.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { errors } from '../../http/schemas.js';
import { fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import { ProjectParams } from '../content-policy/schemas.js';
import { GOVERNANCE_READ, GOVERNANCE_WRITE } from '../content-policy/service.js';
import { ERASURE_LIMIT, EraseBody, ErasureParams, ErasureView, ListErasuresQuery, ListErasuresResponse } from './schemas.js';
import type { ErasureRecord } from './store.js';

const tags = ['content-policy'];

/** Who asked comes from the credential: a body naming it is refused, not ignored. */
const ACTOR_FIELDS = ['requested_by', 'requester', 'requester_principal', 'approver_principal', 'actor', 'user_id', 'api_key_id', 'created_by'];

async function refuseActors(req: FastifyRequest) {
  const body = req.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const named = ACTOR_FIELDS.find((f) => Object.hasOwn(body, f));
    if (named) throw invalidRequest(`${named} is taken from the credential and cannot be sent`);
  }
}

export function erasureView(r: ErasureRecord) {
  return {
    id: r.id,
    project_id: r.projectId,
    kind: r.kind,
    subject_kind: r.subjectKind,
    subject_id: r.subjectId,
    content_classes: r.contentClasses,
    before: r.beforeAt,
    reason: r.reason,
    requested_by: r.requestedBy,
    request_id: r.requestId,
    status: r.status,
    counts: r.counts && { spans: r.counts.spans, span_events: r.counts.spanEvents, logs: r.counts.logs, attributes: r.counts.attributes, log_bodies: r.counts.bodies ?? 0 },
    detail_code: r.detailCode,
    created_at: r.createdAt,
    completed_at: r.completedAt,
  };
}

export function contentErasureRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.contentErasure;
  const path = '/projects/:projectId/content-erasures';

  app.post(
    path,
    {
      config: { scope: GOVERNANCE_WRITE },
      preValidation: refuseActors,
      schema: {
        operationId: 'eraseSubjectContent',
        tags,
        summary: "erase one subject's recorded content now",
        description:
          'Removes the recorded-content attributes of the named classes (default: all) from every span, span event and log of the subject: a session, a trace or an end user. ' +
          'Times, ids, tokens and costs stay. Writes a mediated action receipt (policy `content:subject_erasure@v1`) whose action id is the erasure id. ' +
          '`request_id` makes a retry safe: the same principal gets the first erasure back (200), another principal 409. 201 when erased now; 503 when the telemetry store failed part way (send it again).',
        params: ProjectParams,
        body: EraseBody,
        response: { 200: ErasureView, 201: ErasureView, ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      const { record, created } = await svc.eraseSubject(req.principal, req.params.projectId, req.body);
      return reply.code(created ? 201 : 200).send(erasureView(record));
    },
  );

  app.get(
    path,
    {
      config: { scope: GOVERNANCE_READ },
      schema: {
        operationId: 'listContentErasures',
        tags,
        summary: 'the erasures of recorded content of a project, newest first',
        description: `Subject erasures and scheduled retention erasures (filter \`kind\`). Paged with \`cursor\` and \`limit\` (default ${ERASURE_LIMIT.default}, at most ${ERASURE_LIMIT.max}).`,
        params: ProjectParams,
        querystring: ListErasuresQuery,
        response: { 200: ListErasuresResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const limit = readLimit(req.query.limit, ERASURE_LIMIT);
      const fp = fingerprint(['erasures', req.params.projectId, req.query.kind ?? null]);
      const after = readCursor(req.query.cursor, fp);
      if (after && typeof after.k !== 'string') throw invalidRequest('cursor is malformed or expired');
      const rows = await svc.list(req.principal, req.params.projectId, { kind: req.query.kind, limit, after: after && { createdAt: after.k as string, id: after.id } });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.createdAt, r.id));
      return { erasures: items.map(erasureView), next_cursor };
    },
  );

  app.get(
    `${path}/:erasureId`,
    {
      config: { scope: GOVERNANCE_READ },
      schema: {
        operationId: 'getContentErasure',
        tags,
        summary: 'one erasure of recorded content',
        params: ErasureParams,
        response: { 200: ErasureView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => erasureView(await svc.get(req.principal, req.params.projectId, req.params.erasureId)),
  );
}
