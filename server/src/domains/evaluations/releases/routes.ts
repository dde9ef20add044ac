/**
 * Release series and release gates (docs/evaluations-gates.md): `GET /evaluation/release-series`,
 * `GET|POST /evaluation/gates`, `GET /evaluation/gates/{gateId}`, `POST /evaluation/gates/{gateId}/evaluations`.
 * Every route takes `?project_id=` (a project key is pinned to its project; naming another is 404). Reads
 * need `evals:read`; creating and evaluating a gate need `evals:write` (an evaluation permanently records a decision).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { invalidRequest } from '../../../http/errors.js';
import { readLimit } from '../../../http/pagination.js';
import { errors, ProjectQuery } from '../../../http/schemas.js';
import { fingerprint, makeCursor, pageOf, readCursor } from '../../agent-runs/request-rules.js';
import { evaluationProject, refuseActors } from '../project.js';
import { DEFAULT_INTENT_KEY, GATE_PAGE } from './gates.js';
import * as S from './schemas.js';
import { decisionView, gateView, gateWithHistoryView, seriesView } from './views.js';

const tags = ['evaluations'];
const read = { scope: 'evals:read', foreignProject: 'not_found' } as const;
const write = { scope: 'evals:write', foreignProject: 'not_found' } as const;
/** Fields the server sets: sending one is refused, naming it. */
const SERVER_SET = ['created_at', 'project_id', 'metric_name', 'decision_id', 'decided_at', 'decided_by', 'outcome', 'reading'];

async function checkWrite(req: FastifyRequest) {
  await refuseActors(req);
  const b = req.body;
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    const named = SERVER_SET.find((f) => Object.hasOwn(b, f));
    if (named) throw invalidRequest(`${named} is set by the server and cannot be sent`);
  }
}

export function releaseGateRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = evaluationProject(ctx.projects);

  app.get(
    '/evaluation/release-series',
    {
      config: read,
      schema: {
        operationId: 'getReleaseSeries',
        tags,
        summary: 'one exact evaluator version\'s mean score per release, oldest release first',
        description:
          'Reads the stored results of the exact version on production runs and steps (on demand and sampled; scored, with an execution record, COMPLETED or PARTIAL). ' +
          'ordering_strategy SEMANTIC_VERSION when every release name is a semantic version (a leading v accepted), else FIRST_OBSERVED (first run time, then name). ' +
          'Runs that declared no release are the separate unreleased aggregate (unreleased_present). delta_mean is neutral, not a verdict. ' +
          'Pin the same evaluator version when comparing releases, so a changed judge is not mistaken for a changed agent.',
        querystring: S.SeriesQuery,
        response: { 200: S.SeriesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => seriesView(await ctx.releaseSeries.read((await project(req)).id, req.query, ctx.clock.now().getTime())),
  );

  app.get(
    '/evaluation/gates',
    {
      config: read,
      schema: {
        operationId: 'listReleaseGates',
        tags,
        summary: 'the release gates of a project, by gate id',
        description: `Filters release (exact) and evaluator_id. Default ${GATE_PAGE.default}, at most ${GATE_PAGE.max} a page; cursor paging.`,
        querystring: S.ListGatesQuery,
        response: { 200: S.ListGatesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const filter = { projectId, release: req.query.release, evaluatorId: req.query.evaluator_id };
      const limit = readLimit(req.query.limit, GATE_PAGE);
      const fp = fingerprint(['release-gates', filter]);
      const pos = readCursor(req.query.cursor, fp);
      const rows = await ctx.releaseGates.list(filter, { limit, after: pos?.id });
      const { items, next_cursor } = pageOf(rows, limit, (g) => makeCursor(fp, 0, g.gateId));
      return { gates: items.map(gateView), next_cursor };
    },
  );

  app.post(
    '/evaluation/gates',
    {
      config: write,
      preValidation: checkWrite,
      schema: {
        operationId: 'createReleaseGate',
        tags,
        summary: 'create a release gate bound to an exact evaluator version',
        description:
          '201 when created. The same gate_id with an identical definition answers the stored gate (200, created false); a different definition is 409. ' +
          'The evaluator version is checked now: missing is 404, version 0 (legacy) is 400. created_by comes from the credential.',
        querystring: ProjectQuery,
        body: S.CreateGateBody,
        response: { 200: S.CreateGateResponse, 201: S.CreateGateResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { gate, created } = await ctx.releaseGates.create(req.principal, await project(req), req.body);
      return reply.code(created ? 201 : 200).send({ ...gateView(gate), created });
    },
  );

  app.get(
    '/evaluation/gates/:gateId',
    {
      config: read,
      schema: {
        operationId: 'getReleaseGate',
        tags,
        summary: 'a release gate with its decision history, newest first',
        params: S.GatePath,
        querystring: ProjectQuery,
        response: { 200: S.GateWithHistory, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => gateWithHistoryView(await ctx.releaseGates.get((await project(req)).id, req.params.gateId)) as never,
  );

  app.post(
    '/evaluation/gates/:gateId/evaluations',
    {
      config: write,
      // No body at all is the empty body: the stable default intent.
      preValidation: async (req) => {
        if (req.body === undefined) req.body = {};
        await checkWrite(req);
      },
      schema: {
        operationId: 'evaluateReleaseGate',
        tags,
        summary: 'read the evidence now and record a decision (ADMIT or HOLD)',
        description:
          `201 with a new decision and a fresh evidence snapshot; the same idempotency_key answers the original decision (200, created false), concurrent requests included. ` +
          `An empty body (or none) is the stable default intent, key "${DEFAULT_INTENT_KEY}": it answers the gate's first default decision. ` +
          'NO_EVIDENCE (no results of the bound version) and INADMISSIBLE (only unusable ones: legacy, execution-less, FAILED, CANCELLED, ...) both hold the release.',
        params: S.GatePath,
        querystring: ProjectQuery,
        body: S.EvaluateGateBody,
        response: { 200: S.EvaluateGateResponse, 201: S.EvaluateGateResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { id } = await project(req);
      const { decision, created } = await ctx.releaseGates.evaluate(req.principal, id, req.params.gateId, req.body?.idempotency_key);
      return reply.code(created ? 201 : 200).send({ decision: decisionView(decision), created } as never);
    },
  );
}
