/** `/logs` and `/stream/logs` (spec 1, "Raw observability"). The rules are in service.ts and tail.ts. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { presentedCredential } from '../../http/auth.js';
import { unauthorized } from '../../http/errors.js';
import { requestProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import { openSse } from '../../http/sse.js';
import { readCookie, SESSION_COOKIE } from '../sessions/cookies.js';
import {
  AggregateLogsBody,
  AggregateLogsResponse,
  DeleteLogsQuery,
  DeleteLogsResponse,
  LogContextQuery,
  LogContextResponse,
  LogFieldsQuery,
  LogFieldsResponse,
  LogParams,
  LogPatternsQuery,
  LogPatternsResponse,
  SearchLogsQuery,
  SearchLogsResponse,
  TailLogsQuery,
} from './schemas.js';
import { logFilter, LOGS_DELETE, LOGS_READ } from './service.js';

const tags = ['logs'];
const read = { scope: LOGS_READ };
// Reads that answer once (not the live tail): identical concurrent requests share one answer (http/shared-reads.ts).
const shared = { ...read, sharedRead: true };

export function logsRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.logs;
  const project = requestProject(ctx.projects);
  // Open tails hold their connections; a shutdown ends them (without the final event) so close() can finish.
  app.addHook('preClose', async () => ctx.logTail.closeAll());

  app.get(
    '/logs',
    {
      config: shared,
      schema: {
        operationId: 'searchLogs',
        tags,
        summary: 'search log records in a window, newest first by default',
        querystring: SearchLogsQuery,
        response: { 200: SearchLogsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => svc.search(req.principal, (await project(req)).id, req.query),
  );

  // Only reads: like GET, only its refusals are audited.
  app.post(
    '/logs/aggregate',
    {
      config: { ...shared, audit: 'read' },
      schema: {
        operationId: 'aggregateLogs',
        tags,
        summary: 'count matching logs per group and, with a step, per time bucket',
        querystring: ProjectQuery,
        body: AggregateLogsBody,
        response: { 200: AggregateLogsResponse, ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (req) => svc.aggregate(req.principal, (await project(req)).id, req.body),
  );

  app.get(
    '/logs/fields',
    {
      config: shared,
      schema: {
        operationId: 'listLogFields',
        tags,
        summary: 'attribute keys of the matching logs with counts and top values',
        querystring: LogFieldsQuery,
        response: { 200: LogFieldsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => svc.fields(req.principal, (await project(req)).id, req.query),
  );

  app.get(
    '/logs/patterns',
    {
      config: shared,
      schema: {
        operationId: 'listLogPatterns',
        tags,
        summary: 'log bodies grouped into patterns (numbers, ids, quoted strings masked)',
        querystring: LogPatternsQuery,
        response: { 200: LogPatternsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => svc.patterns(req.principal, (await project(req)).id, req.query),
  );

  app.get(
    '/logs/:logId/context',
    {
      config: shared,
      schema: {
        operationId: 'getLogContext',
        tags,
        summary: 'a log record with the nearest earlier and later records of the same service',
        params: LogParams,
        querystring: LogContextQuery,
        response: { 200: LogContextResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => svc.context(req.principal, (await project(req)).id, req.params.logId, req.query),
  );

  app.delete(
    '/logs',
    {
      config: { scope: LOGS_DELETE },
      schema: {
        operationId: 'deleteLogs',
        tags,
        summary: 'delete matching log records (needs log_id, or since, until and a narrowing filter); not undone by revoking the credential',
        querystring: DeleteLogsQuery,
        response: { 200: DeleteLogsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => svc.delete(req.principal, (await project(req)).id, req.query),
  );

  app.get(
    '/stream/logs',
    {
      config: read,
      schema: {
        operationId: 'streamLogs',
        tags,
        summary: 'live tail of new log records as Server-Sent Events (event: log); ends with a final event: error when the credential is revoked or loses logs:read',
        querystring: TailLogsQuery,
        response: {
          200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...errors(400, 401, 403, 404, 429),
        },
      },
    },
    async (req, reply) => {
      const { id: projectId } = await project(req);
      const filter = logFilter(await ctx.logs.access(req.principal, projectId), req.query);
      // HEAD (added by the framework for GET) answers the headers without opening a tail.
      if (req.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').send('');
      const secret = presentedCredential(req)?.secret ?? readCookie(req, SESSION_COOKIE);
      if (secret === undefined) throw unauthorized();
      ctx.logTail.checkCapacity(req.principal.orgId);
      const lastEventId = req.headers['last-event-id'];
      const start = await ctx.logTail.startPosition(projectId, typeof lastEventId === 'string' ? lastEventId.trim() : undefined);
      const sse = openSse(req, reply);
      ctx.logTail.run({ sse, principal: req.principal, secret, projectId, filter, content: () => ctx.logs.access(req.principal, projectId) }, start);
      return reply;
    },
  );
}
