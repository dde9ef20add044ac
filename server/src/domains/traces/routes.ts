/** `/services` and `/traces` (spec 1, "Raw observability"). The rules are in service.ts. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { requestProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import {
  DeleteTraceResponse,
  ListServicesQuery,
  ListServicesResponse,
  SearchTracesQuery,
  SearchTracesResponse,
  TraceParams,
  TraceResponse,
} from './schemas.js';
import { TRACES_DELETE, TRACES_READ } from './service.js';

const tags = ['traces'];
// Identical concurrent reads share one answer (http/shared-reads.ts).
const read = { scope: TRACES_READ, sharedRead: true };

export function tracesRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.traces;
  const project = requestProject(ctx.projects);

  // Needs traces:read or logs:read: checked by the service (the hook checks one scope).
  app.get(
    '/services',
    {
      config: { sharedRead: true },
      schema: {
        operationId: 'listServices',
        tags,
        summary: 'services seen in spans and logs of the project in a window',
        querystring: ListServicesQuery,
        response: { 200: ListServicesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      svc.requireServicesScope(req.principal); // 403 before the project lookup's 404
      return svc.services(req.principal, (await project(req)).id, req.query);
    },
  );

  app.get(
    '/traces',
    {
      config: read,
      schema: {
        operationId: 'searchTraces',
        tags,
        summary: 'search traces: a trace matches when one of its spans starting in the window meets every span condition',
        querystring: SearchTracesQuery,
        response: { 200: SearchTracesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => svc.search(req.principal, (await project(req)).id, req.query),
  );

  app.get(
    '/traces/:traceId',
    {
      config: read,
      schema: {
        operationId: 'getTrace',
        tags,
        summary: 'one trace as a span tree, with attributes, resource attributes and span events',
        params: TraceParams,
        querystring: ProjectQuery,
        response: { 200: TraceResponse, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (req) => svc.get(req.principal, (await project(req)).id, req.params.traceId),
  );

  app.delete(
    '/traces/:traceId',
    {
      config: { scope: TRACES_DELETE },
      schema: {
        operationId: 'deleteTrace',
        tags,
        summary: 'delete every span and span event of a trace; not undone by revoking the credential',
        params: TraceParams,
        querystring: ProjectQuery,
        response: { 200: DeleteTraceResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => svc.delete((await project(req)).id, req.params.traceId),
  );
}
