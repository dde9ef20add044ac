/**
 * Human judgments: `POST /agent-runs/{run_id}/annotations` (scores:write, a signed-in person only),
 * `GET /agent-runs/{run_id}/annotations` and `GET /evaluation/annotations` (scores:read), by project
 * (`?project_id=`; a project key naming another project is 404). docs/evaluations-human.md.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { errors } from '../../../http/schemas.js';
import { evaluationProject, refuseActors } from '../project.js';
import { AnnotationsPage, AnnotationsQuery, JudgmentBody, RecordedAnnotation, RunAnnotationsQuery, RunParams } from './schemas.js';
import { annotationView } from './views.js';
import { ProjectQuery } from '../../../http/schemas.js';

const tags = ['evaluations'];

export function annotationRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = evaluationProject(ctx.projects);
  const page = (p: { annotations: Parameters<typeof annotationView>[0][]; truncated: boolean; next_cursor: string | null }) => ({
    annotations: p.annotations.map(annotationView),
    truncated: p.truncated,
    next_cursor: p.next_cursor,
  });

  app.post(
    '/agent-runs/:run_id/annotations',
    {
      config: { scope: 'scores:write', foreignProject: 'not_found' },
      preValidation: refuseActors,
      schema: {
        operationId: 'recordAnnotation',
        tags,
        summary: 'record your human judgment of an agent run (replaces only your own judgment of the same metric)',
        description:
          'A signed-in person only (a browser session or a person\'s OAuth access token): an API key is 403. The author is the credential\'s person; ' +
          'sending author, author_id or any actor field is 400. metric_name is trimmed and lower-cased; at least one of numeric_value and label. ' +
          'Judging the same run and metric again replaces your judgment with a new one (new annotation_id) and never touches anyone else\'s. ' +
          'Judgments are never evidence for release gates. 404: no such run in the project.',
        params: RunParams,
        querystring: ProjectQuery,
        body: JudgmentBody,
        response: { 201: RecordedAnnotation, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const p = await project(req);
      const { annotation, replacedId } = await ctx.annotations.record(req.principal, p.orgId, p.id, req.params.run_id, req.body);
      reply.code(201);
      return { annotation: annotationView(annotation), replaced_annotation_id: replacedId };
    },
  );

  app.get(
    '/agent-runs/:run_id/annotations',
    {
      config: { scope: 'scores:read', foreignProject: 'not_found' },
      schema: {
        operationId: 'listRunAnnotations',
        tags,
        summary: 'every reviewer\'s judgments of one agent run',
        description: 'Oldest first; filter metric_name; paged (limit default 100, max 500). Needs no content scope. 404: no such run in the project.',
        params: RunParams,
        querystring: RunAnnotationsQuery,
        response: { 200: AnnotationsPage, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => page(await ctx.annotations.ofRun((await project(req)).id, req.params.run_id, req.query)),
  );

  app.get(
    '/evaluation/annotations',
    {
      config: { scope: 'scores:read', foreignProject: 'not_found' },
      schema: {
        operationId: 'listAnnotations',
        tags,
        summary: 'human judgments of the project, by run, metric and author',
        description:
          'subject_refs (run ids) repeated or comma-separated, at most 200 distinct (a longer list is 400, never shortened); metric_name; author_id; ' +
          'oldest first, paged (limit default 100, max 500) with truncated and next_cursor.',
        querystring: AnnotationsQuery,
        response: { 200: AnnotationsPage, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => page(await ctx.annotations.list((await project(req)).id, req.query)),
  );
}
