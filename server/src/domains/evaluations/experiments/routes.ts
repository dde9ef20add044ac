/**
 * Experiments (docs/evaluations-experiments.md): `GET|POST /evaluation/experiments`,
 * `GET /evaluation/experiments/{experimentId}`, `POST .../trials`, `POST .../run`, `GET .../comparison`.
 * Every route takes `?project_id=` (a project key is pinned to its project; naming another is 404, like a
 * missing experiment). Reads need `evals:read`; creating, adding trials and running need `evals:write`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { readLimit } from '../../../http/pagination.js';
import { errors } from '../../../http/schemas.js';
import { invalidRequest } from '../../../http/errors.js';
import { fingerprint, makeCursor, pageOf, readCursor } from '../../agent-runs/request-rules.js';
import { evaluationProject, refuseActors } from '../project.js';
import * as S from './schemas.js';
import { EXPERIMENT_PAGE, RUN_BOUND, RUN_TIME_BOUND_MS } from './service.js';
import { comparisonView, experimentDetailView, experimentView, trialView } from './views.js';

const tags = ['evaluations'];
const read = { scope: 'evals:read', foreignProject: 'not_found' } as const;
const write = { scope: 'evals:write', foreignProject: 'not_found' } as const;
/** Fields the server sets: sending one is refused, naming it. */
const SERVER_SET = ['created_by', 'created_at', 'project_id', 'trials', 'status', 'counts', 'items', 'created'];

/** Refuses actor and server-set fields, and a "latest" version, naming them (before validation). */
async function checkWrite(req: FastifyRequest) {
  await refuseActors(req);
  const b = req.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) return;
  const named = SERVER_SET.find((f) => Object.hasOwn(b, f));
  if (named) throw invalidRequest(`${named} is set by the server and cannot be sent`);
  const o = b as { dataset?: { version?: unknown }; evaluators?: unknown };
  if (o.dataset && typeof o.dataset === 'object' && o.dataset.version === 'latest')
    throw invalidRequest('dataset.version must name an exact sealed version: there is no "latest" alias');
  if (Array.isArray(o.evaluators) && o.evaluators.some((e) => e && typeof e === 'object' && (e as { version?: unknown }).version === 'latest'))
    throw invalidRequest('each evaluators[].version must name an exact integer version: there is no "latest" alias');
}

export function experimentRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = evaluationProject(ctx.projects);

  app.get(
    '/evaluation/experiments',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'listExperiments',
        tags,
        summary: 'the experiments of a project, by id',
        description: `Filter dataset_id. Default ${EXPERIMENT_PAGE.default}, at most ${EXPERIMENT_PAGE.max} a page; cursor paging.`,
        querystring: S.ListExperimentsQuery,
        response: { 200: S.ListExperimentsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const filter = { projectId, datasetId: req.query.dataset_id };
      const limit = readLimit(req.query.limit, EXPERIMENT_PAGE);
      const fp = fingerprint(['experiments', filter]);
      const pos = readCursor(req.query.cursor, fp);
      const rows = await ctx.experiments.list(filter, { limit, after: pos?.id });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, 0, r.experimentId));
      return { experiments: items.map(experimentView), next_cursor };
    },
  );

  app.post(
    '/evaluation/experiments',
    {
      config: write,
      preValidation: checkWrite,
      schema: {
        operationId: 'createExperiment',
        tags,
        summary: 'create an experiment over an exact dataset version with exact evaluator versions',
        description:
          'The dataset version and every evaluator version must exist (404), each evaluator must measure runs (400 naming why), 1 to 8 of them, no duplicates (400). ' +
          'Sending the identical experiment again answers it with created false (200); other fields under the same experiment_id are 409.',
        querystring: S.ProjectOnlyQuery,
        body: S.CreateExperimentBody,
        response: { 200: S.CreateExperimentResponse, 201: S.CreateExperimentResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { experiment, created } = await ctx.experiments.create(req.principal, await project(req), req.body);
      return reply.code(created ? 201 : 200).send({ ...experimentView(experiment), created });
    },
  );

  app.get(
    '/evaluation/experiments/:experimentId',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'getExperiment',
        tags,
        summary: 'an experiment with its trials, their status and counts',
        params: S.ExperimentPath,
        querystring: S.ProjectOnlyQuery,
        response: { 200: S.Experiment, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => experimentDetailView(await ctx.experiments.detail((await project(req)).id, req.params.experimentId)),
  );

  app.post(
    '/evaluation/experiments/:experimentId/trials',
    {
      config: write,
      preValidation: checkWrite,
      schema: {
        operationId: 'addExperimentTrial',
        tags,
        summary: 'add a trial (one arm) to an experiment',
        description:
          'Without runs the trial scores the frozen cases (a judge rubric asking for recorded content is then 400); with runs (item id -> run id) it scores those new runs and an item not mapped counts as missing. ' +
          'At most one TRIAL_ROLE_BASELINE (409) and 16 trials (409). The identical trial again answers it with created false (200); other fields under the same trial_id are 409.',
        params: S.ExperimentPath,
        querystring: S.ProjectOnlyQuery,
        body: S.AddTrialBody,
        response: { 200: S.TrialResponse, 201: S.TrialResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { trial, created } = await ctx.experiments.addTrial(req.principal, await project(req), req.params.experimentId, req.body);
      return reply.code(created ? 201 : 200).send(trialView(trial, created));
    },
  );

  app.post(
    '/evaluation/experiments/:experimentId/run',
    {
      config: write,
      preValidation: checkWrite,
      schema: {
        operationId: 'runExperiment',
        tags,
        summary: 'score what is not scored yet: every trial × item × evaluator, within a bound per call',
        description:
          `Synchronous: at most max_evaluations (default ${RUN_BOUND.default}) evaluations or about ${RUN_TIME_BOUND_MS / 1000} seconds per call; truncated and remaining say what is left, and the next call continues. ` +
          'Nothing is scored twice (a stored answer is skipped; a concurrent call gets already_evaluated or in_progress). The daily budget stops the call (stopped: budget_exhausted) and what was done is reported. ' +
          'An experiment without trials is 409. The body may be empty.',
        params: S.ExperimentPath,
        querystring: S.ProjectOnlyQuery,
        body: S.RunBody,
        response: { 200: S.RunResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => ctx.experiments.run(req.principal, await project(req), req.params.experimentId, req.body ?? {}),
  );

  app.get(
    '/evaluation/experiments/:experimentId/comparison',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'compareExperimentTrials',
        tags,
        summary: 'per metric: each trial\'s counts and mean, and each candidate minus the baseline (all scored and paired)',
        description:
          'Computed from stored results; evaluates nothing. Unmeasured, withheld, missing and pending items are counted, never averaged in as 0; a mean over nothing is absent, and so is a difference needing it. ' +
          'The differences are arithmetic (candidate − baseline), neutral: not a verdict.',
        params: S.ExperimentPath,
        querystring: S.ProjectOnlyQuery,
        response: { 200: S.ComparisonResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => comparisonView(await ctx.experiments.comparison((await project(req)).id, req.params.experimentId)),
  );
}
