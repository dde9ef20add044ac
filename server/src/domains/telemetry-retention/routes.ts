/**
 * Telemetry retention windows (docs/retention.md): `GET/PUT /projects/{projectId}/retention`. Thin: the rules
 * are in service.ts. Scopes of project settings (`projects:read`, `projects:write`; a PUT that brings deletion
 * of a signal forward also needs its delete scope). A project-scoped credential is pinned to its own project
 * (another project's id is 404, as a missing one).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import { RETENTION_MAX_DAYS, RETENTION_MIN_DAYS } from './model.js';
import { ProjectParams, PutRetentionBody, RetentionView } from './schemas.js';
import { RETENTION_READ, RETENTION_WRITE } from './service.js';
import { retentionView } from './views.js';

const tags = ['projects'];

/** Who changed the windows comes from the credential: a body naming it is refused, not ignored. */
const ACTOR_FIELDS = ['updated_by', 'updated_at', 'updated_by_user_id', 'updated_by_api_key_id', 'actor', 'user_id', 'api_key_id'];

async function refuseActors(req: FastifyRequest) {
  const body = req.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const named = ACTOR_FIELDS.find((f) => Object.hasOwn(body, f));
    if (named) throw invalidRequest(`${named} is taken from the credential and cannot be sent`);
  }
}

export function telemetryRetentionRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.telemetryRetention;
  const path = '/projects/:projectId/retention';

  app.get(
    path,
    {
      config: { scope: RETENTION_READ },
      schema: {
        operationId: 'getTelemetryRetention',
        tags,
        summary: "a project's telemetry retention windows (only signals that have one)",
        description: 'A signal without a window is kept as long as the service keeps data at all; none is made up.',
        params: ProjectParams,
        response: { 200: RetentionView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const r = await svc.get(req.principal, req.params.projectId);
      return retentionView(r.projectId, r.windows);
    },
  );

  app.put(
    path,
    {
      // The change is audited by the service, in its own transaction (with the windows before and after).
      config: { scope: RETENTION_WRITE, audit: 'domain' },
      preValidation: refuseActors,
      schema: {
        operationId: 'putTelemetryRetention',
        tags,
        summary: "replace a project's telemetry retention windows",
        description:
          `\`retention_days\` per signal, a whole number from ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS} (0 and longer windows are 400); a signal not listed has no window and is kept. ` +
          'Telemetry older than a window leaves every read at once and is deleted by the hourly sweep (`retention.sweep`). A window only brings deletion forward: ' +
          'setting one where there was none, or a shorter one, deletes data and also needs the delete scope of that signal (metrics:delete, traces:delete, logs:delete). ' +
          'Lengthening a window never hides anything and brings back only what the sweep has not deleted yet. The change applies at once on this node and within a second on the others.',
        params: ProjectParams,
        body: PutRetentionBody,
        response: { 200: RetentionView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const r = await svc.put(req.principal, req.params.projectId, req.body.windows);
      return retentionView(r.projectId, r.windows);
    },
  );
}
