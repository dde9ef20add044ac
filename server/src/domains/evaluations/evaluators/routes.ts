/**
 * Evaluators and sampling rules (docs/evaluations.md): `GET|POST /evaluation/evaluators`,
 * `GET /evaluation/evaluators/{evaluatorId}`, `POST .../versions`, `GET .../versions/{version}`,
 * `GET|PUT /evaluation/sampling-rules`, `DELETE /evaluation/sampling-rules/{ruleId}`. Every route takes
 * `?project_id=` (a project key is pinned to its project; naming another is 404). Reads need
 * `evals:read`, writes `evals:write`. There is no update or patch of an evaluator version.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { readLimit } from '../../../http/pagination.js';
import { errors, NoContent } from '../../../http/schemas.js';
import { invalidRequest } from '../../../http/errors.js';
import { closedFilter, fingerprint, makeCursor, pageOf, readCursor } from '../../agent-runs/request-rules.js';
import { EVALUATOR_KINDS } from '../model.js';
import { evaluationProject, refuseActors } from '../project.js';
import { refuse } from './config-read.js';
import { RULE_PAGE } from './sampling-rules.js';
import * as S from './schemas.js';
import { EVALUATOR_PAGE, checkEvaluatorId, parseVersionParam } from './service.js';
import { evaluatorSummaryView, evaluatorView, ruleView, versionView } from './views.js';

const tags = ['evaluations'];
// A project key naming another project is 404, the same answer as a missing evaluator.
const read = { scope: 'evals:read', foreignProject: 'not_found' } as const;
const write = { scope: 'evals:write', foreignProject: 'not_found' } as const;
/** Fields the server sets: sending one is refused, naming it. */
const SERVER_SET = ['created_by', 'created_at', 'updated_by', 'updated_at', 'version', 'latest_version', 'project_id'];

/** Refuses actor and server-set fields, and a `config_json` that is not a string (with its reason). */
async function checkWrite(req: FastifyRequest) {
  await refuseActors(req);
  const b = req.body;
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    const named = SERVER_SET.find((f) => Object.hasOwn(b, f));
    if (named) throw invalidRequest(`${named} is set by the server (who acts comes from the credential) and cannot be sent`);
    const cfg = (b as { config_json?: unknown }).config_json;
    if (cfg !== undefined && typeof cfg !== 'string')
      throw refuse('config_json_not_a_string', 'config_json', 'config_json is a string holding JSON (serialize the configuration), not a JSON value');
    const ref = (b as { evaluator?: { version?: unknown } }).evaluator;
    if (ref && typeof ref === 'object' && ref.version === 'latest') throw invalidRequest('evaluator.version must name an exact integer version: there is no "latest" alias');
  }
}

