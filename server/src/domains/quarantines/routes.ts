/**
 * `/quarantines`: containment of an agent under the two-person rule. Thin: the rules are in service.ts.
 * Scopes: request `quarantine:request`; approve, reenforce, lift `quarantine:approve`; withdraw either
 * (own request or someone else's, checked by the service); reads any of `quarantine:request`,
 * `quarantine:approve`, `agents:read`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest, permissionDenied } from '../../http/errors.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import { requestProject, resolveProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import { closedFilter } from '../agent-runs/request-rules.js';
import { QUARANTINE_STATUSES, type QuarantineStatus } from './model.js';
import {
  ListQuarantinesQuery,
  ListQuarantinesResponse,
  QUARANTINE_LIMIT,
  QuarantineParams,
  QuarantineView,
  ReasonBody,
  ReenforceResponse,
  RequestQuarantineBody,
} from './schemas.js';
import { APPROVE, READ_SCOPES, REQUEST } from './service.js';
import type { QuarantineRecord } from './store.js';
import { quarantineView } from './views.js';

const tags = ['quarantines'];

/** Who acts comes from the credential: a body naming an actor is refused, not ignored. */
const ACTOR_FIELDS = [
  'requested_by',
  'requested_at',
  'approved_by',
  'approved_at',
  'approver',
  'approver_principal',
  'lifted_by',
  'lifted_at',
  'withdrawn_by',
  'withdrawn_at',
  'user_id',
  'requester',
  'requester_principal',
  'actor',
  'status',
];

async function refuseActors(req: FastifyRequest) {
  const body = req.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const named = ACTOR_FIELDS.find((f) => Object.hasOwn(body, f));
    if (named) throw invalidRequest(`${named} is taken from the credential and the containment's state, and cannot be sent`);
  }
}

/** Approve and reenforce take no body: nothing, or an empty object (a body naming an actor says so first). */
async function refuseBody(req: FastifyRequest) {
  await refuseActors(req);
  const body = req.body;
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0) throw invalidRequest('this request takes no body');
}

function requireAnyScope(req: FastifyRequest, scopes: readonly string[]) {
  if (!scopes.some((s) => req.principal.scopes.has(s))) throw permissionDenied(`this request needs one of the scopes ${scopes.join(', ')}`);
}

