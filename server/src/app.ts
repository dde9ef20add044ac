/** buildApp(ctx) -> a Fastify instance with every route; no listen() here. */
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { AppContext } from './context.js';
import { registerAuth } from './http/auth.js';
import { registerErrorHandling } from './http/error-handler.js';
import { lenientQuery } from './http/query.js';
import { ErrorResponse } from './http/schemas.js';
import { validatorCompiler } from './http/validation.js';
import { apiKeyRoutes } from './domains/api-keys/routes.js';
import { auditRoutes } from './domains/audit/routes.js';
import { healthRoutes } from './domains/health/routes.js';
import { projectRoutes } from './domains/projects/routes.js';

export const API_PREFIX = '/api/v1';

export interface BuildOptions {
  /** pino options; false silences the request log (tests). */
  logger?: boolean | { level: string };
}

export async function buildApp(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? { level: ctx.config.logLevel },
    bodyLimit: ctx.config.bodyLimit,
    querystringParser: lenientQuery,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 1000 },
  });
  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandling(app);
  app.addSchema(ErrorResponse);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'svc platform API', version: '0.1.0', description: 'Observability and AI-agent governance service' },
      components: {
        securitySchemes: {
          svcApiKey: { type: 'apiKey', in: 'header', name: 'X-Svc-API-Key' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          authorizationApiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'ApiKey <API_KEY>' },
        },
      },
      security: [{ svcApiKey: [] }, { apiKey: [] }, { authorizationApiKey: [] }],
    },
  });
  registerAuth(app, ctx.apiKeys);

  healthRoutes(app, ctx);
  await app.register(
    async (api) => {
      api.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger());
      projectRoutes(api, ctx);
      apiKeyRoutes(api, ctx);
      auditRoutes(api, ctx);
    },
    { prefix: API_PREFIX },
  );
  return app;
}
