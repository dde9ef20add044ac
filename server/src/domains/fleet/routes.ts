/** `GET /fleet` (`agents:read`): the project's agents with 24-hour run health, active signals and containment. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { decodeCursor, NextCursorField, page, PageQuery, readLimit } from '../../http/pagination.js';
import { requestProject } from '../../http/project-scope.js';
import { errors, ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { RUN_STATUSES } from '../agent-runs/model.js';
import { FLEET_LIMIT, type FleetEntry } from './service.js';

const FleetQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    cursor: PageQuery.cursor,
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${FLEET_LIMIT.default}, at most ${FLEET_LIMIT.max} (the server cap); 0 is refused` })),
  },
  { additionalProperties: false },
);

const Count = Type.Integer({ minimum: 0 });
const FleetAgent = Type.Object(
  {
    asset_id: Type.String(),
    name: Type.String(),
    shadow: Type.Boolean({ description: 'discovered before anyone declared it' }),
    approval_state: Type.String(),
    risk_tier: Type.String(),
    observation_keys: Type.Array(Type.String()),
    runs_24h: Type.Optional(
      Type.Object(
        {
          runs: Count,
          by_status: Type.Record(Type.String(), Count, { description: `runs by stated status (${RUN_STATUSES.join(', ')}); runs that state none count in \`runs\` only` }),
          last_run_at: Type.Optional(Type.String({ format: 'date-time' })),
        },
        { description: 'runs started in the last 24 hours; absent (with `runs_24h_unavailable`) when the telemetry store could not be read' },
      ),
    ),
    runs_24h_unavailable: Type.Optional(stringEnum(['telemetry_unreadable'] as const)),
    open_signals: Type.Object({ total: Count, by_severity: Type.Record(Type.String(), Count) }, { description: 'open or acknowledged review signals about the agent' }),
    containments: Type.Array(
      Type.Object({ quarantine_id: Type.String(), status: Type.String(), action: Type.String() }),
      { description: 'pending or active containments of the agent (by asset or one of its observation keys)' },
    ),
  },
  { $id: 'FleetAgent' },
);

const iso = (us: number) => `${new Date(Math.floor(us / 1000)).toISOString().slice(0, -1)}${String(us % 1000).padStart(3, '0')}Z`;

function view(e: FleetEntry) {
  const total = Object.values(e.signals).reduce((a, n) => a + n, 0);
  return {
    asset_id: e.asset.id,
    name: e.asset.name,
    shadow: e.asset.origin === 'discovered',
    approval_state: e.asset.approvalState,
    risk_tier: e.asset.riskTier,
    observation_keys: e.asset.observationKeys,
    ...(e.health
      ? { runs_24h: { runs: e.health.runs, by_status: e.health.byStatus, ...(e.health.lastStartUs !== null ? { last_run_at: iso(e.health.lastStartUs) } : {}) } }
      : { runs_24h_unavailable: 'telemetry_unreadable' as const }),
    open_signals: { total, by_severity: e.signals },
    containments: e.containments.map((q) => ({ quarantine_id: q.id, status: q.status, action: q.action })),
  };
}

export function fleetRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = requestProject(ctx.projects);
  app.get(
    '/fleet',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listFleet',
        tags: ['assets'],
        summary: "the project's agents with their last 24 hours of runs, active review signals and containments",
        description: `One entry per inventory asset, newest first; cursor paging, \`limit\` default ${FLEET_LIMIT.default}, at most ${FLEET_LIMIT.max}.`,
        querystring: FleetQuery,
        response: { 200: Type.Object({ agents: Type.Array(FleetAgent), next_cursor: NextCursorField }), ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const limit = readLimit(req.query.limit, FLEET_LIMIT);
      const after = decodeCursor(req.query.cursor);
      if (after && typeof after.k !== 'string') throw invalidRequest('cursor is malformed or expired');
      const rows = await ctx.fleet.list(projectId, { after: after && { createdAt: String(after.k), id: after.id }, limit });
      const { items, next_cursor } = page(rows, limit, (e) => ({ k: e.asset.createdAt, id: e.asset.id }));
      return { agents: items.map(view), next_cursor };
    },
  );
}