export function evaluatorRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.evaluators;
  const rules = ctx.samplingRules;
  const project = evaluationProject(ctx.projects);

  app.get(
    '/evaluation/evaluators',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'listEvaluators',
        tags,
        summary: 'the evaluators of a project with their latest versions, by id',
        description: `Filter kind (repeated or comma-separated; an unknown value is 400). Default ${EVALUATOR_PAGE.default}, at most ${EVALUATOR_PAGE.max} a page; cursor paging.`,
        querystring: S.ListEvaluatorsQuery,
        response: { 200: S.ListEvaluatorsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const filter = { projectId, kinds: closedFilter('kind', req.query.kind, EVALUATOR_KINDS) };
      const limit = readLimit(req.query.limit, EVALUATOR_PAGE);
      const fp = fingerprint(['evaluators', filter]);
      const pos = readCursor(req.query.cursor, fp);
      const rows = await svc.list(filter, { limit, after: pos?.id });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, 0, r.head.evaluatorId));
      return { evaluators: items.map(evaluatorSummaryView), next_cursor };
    },
  );

  app.post(
    '/evaluation/evaluators',
    {
      config: write,
      preValidation: checkWrite,
      schema: {
        operationId: 'createEvaluator',
        tags,
        summary: 'create an evaluator with its version 1',
        description:
          'config_json is a string holding the JSON configuration of the kind; an invalid one is 400 naming its reason (details.reason, details.path). ' +
          'An existing evaluator_id is 409 (append a version instead). created_by comes from the credential.',
        querystring: S.ProjectOnlyQuery,
        body: S.CreateEvaluatorBody,
        response: { 201: S.Evaluator, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.code(201).send(evaluatorView(await svc.create(req.principal, await project(req), req.body))),
  );

  app.get(
    '/evaluation/evaluators/:evaluatorId',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'getEvaluator',
        tags,
        summary: 'an evaluator: its latest version and every version number',
        params: S.EvaluatorPath,
        querystring: S.ProjectOnlyQuery,
        response: { 200: S.Evaluator, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => evaluatorView(await svc.get((await project(req)).id, req.params.evaluatorId)),
  );

  app.post(
    '/evaluation/evaluators/:evaluatorId/versions',
    {
      config: write,
      preValidation: checkWrite,
      schema: {
        operationId: 'appendEvaluatorVersion',
        tags,
        summary: 'append a version to an evaluator (versions never change)',
        description:
          '201 with version n+1; concurrent appends take distinct numbers. display_name and metric_name may change (they default to the latest version\'s); ' +
          'the kind may not (409). An append identical to the latest version writes nothing and answers it with created false (200).',
        params: S.EvaluatorPath,
        querystring: S.ProjectOnlyQuery,
        body: S.AppendVersionBody,
        response: { 200: S.AppendVersionResponse, 201: S.AppendVersionResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const p = await project(req);
      const { record, created } = await svc.appendVersion(req.principal, p, req.params.evaluatorId, req.body);
      return reply.code(created ? 201 : 200).send({ ...versionView(record), created });
    },
  );

  app.get(
    '/evaluation/evaluators/:evaluatorId/versions/:version',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'getEvaluatorVersion',
        tags,
        summary: 'one exact version of an evaluator',
        description: 'version is an exact integer of at least 1: "latest", 0, 1.0, -1 are 400; a version the evaluator does not have is 404.',
        params: S.VersionPath,
        querystring: S.ProjectOnlyQuery,
        response: { 200: S.EvaluatorVersion, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id } = await project(req);
      checkEvaluatorId(req.params.evaluatorId, 'evaluatorId');
      return versionView(await svc.getVersion(id, req.params.evaluatorId, parseVersionParam(req.params.version)));
    },
  );

  app.get(
    '/evaluation/sampling-rules',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'listSamplingRules',
        tags,
        summary: 'the sampling rules of a project, by rule id',
        description: `Filters evaluator_id, enabled. Default ${RULE_PAGE.default}, at most ${RULE_PAGE.max} a page; cursor paging.`,
        querystring: S.ListRulesQuery,
        response: { 200: S.ListRulesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const filter = { projectId, evaluatorId: req.query.evaluator_id, enabled: req.query.enabled };
      const limit = readLimit(req.query.limit, RULE_PAGE);
      const fp = fingerprint(['sampling-rules', filter]);
      const pos = readCursor(req.query.cursor, fp);
      const rows = await rules.list(filter, { limit, after: pos?.id });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, 0, r.ruleId));
      return { sampling_rules: items.map(ruleView), next_cursor };
    },
  );

  app.put(
    '/evaluation/sampling-rules',
    {
      config: write,
      preValidation: checkWrite,
      schema: {
        operationId: 'putSamplingRule',
        tags,
        summary: 'create or replace a sampling rule (upsert by rule_id)',
        description:
          'The rule cites an exact existing evaluator version (404 when missing). Only SUBJECT_KIND_AGENT_RUN can be sampled, and an evaluator that scores only sessions cannot be. ' +
          'A zero rate, enabled false, or per_tick_limit 0 disables the rule. 201 when created, 200 when replaced; an identical PUT changes nothing.',
        querystring: S.ProjectOnlyQuery,
        body: S.RuleBody,
        response: { 200: S.PutRuleResponse, 201: S.PutRuleResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { rule, created } = await rules.put(req.principal, await project(req), req.body);
      return reply.code(created ? 201 : 200).send({ ...ruleView(rule), created });
    },
  );

  app.delete(
    '/evaluation/sampling-rules/:ruleId',
    {
      config: write,
      preValidation: refuseActors,
      schema: {
        operationId: 'deleteSamplingRule',
        tags,
        summary: 'delete a sampling rule',
        description: '204; a rule the project does not have is 404. Results already produced by the rule stay.',
        params: S.RulePath,
        querystring: S.ProjectOnlyQuery,
        response: { 204: NoContent, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await rules.delete((await project(req)).id, req.params.ruleId);
      return reply.code(204).send();
    },
  );
}
