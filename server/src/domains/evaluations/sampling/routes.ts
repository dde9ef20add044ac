/**
 * The evaluation budget (docs/evaluations-sampling.md "Budget"): `GET, PUT /evaluation/budget`. The budget is
 * organization-wide and reads no project: a `project_id` parameter is 400. The read needs `evals:read`; the
 * write `evals:write` and an organization-level credential (a project-bound key is 403); the request-level
 * audit hook records every write.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { invalidRequest } from '../../../http/errors.js';
import { errors } from '../../../http/schemas.js';
import { refuseActors } from '../project.js';
import { BudgetBody, BudgetQuery, BudgetView, READ_ONLY_FIELDS } from './schemas.js';
import type { BudgetState } from './budget.js';

const tags = ['evaluations'];

/** The budget is the organization's: naming a project (once or more, empty or not) is refused. */
async function refuseProject(req: FastifyRequest) {
  const q = req.query as Record<string, unknown> | undefined;
  if (q && Object.hasOwn(q, 'project_id'))
    throw invalidRequest('the evaluation budget is organization-wide and reads no project: remove project_id');
}

async function refuseReadOnly(req: FastifyRequest) {
  await refuseProject(req);
  await refuseActors(req);
  const b = req.body;
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    const named = READ_ONLY_FIELDS.find((f) => Object.hasOwn(b, f));
    if (named) throw invalidRequest(`${named} is read-only (the server keeps it) and cannot be sent`);
  }
}

export function budgetView(s: BudgetState) {
  return {
    daily_limit_nano_usd: s.limits.dailyLimitNanoUsd,
    daily_evaluation_limit: s.limits.dailyEvaluationLimit,
    budget_set: s.budget !== undefined,
    day: s.day,
    spent_nano_usd: s.spend.spentNanoUsd,
    evaluations: s.spend.evaluations,
    remaining_nano_usd: Math.max(0, s.limits.dailyLimitNanoUsd - s.spend.spentNanoUsd),
    remaining_evaluations: s.limits.dailyEvaluationLimit === null ? null : Math.max(0, s.limits.dailyEvaluationLimit - s.spend.evaluations),
    resets_at: s.resetsAt,
    updated_at: s.budget?.updatedAt ?? null,
    updated_by: s.budget?.updatedBy ?? null,
    version: s.budget?.version ?? 0,
  };
}

export function evaluationBudgetRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.evaluationBudget;

  app.get(
    '/evaluation/budget',
    {
      config: { scope: 'evals:read' },
      preValidation: refuseProject,
      schema: {
        operationId: 'getEvaluationBudget',
        tags,
        summary: "the organization's daily evaluation budget and today's (UTC) spend against it",
        description:
          'Organization-wide; reads no project (a project_id parameter is 400). Never set, the budget is the default: ' +
          'daily_limit_nano_usd 0 (model-judge evaluations are refused) and no count cap (free evaluations run); budget_set says which.',
        querystring: BudgetQuery,
        response: { 200: BudgetView, ...errors(400, 401, 403) },
      },
    },
    async (req) => budgetView(await svc.state(req.principal.orgId)),
  );

  app.put(
    '/evaluation/budget',
    {
      config: { scope: 'evals:write' },
      preValidation: refuseReadOnly,
      schema: {
        operationId: 'setEvaluationBudget',
        tags,
        summary: "sets the organization's daily evaluation budget (replaces it)",
        description:
          'Needs evals:write and an organization-level credential (a project-bound key is 403). daily_limit_nano_usd caps the charged judge cost per UTC day; ' +
          'daily_evaluation_limit (absent or null: no cap) caps evaluations of every kind. Takes effect at once for today (spend already counted stays counted). ' +
          'Who set it comes from the credential; read-only fields are 400. Repeating the same PUT is safe (only version and updated_at move).',
        querystring: BudgetQuery,
        body: BudgetBody,
        response: { 200: BudgetView, ...errors(400, 401, 403) },
      },
    },
    async (req) => budgetView(await svc.put(req.principal, req.body)),
  );
}
