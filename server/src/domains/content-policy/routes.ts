/**
 * Content policies (docs/content-policy.md): `/content-policies` and `/projects/{projectId}/content-policy`
 * with its retention windows and refusal audit. Thin: the rules are in service.ts. Scopes
 * `governance:read` and `governance:write`. A project-scoped credential is pinned to its own project on
 * every route here (another project's id is 404, as a missing one) and the list narrows to it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { errors } from '../../http/schemas.js';
import { checkOrder, parseTimeBound } from '../../http/time.js';
import { fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import {
  ListPoliciesQuery,
  ListPoliciesResponse,
  POLICY_LIMIT,
  PolicyView,
  ProjectParams,
  PutPolicyBody,
  PutRetentionBody,
  REFUSAL_LIMIT,
  RefusalsQuery,
  RefusalsResponse,
  RetentionView,
} from './schemas.js';
import { GOVERNANCE_READ, GOVERNANCE_WRITE } from './service.js';
import { refusalKey } from './store.js';
import { policyView, refusalView, retentionView } from './views.js';

const tags = ['content-policy'];

/** Who changed a policy comes from the credential: a body naming it is refused, not ignored. */
const ACTOR_FIELDS = ['updated_by', 'updated_at', 'updated_by_user_id', 'updated_by_api_key_id', 'actor', 'user_id', 'api_key_id'];

async function refuseActors(req: FastifyRequest) {
  const body = req.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const named = ACTOR_FIELDS.find((f) => Object.hasOwn(body, f));
    if (named) throw invalidRequest(`${named} is taken from the credential and cannot be sent`);
  }
}

/** A time bound of the refusal audit as the minute it falls in. */
function minuteOf(field: string, value: string | undefined, nowMs: number): { us?: number; minute?: string } {
  if (value === undefined) return {};
  const us = parseTimeBound(field, value, nowMs).us;
  const ms = Math.floor(us / 1000);
  return { us, minute: new Date(ms - (ms % 60_000)).toISOString() };
}

export function contentPolicyRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.contentPolicy;
  base.addHook('onClose', async () => svc.stop());
  const path = '/projects/:projectId/content-policy';

  app.get(
    '/content-policies',
    {
      config: { scope: GOVERNANCE_READ },
      schema: {
        operationId: 'listContentPolicies',
        tags,
        summary: 'the content policy of every project, newest-changed first',
        description:
          'One entry per live project of the organization (a project-scoped credential sees its own only); a project without a policy is listed as the fully denied grid (version 0) after those with one. ' +
          `Paged with \`cursor\` and \`limit\` (default ${POLICY_LIMIT.default}, at most ${POLICY_LIMIT.max}); follow \`next_cursor\` until it is null.`,
        querystring: ListPoliciesQuery,
        response: { 200: ListPoliciesResponse, ...errors(400, 401, 403) },
      },
    },
    async (req) => {
      const limit = readLimit(req.query.limit, POLICY_LIMIT);
      const fp = fingerprint(['content-policies', req.principal.projectId]);
      const after = readCursor(req.query.cursor, fp);
      if (after && typeof after.k !== 'string') throw invalidRequest('cursor is malformed or expired');
      const rows = await svc.list(req.principal, { limit: limit + 1, after: after && { updatedAt: after.k as string, projectId: after.id } });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.policy?.updatedAt ?? '', r.projectId));
      return { content_policies: items.map((r) => policyView(r.projectId, r.policy)), next_cursor };
    },
  );

  app.get(
    path,
    {
      config: { scope: GOVERNANCE_READ },
      schema: {
        operationId: 'getContentPolicy',
        tags,
        summary: "a project's content policy: every cell, denied ones included",
        description: 'A project without a policy is answered as the fully denied grid (version 0, no updated_by), not 404.',
        params: ProjectParams,
        response: { 200: PolicyView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const r = await svc.get(req.principal, req.params.projectId);
      return policyView(r.projectId, r.policy);
    },
  );

  app.put(
    path,
    {
      config: { scope: GOVERNANCE_WRITE },
      preValidation: refuseActors,
      schema: {
        operationId: 'putContentPolicy',
        tags,
        summary: "replace a project's content policy grid",
        description:
          'An omitted cell is deny; an unknown class, sink or decision is 400, so is a cell listed twice. `expected_version` that does not match is 409; omitting it writes unconditionally. ' +
          '`version` increases on every write; `updated_by` is the credential. The change applies everywhere within 30 seconds (at once in the process that wrote it).',
        params: ProjectParams,
        body: PutPolicyBody,
        response: { 200: PolicyView, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const p = await svc.put(req.principal, req.params.projectId, req.body);
      return policyView(p.projectId, p);
    },
  );

  app.get(
    `${path}/retention`,
    {
      config: { scope: GOVERNANCE_READ },
      schema: {
        operationId: 'getContentRetention',
        tags,
        summary: "a project's retention windows (only classes that have one)",
        params: ProjectParams,
        response: { 200: RetentionView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const r = await svc.retention(req.principal, req.params.projectId);
      return retentionView(r.projectId, r.windows);
    },
  );

  app.put(
    `${path}/retention`,
    {
      config: { scope: GOVERNANCE_WRITE },
      preValidation: refuseActors,
      schema: {
        operationId: 'putContentRetention',
        tags,
        summary: "replace a project's retention windows",
        description:
          '`retention_days` per class, a whole number from 1 to 365 (0 and longer windows are 400); a class not listed has no window. A window only brings deletion forward.',
        params: ProjectParams,
        body: PutRetentionBody,
        response: { 200: RetentionView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const r = await svc.putRetention(req.principal, req.params.projectId, req.body.windows);
      return retentionView(r.projectId, r.windows);
    },
  );

  app.get(
    `${path}/refusals`,
    {
      config: { scope: GOVERNANCE_READ },
      schema: {
        operationId: 'listContentPolicyRefusals',
        tags,
        summary: 'the refusal audit: values the policy withheld, counted per minute, class, boundary and decider',
        description:
          'Newest minute first. Filters `content_class`, `boundary`, `from`/`to` (closed, by minute). A refusal for want of the agents:content:read scope is not a policy refusal and is not counted. ' +
          `Paged with \`cursor\` and \`limit\` (default ${REFUSAL_LIMIT.default}, at most ${REFUSAL_LIMIT.max}).`,
        params: ProjectParams,
        querystring: RefusalsQuery,
        response: { 200: RefusalsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const q = req.query;
      const limit = readLimit(q.limit, REFUSAL_LIMIT);
      const nowMs = ctx.clock.now().getTime();
      const from = minuteOf('from', q.from, nowMs);
      const to = minuteOf('to', q.to, nowMs);
      checkOrder('from', 'to', from.us, to.us);
      const fp = fingerprint(['refusals', req.params.projectId, q.content_class ?? null, q.boundary ?? null, from.minute ?? null, to.minute ?? null]);
      const after = readCursor(q.cursor, fp);
      if (after && typeof after.k !== 'string') throw invalidRequest('cursor is malformed or expired');
      const rows = await svc.refusals(req.principal, req.params.projectId, {
        contentClass: q.content_class,
        boundary: q.boundary,
        from: from.minute,
        to: to.minute,
        after: after && { minute: after.k as string, key: after.id },
        limit: limit + 1,
      });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.minute, refusalKey(r)));
      return { refusals: items.map(refusalView), next_cursor };
    },
  );
}
