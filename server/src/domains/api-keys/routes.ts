import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import { errors } from '../../http/schemas.js';
import { ApiKeyEntry, ApiKeyParams, CreateApiKeyBody, CreatedApiKey, ListApiKeysQuery, ListApiKeysResponse, UpdateApiKeyBody } from './schemas.js';
import { keyView } from './service.js';

const tags = ['api-keys'];
// Key changes write their own audit records (api_key_created/updated/revoked) in the same transaction.
const config = { scope: 'api_key:write', audit: 'domain' as const };

export function apiKeyRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.apiKeys;

  app.get(
    '/account/api-keys',
    { config, schema: { operationId: 'listApiKeys', summary: 'list the API keys of the organization', tags, querystring: ListApiKeysQuery, response: { 200: ListApiKeysResponse, ...errors(400, 401, 403) } } },
    async (req) => {
      const limit = readLimit(req.query.limit, { default: 100, max: 200 });
      const after = decodeCursor(req.query.cursor);
      const rows = await svc.list(req.principal, { limit, after: after && { createdAt: String(after.k), id: after.id } });
      const { items, next_cursor } = page(rows, limit, (k) => ({ k: k.createdAt, id: k.id }));
      const now = ctx.clock.now();
      return { api_keys: items.map((k) => keyView(k, now)), next_cursor };
    },
  );

  app.post(
    '/account/api-keys',
    { config, schema: { operationId: 'createApiKey', summary: 'create an API key (the secret is shown once)', tags, body: CreateApiKeyBody, response: { 201: CreatedApiKey, ...errors(400, 401, 403, 404) } } },
    async (req, reply) => reply.code(201).send(await svc.create(req.principal, req.body)),
  );

  app.get(
    '/account/api-keys/:id',
    { config, schema: { operationId: 'getApiKey', summary: 'get one API key (never its secret)', tags, params: ApiKeyParams, response: { 200: ApiKeyEntry, ...errors(401, 403, 404) } } },
    async (req) => svc.get(req.principal, req.params.id),
  );

  app.patch(
    '/account/api-keys/:id',
    { config, schema: { operationId: 'updateApiKey', summary: 'rename an API key or change its scopes', tags, params: ApiKeyParams, body: UpdateApiKeyBody, response: { 200: ApiKeyEntry, ...errors(400, 401, 403, 404, 409) } } },
    async (req) => svc.update(req.principal, req.params.id, req.body ?? {}),
  );

  app.post(
    '/account/api-keys/:id/revoke',
    { config, schema: { operationId: 'revokeApiKey', summary: 'revoke an API key at once', tags, params: ApiKeyParams, response: { 200: ApiKeyEntry, ...errors(401, 403, 404) } } },
    async (req) => svc.revoke(req.principal, req.params.id),
  );
}
