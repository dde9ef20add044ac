/**
 * `POST /evaluation/evaluate` (evals:write), `GET /evaluation/results` and `GET
 * /evaluation/unscored-subjects` (evals:read), by project (`?project_id=`; a project key naming another
 * project is 404). docs/evaluations.md.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { errors } from '../../../http/schemas.js';
import { evaluationProject, refuseActors } from '../project.js';
import { SUBJECT_KINDS } from '../model.js';
import { EvaluateBody, EvaluateResponse, ResultsQuery, ResultsResponse, UnscoredQuery, UnscoredResponse } from './schemas.js';
import { ProjectQuery } from '../../../http/schemas.js';

const tags = ['evaluations'];

export function evaluationResultRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = evaluationProject(ctx.projects);

  app.post(
    '/evaluation/evaluate',
    {
      config: { scope: 'evals:write', foreignProject: 'not_found' },
      preValidation: refuseActors,
      schema: {
        operationId: 'evaluateSubject',
        tags,
        summary: 'evaluate one subject now with an exact evaluator version (synchronous; allow six minutes)',
        description:
          `Subject kinds: ${SUBJECT_KINDS.slice(0, 3).join(', ')}; SUBJECT_KIND_AGENT_TURN and SUBJECT_KIND_DATASET_ITEM are 501. ` +
          'A stored answer for the same subject and evaluator version is returned with already_evaluated: true (no re-run, no new spend). ' +
          '400: a malformed subject_ref, a family of fields this subject does not answer, or nothing measurable (recorded as unmeasured, never scored 0). ' +
          '403 content_withheld: the content policy withholds content the rubric asked for (recorded as withheld). 404: no such run, step, session or evaluator version. ' +
          '409: the same evaluation is in progress. 429: the organization\'s daily evaluation budget is spent. 504: the subject could not be read in its own budget or the evaluation ran past five minutes; nothing is stored.',
        querystring: ProjectQuery,
        body: EvaluateBody,
        response: { 200: EvaluateResponse, ...errors(400, 401, 403, 404, 409, 429, 501, 503, 504) },
      },
    },
    async (req) => ctx.evaluations.evaluate(req.principal, await project(req), req.body),
  );

  app.get(
    '/evaluation/results',
    {
      config: { scope: 'evals:read', foreignProject: 'not_found' },
      schema: {
        operationId: 'listEvaluationResults',
        tags,
        summary: 'evaluation results with their provenance (history: one result per evaluator version per subject)',
        description:
          'Filters metric_name, evaluator_id, subject_ref and subject_refs (one set, at most 200 subjects), mode (omitted: every mode), start and end (on occurred_at). ' +
          'At most one subject: limit is the page size (default 100, max 500) with next_cursor. Several subjects: limit bounds each subject\'s share (default and max 20) and ' +
          'truncated_subject_refs names the subjects whose share was cut. For a current picture keep the highest provenance.evaluator.version per (evaluator_id, metric_name).',
        querystring: ResultsQuery,
        response: { 200: ResultsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => ctx.evaluations.results(req.principal, (await project(req)).id, req.query),
  );

  app.get(
    '/evaluation/unscored-subjects',
    {
      config: { scope: 'evals:read', foreignProject: 'not_found' },
      schema: {
        operationId: 'listUnscoredSubjects',
        tags,
        summary: 'subjects an evaluator could not score: unmeasured (evaluated again later) or withheld by the content policy',
        description: 'Newest attempt first; filters evaluator_id, subject_ref/subject_refs, outcome. A later score removes the subject from this list.',
        querystring: UnscoredQuery,
        response: { 200: UnscoredResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => ctx.evaluations.unscored((await project(req)).id, req.query),
  );
}
