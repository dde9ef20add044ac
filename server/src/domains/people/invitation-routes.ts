import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import { errors } from '../../http/schemas.js';
import { invitationView } from './invitations-service.js';
import {
  AcceptedInvitation,
  AcceptInvitationBody,
  CreatedInvitation,
  CreateInvitationBody,
  InvitationEntry,
  InvitationParams,
  ListInvitationsQuery,
  ListInvitationsResponse,
} from './schemas.js';

const tags = ['invitations'];
const config = { scope: 'members:write', audit: 'domain' as const };

export function invitationRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.invitations;

  app.post(
    '/invitations',
    { config, schema: { operationId: 'createInvitation', summary: 'invite a person by email (the token is shown once)', tags, body: CreateInvitationBody, response: { 201: CreatedInvitation, ...errors(400, 401, 403, 409) } } },
    async (req, reply) => reply.code(201).send(await svc.create(req.principal, req.body)),
  );

  app.get(
    '/invitations',
    { config, schema: { operationId: 'listInvitations', summary: 'list the invitations of the organization', tags, querystring: ListInvitationsQuery, response: { 200: ListInvitationsResponse, ...errors(400, 401, 403) } } },
    async (req) => {
      const limit = readLimit(req.query.limit, { default: 100, max: 200 });
      const after = decodeCursor(req.query.cursor);
      const rows = await svc.list(req.principal, { limit, after: after && { createdAt: String(after.k), id: after.id } });
      const { items, next_cursor } = page(rows, limit, (i) => ({ k: i.createdAt, id: i.id }));
      const now = ctx.clock.now();
      return { invitations: items.map((i) => invitationView(i, now)), next_cursor };
    },
  );

  app.post(
    '/invitations/:id/revoke',
    { config, schema: { operationId: 'revokeInvitation', summary: 'revoke a pending invitation', tags, params: InvitationParams, response: { 200: InvitationEntry, ...errors(401, 403, 404, 409) } } },
    async (req) => svc.revoke(req.principal, req.params.id),
  );

  // The token is the proof; the person accepting has no credential yet.
  app.post(
    '/invitations/accept',
    {
      config: { auth: 'none' },
      schema: { operationId: 'acceptInvitation', summary: 'accept an invitation', tags, security: [], body: AcceptInvitationBody, response: { 201: AcceptedInvitation, ...errors(400, 401, 409) } },
    },
    async (req, reply) => reply.code(201).send(await svc.accept(req.body)),
  );
}