export function quarantineRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.quarantines;
  const project = requestProject(ctx.projects);
  const view = async (q: QuarantineRecord) => quarantineView(q, await svc.outcomes([q.id]));
  const one = { 200: QuarantineView, ...errors(400, 401, 403, 404) };

  app.post(
    '/quarantines',
    {
      config: { scope: REQUEST },
      preValidation: refuseActors,
      schema: {
        operationId: 'requestQuarantine',
        tags,
        summary: 'request the containment of an agent (pending until another person approves)',
        description:
          'Exactly one target: `asset_id`, `observation_key` or `api_key_id`. Touches no credential. One pending or active containment per agent ' +
          '(409 otherwise; an asset and its observation keys are one agent, an API key target is its own). `request_id` makes a retry idempotent: the same person gets the same containment (201, in its current state); ' +
          'another person gets 409, which reveals nothing of it.',
        querystring: ProjectQuery,
        body: RequestQuarantineBody,
        response: { 201: QuarantineView, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { record } = await svc.request(req.principal, await project(req), req.body);
      return reply.code(201).send(await view(record));
    },
  );

  app.get(
    '/quarantines',
    {
      schema: {
        operationId: 'listQuarantines',
        tags,
        summary: 'containments, newest first',
        description:
          '`status` repeatable or comma-separated (OR); `project_id` narrows an organization credential to one project (a project key sees its own). ' +
          `Paged with \`cursor\` and \`limit\` (default ${QUARANTINE_LIMIT.default}, at most ${QUARANTINE_LIMIT.max}). Needs quarantine:request, quarantine:approve or agents:read.`,
        querystring: ListQuarantinesQuery,
        response: { 200: ListQuarantinesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      requireAnyScope(req, READ_SCOPES);
      const statuses = closedFilter('status', req.query.status, QUARANTINE_STATUSES) as QuarantineStatus[] | undefined;
      const limit = readLimit(req.query.limit, QUARANTINE_LIMIT);
      const after = decodeCursor(req.query.cursor);
      if (after && typeof after.k !== 'string') throw invalidRequest('cursor is malformed or expired');
      const scoped = req.query.project_id !== undefined || req.principal.projectId !== null ? await resolveProject(req.principal, ctx.projects, req.query.project_id) : undefined;
      const rows = await svc.list(req.principal, scoped, { statuses, limit, after: after && { requestedAt: String(after.k), id: after.id } });
      const { items, next_cursor } = page(rows, limit, (q) => ({ k: q.requestedAt, id: q.id }));
      const outcomes = await svc.outcomes(items.map((q) => q.id));
      return { quarantines: items.map((q) => quarantineView(q, outcomes)), next_cursor };
    },
  );

  app.get(
    '/quarantines/:quarantineId',
    {
      schema: { operationId: 'getQuarantine', tags, summary: 'one containment', params: QuarantineParams, response: one },
    },
    async (req) => {
      requireAnyScope(req, READ_SCOPES);
      return view(await svc.get(req.principal, req.params.quarantineId));
    },
  );

  app.post(
    '/quarantines/:quarantineId/approve',
    {
      config: { scope: APPROVE },
      preValidation: refuseBody,
      schema: {
        operationId: 'approveQuarantine',
        tags,
        summary: 'approve a pending containment (another person than the requester): resolve its target to the exact keys and act on them',
        description:
          'pending -> active. People are compared, not keys: the requester with another key is refused (403). An `api_key_id` target naming no key ' +
          'of the organization reachable from the project is 404 and the containment stays pending. Writes receipt entries AUTHORIZED then ' +
          'QUARANTINED and an authority edge. Any other state is 400.',
        params: QuarantineParams,
        response: one,
      },
    },
    async (req) => view(await svc.approve(req.principal, req.params.quarantineId)),
  );

  app.post(
    '/quarantines/:quarantineId/reenforce',
    {
      config: { scope: APPROVE },
      preValidation: refuseBody,
      schema: {
        operationId: 'reenforceQuarantine',
        tags,
        summary: 'retry the credentials an active containment recorded as failed',
        description:
          'Active only (400 otherwise). Credentials left `unknown` are checked first (in place: verified; not in place: failed). Returns the containment and ' +
          '`retried`, the number of failed credentials retried (0 is success).',
        params: QuarantineParams,
        response: { 200: ReenforceResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { record, retried } = await svc.reenforce(req.principal, req.params.quarantineId);
      return { ...(await view(record)), retried };
    },
  );

  app.post(
    '/quarantines/:quarantineId/lift',
    {
      config: { scope: APPROVE },
      preValidation: refuseActors,
      schema: {
        operationId: 'liftQuarantine',
        tags,
        summary: 'lift an active containment',
        description:
          'active -> lifted; `reason` required. Restores only what a freeze held: revoked keys stay revoked, and a key another active containment ' +
          'still holds stays frozen until the last lift. Of concurrent lifts of one containment, one succeeds and the others are 400.',
        params: QuarantineParams,
        body: ReasonBody,
        response: one,
      },
    },
    async (req) => view(await svc.lift(req.principal, req.params.quarantineId, req.body.reason)),
  );

  app.post(
    '/quarantines/:quarantineId/withdraw',
    {
      preValidation: refuseActors,
      schema: {
        operationId: 'withdrawQuarantine',
        tags,
        summary: 'withdraw a pending containment',
        description:
          'pending -> withdrawn; `reason` required; reaches no credential. Your own request needs quarantine:request, someone else\'s quarantine:approve. ' +
          'The request id stays taken: sending it again returns the withdrawn containment. Any other state is 400.',
        params: QuarantineParams,
        body: ReasonBody,
        response: one,
      },
    },
    async (req) => {
      requireAnyScope(req, [REQUEST, APPROVE]);
      return view(await svc.withdraw(req.principal, req.params.quarantineId, req.body.reason));
    },
  );
}
