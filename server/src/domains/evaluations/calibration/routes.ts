/**
 * Calibration records (docs/evaluations-calibration.md): `POST
 * /evaluation/evaluators/{evaluatorId}/versions/{version}/calibrations` (evals:write) and `GET
 * /evaluation/evaluators/{evaluatorId}/calibrations` (evals:read), by project (`?project_id=`; a project
 * key naming another project is 404, the same answer as a missing evaluator).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { readLimit } from '../../../http/pagination.js';
import { errors } from '../../../http/schemas.js';
import { closedFilter, fingerprint, makeCursor, pageOf, readCursor } from '../../agent-runs/request-rules.js';
import { evaluationProject, refuseActors } from '../project.js';
import { CALIBRATION_STATES, MAX_CALIBRATION_SUBJECTS } from './model.js';
import * as S from './schemas.js';
import { CALIBRATION_PAGE } from './service.js';
import { calibrationView } from './views.js';

const tags = ['evaluations'];

export function calibrationRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = evaluationProject(ctx.projects);

  app.post(
    '/evaluation/evaluators/:evaluatorId/versions/:version/calibrations',
    {
      config: { scope: 'evals:write', foreignProject: 'not_found' },
      preValidation: refuseActors,
      schema: {
        operationId: 'createCalibration',
        tags,
        summary: 'measure how far a model judge (one exact evaluator version) agrees with people\'s judgments of some runs',
        description:
          `subject_refs: 1 to ${MAX_CALIBRATION_SUBJECTS} distinct run ids (more is refused, not shortened). min_labels is required; 0 is refused. ` +
          'Each person\'s judgment of a named run (same metric as the evaluator version) is paired with the judge\'s result of that exact version for the run. ' +
          'Numeric ratings give Lin\'s concordance correlation coefficient (LINS_CCC, population form); labels give Cohen\'s kappa (COHENS_KAPPA) with agreement_rate beside it. ' +
          'States: CALIBRATED (the only state with agreement), UNCALIBRATED (no comparable judgment), INSUFFICIENT_LABELS (fewer pairs than min_labels), ' +
          'UNDEFINED_STATISTIC (each side one single value throughout), NOT_APPLICABLE (not EVALUATOR_KIND_LLM_JUDGE). ' +
          '201 with a new record; 200 with created false when the same inputs were calibrated before. 404: no such evaluator version.',
        params: S.VersionPath,
        querystring: S.ProjectOnlyQuery,
        body: S.CreateCalibrationBody,
        response: { 200: S.CreateCalibrationResponse, 201: S.CreateCalibrationResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const p = await project(req);
      const { record, created } = await ctx.calibrations.create(req.principal, p, req.params.evaluatorId, req.params.version, req.body);
      return reply.code(created ? 201 : 200).send({ ...calibrationView(record), created });
    },
  );

  app.get(
    '/evaluation/evaluators/:evaluatorId/calibrations',
    {
      config: { scope: 'evals:read', foreignProject: 'not_found' },
      preValidation: refuseActors,
      schema: {
        operationId: 'listCalibrations',
        tags,
        summary: 'the calibration records of an evaluator, newest first',
        description: `Filters version (exact) and state (repeated or comma-separated; an unknown value is 400). Default ${CALIBRATION_PAGE.default}, at most ${CALIBRATION_PAGE.max} a page; cursor paging. 404: no such evaluator.`,
        params: S.EvaluatorPath,
        querystring: S.ListCalibrationsQuery,
        response: { 200: S.ListCalibrationsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const states = closedFilter('state', req.query.state, CALIBRATION_STATES);
      const filter = { projectId, evaluatorId: req.params.evaluatorId, evaluatorVersion: req.query.version, states };
      const limit = readLimit(req.query.limit, CALIBRATION_PAGE);
      const fp = fingerprint(['calibrations', filter]);
      const pos = readCursor(req.query.cursor, fp);
      const after = pos === undefined ? undefined : { createdAt: String(pos.k), id: pos.id };
      const rows = await ctx.calibrations.list(filter, { limit: limit + 1, after });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.createdAt, r.id));
      return { calibrations: items.map(calibrationView), next_cursor };
    },
  );
}
