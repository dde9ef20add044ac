import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { readLimit } from '../../http/pagination.js';
import { errors } from '../../http/schemas.js';
import {
  AgentConnection,
  BudgetResponse,
  ConnectionParams,
  GetBudgetQuery,
  ListConnectionsQuery,
  ListConnectionsResponse,
  PutBudgetBody,
  RevokeConnectionQuery,
} from './schemas.js';
import { connectionView } from './service.js';

export function agentConnectionRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.agentConnections;
  const config = { scope: 'oauth:connections' };
  // These write their own audit records in the transaction of the change.
  const domainAudited = { scope: 'oauth:connections', audit: 'domain' as const };

  app.get(
    '/account/agent-connections',
    {
      config,
      schema: {
        operationId: 'listAgentConnections',
        tags: ['agent-connections'],
        summary: "the signed-in person's agent approvals, newest first (browser session only)",
        querystring: ListConnectionsQuery,
        response: { 200: ListConnectionsResponse, ...errors(400, 401, 403) },
      },
    },
    async (req) => {
      const limit = readLimit(req.query.limit, { default: 100, max: 200 });
      const offset = req.query.offset ?? 0;
      const rows = await svc.list(req.principal, { limit, offset, orgWide: req.query.org_wide === true });
      const more = rows.length > limit;
      return { agent_connections: rows.slice(0, limit).map(connectionView), limit, offset, next_offset: more ? offset + limit : null };
    },
  );

  app.delete(
    '/account/agent-connections/:id',
    {
      config: domainAudited,
      schema: {
        operationId: 'deleteAgentConnection',
        tags: ['agent-connections'],
        summary: 'revokes an approval: its grant, access and refresh tokens stop working at once',
        params: ConnectionParams,
        querystring: RevokeConnectionQuery,
        response: { 200: AgentConnection, ...errors(401, 403, 404) },
      },
    },
    async (req) => connectionView(await svc.revoke(req.principal, req.params.id, req.query.org_wide === true)),
  );

  // No route scope: own reads need activity:read, others audit:read (checked by the service).
  app.get(
    '/agent-budgets',
    { schema: { operationId: 'getAgentBudget', summary: 'the daily budget of one agent connection and what it spent today', tags: ['agent-budgets'], querystring: GetBudgetQuery, response: { 200: BudgetResponse, ...errors(400, 401, 403, 404) } } },
    async (req) => ctx.agentBudgets.get(req.principal, req.query.credential_kind, req.query.credential_id),
  );

  app.put(
    '/agent-budgets',
    {
      config: { audit: 'domain' },
      schema: {
        operationId: 'setAgentBudget',
        tags: ['agent-budgets'],
        summary: 'sets the daily budget of one agent connection; needs the owner or admin role, api_key:write and members:write',
        body: PutBudgetBody,
        response: { 200: BudgetResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => ctx.agentBudgets.put(req.principal, req.body),
  );
}
