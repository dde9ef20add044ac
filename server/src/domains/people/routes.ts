import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import { errors, NoContent } from '../../http/schemas.js';
import { memberView } from './members-service.js';
import { ListMembersQuery, ListMembersResponse, MemberEntry, MemberParams, MeResponse, UpdateMemberBody } from './schemas.js';

const tags = ['people'];

export function peopleRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.members;

  app.get(
    '/users/me',
    { schema: { operationId: 'getCurrentUser', tags, summary: 'the signed-in person, or the person behind the API key', response: { 200: MeResponse, ...errors(401, 403) } } },
    async (req) => svc.me(req.principal),
  );

  // No route scope: members:write or any signed-in member may list (checked by the service).
  app.get(
    '/members',
    { schema: { operationId: 'listMembers', summary: 'list the members of the organization', tags, querystring: ListMembersQuery, response: { 200: ListMembersResponse, ...errors(400, 401, 403) } } },
    async (req) => {
      const limit = readLimit(req.query.limit, { default: 100, max: 200 });
      const after = decodeCursor(req.query.cursor);
      const rows = await svc.list(req.principal, { limit, after: after && { createdAt: String(after.k), userId: after.id } });
      const { items, next_cursor } = page(rows, limit, (m) => ({ k: m.createdAt, id: m.userId }));
      return { members: items.map(memberView), next_cursor };
    },
  );

  app.patch(
    '/members/:user_id',
    {
      config: { scope: 'members:write', audit: 'domain' },
      schema: { operationId: 'updateMember', summary: "change a member's role", tags, params: MemberParams, body: UpdateMemberBody, response: { 200: MemberEntry, ...errors(400, 401, 403, 404, 409) } },
    },
    async (req) => svc.setRole(req.principal, req.params.user_id, req.body.role),
  );

  app.delete(
    '/members/:user_id',
    { config: { scope: 'members:write', audit: 'domain' }, schema: { operationId: 'deleteMember', summary: 'remove a member from the organization', tags, params: MemberParams, response: { 204: NoContent, ...errors(401, 403, 404, 409) } } },
    async (req, reply) => {
      await svc.remove(req.principal, req.params.user_id);
      return reply.code(204).send();
    },
  );
}
