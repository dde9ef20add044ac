import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import { errors, NoContent } from '../../http/schemas.js';
import { projectView } from './service.js';
import { CreateProjectBody, ListProjectsQuery, ListProjectsResponse, ProjectParams, ProjectResponse, UpdateProjectBody } from './schemas.js';

const tags = ['projects'];

export function projectRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.projects;

  app.get(
    '/projects',
    { config: { scope: 'projects:read' }, schema: { operationId: 'listProjects', summary: 'list the projects of the organization', tags, querystring: ListProjectsQuery, response: { 200: ListProjectsResponse, ...errors(400, 401, 403) } } },
    async (req) => {
      const limit = readLimit(req.query.limit, { default: 100, max: 200 });
      const after = decodeCursor(req.query.cursor);
      const rows = await svc.list(req.principal, { limit, after: after && { createdAt: String(after.k), id: after.id } });
      const { items, next_cursor } = page(rows, limit, (p) => ({ k: p.createdAt, id: p.id }));
      return { projects: items.map(projectView), next_cursor };
    },
  );

  app.post(
    '/projects',
    { config: { scope: 'projects:write' }, schema: { operationId: 'createProject', summary: 'create a project', tags, body: CreateProjectBody, response: { 201: ProjectResponse, ...errors(400, 401, 403) } } },
    async (req, reply) => reply.code(201).send(projectView(await svc.create(req.principal, req.body))),
  );

  app.get(
    '/projects/:id',
    { config: { scope: 'projects:read' }, schema: { operationId: 'getProject', summary: 'get one project', tags, params: ProjectParams, response: { 200: ProjectResponse, ...errors(401, 403, 404) } } },
    async (req) => projectView(await svc.get(req.principal, req.params.id)),
  );

  app.patch(
    '/projects/:id',
    {
      config: { scope: 'projects:write' },
      schema: { operationId: 'updateProject', summary: 'rename a project or change its sampling rate', tags, params: ProjectParams, body: UpdateProjectBody, response: { 200: ProjectResponse, ...errors(400, 401, 403, 404) } },
    },
    async (req) => projectView(await svc.update(req.principal, req.params.id, req.body ?? {})),
  );

  app.delete(
    '/projects/:id',
    { config: { scope: 'projects:write' }, schema: { operationId: 'deleteProject', summary: 'delete a project', tags, params: ProjectParams, response: { 204: NoContent, ...errors(401, 403, 404) } } },
    async (req, reply) => {
      await svc.delete(req.principal, req.params.id);
      return reply.code(204).send();
    },
  );
}
