/** The agent reads (spec 1 "AI execution"; spec 2 "Agent events and receipts", "Attribution entry"); rules in service.ts. */
import { receiptView } from '../receipts/views.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { requestProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import {
  IdentityParams,
  Identity,
  ListEventsQuery,
  ListEventsResponse,
  ListIdentitiesQuery,
  ListIdentitiesResponse,
  ListRunsQuery,
  ListRunsResponse,
  ListSessionsQuery,
  ListSessionsResponse,
  ListTurnsQuery,
  ListTurnsResponse,
  Run,
  RunGraphResponse,
  RunParams,
  Session,
  SessionParams,
} from './schemas.js';

const tags = ['agents'];
// Every route here only reads: identical concurrent requests share one answer (http/shared-reads.ts).
const read = { scope: 'agents:read', sharedRead: true };

// `ctx.agentRuns` is read per request (tests may swap the service, e.g. for one with fake prices).
export function agentRunRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = requestProject(ctx.projects);

  app.get(
    '/agent-runs',
    { config: read, schema: { operationId: 'listAgentRuns', summary: 'list agent runs', tags, querystring: ListRunsQuery, response: { 200: ListRunsResponse, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.listRuns((await project(req)).id, req.query),
  );

  app.get(
    '/agent-runs/:run_id',
    { config: read, schema: { operationId: 'getAgentRun', summary: 'get one agent run', tags, params: RunParams, querystring: ProjectQuery, response: { 200: Run, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.getRun((await project(req)).id, req.params.run_id),
  );

  app.get(
    '/agent-runs/:run_id/graph',
    {
      config: read,
      schema: { operationId: 'getAgentRunGraph', summary: 'the graph of an agent run', tags, params: RunParams, querystring: ProjectQuery, response: { 200: RunGraphResponse, ...errors(400, 401, 403, 404, 429) } },
    },
    async (req) => {
      const { id } = await project(req);
      const graph = await ctx.agentRuns.graph(id, req.params.run_id);
      // The run's action receipts (reported entries name the run by its id).
      return { ...graph, action_receipts: (await ctx.receipts.ofRun(id, req.params.run_id)).map(receiptView) };
    },
  );

  app.get(
    '/agent-sessions',
    { config: read, schema: { operationId: 'listAgentSessions', summary: 'list agent sessions', tags, querystring: ListSessionsQuery, response: { 200: ListSessionsResponse, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.listSessions((await project(req)).id, req.query),
  );

  app.get(
    '/agent-sessions/:session_key',
    { config: read, schema: { operationId: 'getAgentSession', summary: 'get one agent session', tags, params: SessionParams, querystring: ProjectQuery, response: { 200: Session, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.getSession((await project(req)).id, req.params.session_key),
  );

  app.get(
    '/agent-turns',
    { config: read, schema: { operationId: 'listAgentTurns', summary: 'list the turns of agent sessions', tags, querystring: ListTurnsQuery, response: { 200: ListTurnsResponse, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.listTurns((await project(req)).id, req.query),
  );

  app.get(
    '/agent-events',
    { config: read, schema: { operationId: 'listAgentEvents', summary: 'list agent events', tags, querystring: ListEventsQuery, response: { 200: ListEventsResponse, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.listEvents((await project(req)).id, req.query),
  );

  app.get(
    '/agent-identities',
    { config: read, schema: { operationId: 'listAgentIdentities', summary: 'list the observed agent identities', tags, querystring: ListIdentitiesQuery, response: { 200: ListIdentitiesResponse, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.listIdentities((await project(req)).id, req.query),
  );

  app.get(
    '/agent-identities/:observation_key',
    { config: read, schema: { operationId: 'getAgentIdentity', summary: 'get one observed agent identity', tags, params: IdentityParams, querystring: ProjectQuery, response: { 200: Identity, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentRuns.getIdentity((await project(req)).id, req.params.observation_key),
  );
}
