/** `/services` and `/traces` (spec 1, "Raw observability"). The rules are in service.ts. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { resolveProject } from '../../http/project-scope.js';
import { errors } from '../../http/schemas.js';
import {
  DeleteTraceResponse,
  ListServicesQuery,
  ListServicesResponse,
  SearchTracesQuery,
  SearchTracesResponse,
  TraceParams,
  TraceQuery,
  TraceResponse,
} from './schemas.js';
import { TRACES_DELETE, TRACES_READ } from './service.js';

const tags = ['traces'];

export function tracesRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.traces;

  // Needs traces:read or logs:read: checked by the service (the hook checks one scope).
  app.get(
    '/services',
    {
      schema: {
        tags,
        summary: 'services seen in spans and logs of the project in a window',
        querystring: ListServicesQuery,
        response: { 200: ListServicesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.services(req.principal, project.id, req.query);
    },
  );

  app.get(
    '/traces',
    {
      config: { scope: TRACES_READ },
      schema: {
        tags,
        summary: 'search traces: a trace matches when one of its spans starting in the window meets every span condition',
        querystring: SearchTracesQuery,
        response: { 200: SearchTracesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.search(req.principal, project.id, req.query);
    },
  );

  app.get(
    '/traces/:traceId',
    {
      config: { scope: TRACES_READ },
      schema: {
        tags,
        summary: 'one trace as a span tree, with attributes, resource attributes and span events',
        params: TraceParams,
        querystring: TraceQuery,
        response: { 200: TraceResponse, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.get(req.principal, project.id, req.params.traceId);
    },
  );

  app.delete(
    '/traces/:traceId',
    {
      config: { scope: TRACES_DELETE },
      schema: {
        tags,
        summary: 'delete every span and span event of a trace; not undone by revoking the credential',
        params: TraceParams,
        querystring: TraceQuery,
        response: { 200: DeleteTraceResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.delete(project.id, req.params.traceId);
    },
  );
}
