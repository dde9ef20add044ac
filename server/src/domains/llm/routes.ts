/**
 * The LLM model price table of a project (spec 1 resource family "AI execution", `/llm`):
 * `GET|PUT|DELETE /llm/pricing`. The project is selected like every telemetry read (Authentication
 * rule 3): a project-scoped key may omit `project_id`; an organization-level credential must name it.
 * Writes are recorded by the request-level audit hook.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import { requestProject } from '../../http/project-scope.js';
import { errors, NoContent, ProjectQuery } from '../../http/schemas.js';
import { DeleteLlmPriceQuery, ListLlmPricesQuery, ListLlmPricesResponse, LlmPriceEntry, PutLlmPriceBody } from './schemas.js';
import { priceView } from './service.js';

const tags = ['llm'];

/** Who set a price comes from the credential; a body that names an actor is refused, not ignored. */
const ACTOR_FIELDS = ['updated_by', 'updated_at', 'updated_by_user_id', 'updated_by_api_key_id', 'user_id', 'api_key_id', 'actor', 'created_by'];

export function llmRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.llmPricing;
  const project = requestProject(ctx.projects);

  app.get(
    '/llm/pricing',
    {
      config: { scope: 'llm:read' },
      schema: {
        operationId: 'listLlmPrices',
        tags,
        summary: "list the project's model prices",
        description:
          'Entries ordered by model, then provider (the any-provider entry first); `model` keeps only one model. ' +
          'Paged with `limit` (default 100, at most 200) and `cursor`.',
        querystring: ListLlmPricesQuery,
        response: { 200: ListLlmPricesResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const limit = readLimit(req.query.limit, { default: 100, max: 200 });
      const after = decodeCursor(req.query.cursor);
      if (after && typeof after.k !== 'string') throw invalidRequest('cursor is malformed or expired');
      const rows = await svc.list(projectId, {
        model: req.query.model,
        limit,
        after: after && { model: String(after.k), provider: after.id === '' ? null : after.id },
      });
      const { items, next_cursor } = page(rows, limit, (r) => ({ k: r.model, id: r.provider ?? '' }));
      return { prices: items.map(priceView), next_cursor };
    },
  );

  app.put(
    '/llm/pricing',
    {
      config: { scope: 'llm:write' },
      preValidation: async (req) => {
        const body = req.body;
        if (body && typeof body === 'object' && !Array.isArray(body)) {
          const named = ACTOR_FIELDS.find((f) => Object.hasOwn(body, f));
          if (named) throw invalidRequest(`${named} is taken from the credential and cannot be sent`);
        }
      },
      schema: {
        operationId: 'setLlmPrice',
        tags,
        summary: 'set the price of a model (insert or replace)',
        description:
          'Upserts the entry (project, model, provider); `provider` omitted or null is the any-provider entry. ' +
          'Answers 200 with the entry; an identical PUT changes nothing (not even `updated_at`) and answers the stored entry. ' +
          '`updated_by` comes from the credential. A project holds at most 10000 entries (409 beyond).',
        querystring: ProjectQuery,
        body: PutLlmPriceBody,
        response: { 200: LlmPriceEntry, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => priceView(await svc.put(req.principal, await project(req), req.body)),
  );

  app.delete(
    '/llm/pricing',
    {
      config: { scope: 'llm:write' },
      schema: {
        operationId: 'deleteLlmPrice',
        tags,
        summary: 'delete the price of a model',
        description:
          'Deletes exactly one entry: (model, provider), or the any-provider entry of the model when `provider` is omitted. ' +
          '204 when deleted; 404 when there is no such entry.',
        querystring: DeleteLlmPriceQuery,
        response: { 204: NoContent, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await svc.delete((await project(req)).id, req.query.model, req.query.provider);
      return reply.code(204).send();
    },
  );
}
