/**
 * The model-call reads (`GET /llm/calls`, `GET /llm/usage`): every model call of the project, inside an agent
 * run or not, priced as run steps are. The project is selected like every telemetry read. Rules in calls-service.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { requestProject } from '../../http/project-scope.js';
import { errors } from '../../http/schemas.js';
import { ListLlmCallsQuery, ListLlmCallsResponse, LlmUsageQuery, LlmUsageResponse } from './calls-schemas.js';
import { CALL_LIMIT, MAX_USAGE_GROUPS } from './calls-service.js';

const tags = ['llm'];
const read = { scope: 'llm:read' };

const WINDOW =
  'The window is on the call\'s start, closed at both ends, as `GET /traces` reads it: `since` and `until` are RFC 3339 timestamps or durations before now; ' +
  'default the 24 hours ending at `until` (default now); with only `since`, from `since` to now. ' +
  '`model`, `provider` and `service_name` keep only exact matches. A model call is a span with a model operation ' +
  '(chat, text completion, content generation, embeddings), inside an agent run or not; a span stored twice is one call.';

export function llmCallRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = requestProject(ctx.projects);

  app.get(
    '/llm/calls',
    {
      config: read,
      schema: {
        operationId: 'listLlmCalls',
        tags,
        summary: "list the project's model calls, inside agent runs or not",
        description:
          `${WINDOW} Newest first (start, then span id); paged with \`limit\` (default ${CALL_LIMIT.default}, at most ${CALL_LIMIT.max}) and \`cursor\`, ` +
          'which continues only the query it was issued for. Each call is priced exactly as a model step of a run; no recorded content is returned.',
        querystring: ListLlmCallsQuery,
        response: { 200: ListLlmCallsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => ctx.llmCalls.listCalls((await project(req)).id, req.query),
  );

  app.get(
    '/llm/usage',
    {
      config: read,
      schema: {
        operationId: 'getLlmUsage',
        tags,
        summary: "the project's model calls, tokens and cost by provider and model",
        description:
          `${WINDOW} Groups by (provider, model), most calls first; at most ${MAX_USAGE_GROUPS} groups (\`truncated\` says when more were cut), ` +
          'and `totals` over all of them. A group whose calls could not all be priced has no `cost_nanos` but the reason.',
        querystring: LlmUsageQuery,
        response: { 200: LlmUsageResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => ctx.llmCalls.usage((await project(req)).id, req.query),
  );
}
