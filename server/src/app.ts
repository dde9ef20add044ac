/** buildApp(ctx) -> a Fastify instance with every route; no listen() here. */
import { refuseBadText } from './http/text.js';
import Fastify, { type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { AppContext } from './context.js';
import { API_PREFIX, registerAuth } from './http/auth.js';
import { clientErrorHandler } from './http/client-errors.js';
import { registerRequestAudit } from './http/audit-hook.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerSharedReads } from './http/shared-reads.js';
import { registerErrorHandling, sendError } from './http/error-handler.js';
import { ApiError } from './http/errors.js';
import { UiFiles } from './http/ui.js';
import { lenientQuery } from './http/query.js';
import { NextCursor } from './http/pagination.js';
import { ErrorResponse } from './http/schemas.js';
import { OTLP_SCHEMAS } from './ingest/otlp/openapi.js';
import { openapiOptions } from './http/openapi.js';
import { validatorCompiler } from './http/validation.js';
import { agentConnectionRoutes } from './domains/agent-connections/routes.js';
import { apiKeyRoutes } from './domains/api-keys/routes.js';
import { auditRoutes } from './domains/audit/routes.js';
import { healthRoutes } from './domains/health/routes.js';
import { invitationRoutes } from './domains/people/invitation-routes.js';
import { peopleRoutes } from './domains/people/routes.js';
import { projectRoutes } from './domains/projects/routes.js';
import { sessionRoutes } from './domains/sessions/routes.js';
import { metricsRoutes } from './domains/metrics/routes.js';
import { logsRoutes } from './domains/logs/routes.js';
import { tracesRoutes } from './domains/traces/routes.js';
import { forecastRoutes } from './domains/metrics/forecast-routes.js';
import { otlpRoutes } from './ingest/otlp/routes.js';
import { OAUTH_SCHEMAS } from './domains/oauth/openapi.js';
import { oauthRoutes } from './domains/oauth/routes.js';
import { consentRoutes } from './domains/oauth/consent-routes.js';
import { agentRunRoutes } from './domains/agent-runs/routes.js';
import { llmCallRoutes } from './domains/llm/calls-routes.js';
import { llmRoutes } from './domains/llm/routes.js';
import { quarantineRoutes } from './domains/quarantines/routes.js';
import { contentPolicyRoutes } from './domains/content-policy/routes.js';
import { telemetryRetentionRoutes } from './domains/telemetry-retention/routes.js';
import { contentErasureRoutes } from './domains/content-erasure/routes.js';
import { fleetRoutes } from './domains/fleet/routes.js';
import { assetRoutes } from './domains/assets/routes.js';
import { signalRoutes } from './domains/assets/signals-routes.js';
import { memoryRoutes } from './domains/memory/routes.js';
import { evaluatorRoutes } from './domains/evaluations/evaluators/routes.js';
import { evaluationResultRoutes } from './domains/evaluations/results/routes.js';
import { annotationRoutes } from './domains/evaluations/annotations/routes.js';
import { releaseGateRoutes } from './domains/evaluations/releases/routes.js';
import { calibrationRoutes } from './domains/evaluations/calibration/routes.js';
import { datasetRoutes } from './domains/evaluations/datasets/routes.js';
import { experimentRoutes } from './domains/evaluations/experiments/routes.js';
import { receiptRoutes } from './domains/receipts/routes.js';
import { authorityEdgeRoutes } from './domains/authority-edges/routes.js';
import { jwksRoutes, signingKeyRoutes } from './domains/signing/routes.js';
import { abomRoutes } from './domains/abom/routes.js';
import { deploymentRoutes } from './domains/deployments/routes.js';
import { chainProofRoutes } from './domains/chain-proofs/routes.js';
import { evaluationBudgetRoutes } from './domains/evaluations/sampling/routes.js';

export { API_PREFIX };

declare module 'fastify' {
  interface FastifyInstance {
    declaredRoutes: { method: string; url: string; config: { auth?: string; scope?: string; accepts?: string[]; foreignProject?: string }; takesBody: boolean }[];
  }
}

export interface BuildOptions {
  /** pino options; false silences the request log (tests). */
  logger?: boolean | { level: string };
}

/** The longest path parameter the router reads (ids, keys and names in paths are far shorter). */
const MAX_PATH_PARAM = 1000;

export async function buildApp(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? { level: ctx.config.logLevel },
    bodyLimit: ctx.config.bodyLimit,
    return503OnClosing: true,
    // The HTTP parser's own refusals (431, 400) answer in our error shape too.
    clientErrorHandler,
    forceCloseConnections: 'idle',
    // Errors raised before routing (a bad percent escape in the path) get the same error shape.
    frameworkErrors: (err, _req, reply) => {
      const message =
        err.code === 'FST_ERR_BAD_URL'
          ? 'malformed URL path (invalid percent escape)'
          : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? `a path segment is longer than ${MAX_PATH_PARAM} characters, more than any id or key this service takes`
            : 'the request could not be read';
      void sendError(reply, new ApiError(400, 'invalid_request', message));
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_PATH_PARAM, querystringParser: lenientQuery },
  });
  app.setValidatorCompiler(validatorCompiler);
  // Every declared route, so a test can prove the OpenAPI description covers them all.
  const declared: FastifyInstance['declaredRoutes'] = [];
  app.decorate('declaredRoutes', declared);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) if (method !== 'HEAD') declared.push({ method, url: r.url, config: { auth: r.config?.auth, scope: r.config?.scope, accepts: r.config?.accepts, foreignProject: r.config?.foreignProject }, takesBody: r.schema?.body !== undefined });
  });
  // The browser UI's pages and files, for the GETs no route takes (http/ui.ts).
  const ui = new UiFiles(ctx.config.uiDir);
  registerErrorHandling(app, (req, reply) => ui.serve(req, reply));
  // Text no store can keep as sent (NUL, unpaired surrogates) is refused before validation (http/text.ts);
  // OTLP bodies are bytes, read by their own decoders.
  app.addHook('preValidation', async (req) => {
    if (req.body !== null && typeof req.body === 'object') refuseBadText(req.body);
  });
  // The job runner's loop is started by main.ts; closing the app stops it (running jobs end or give their lease back).
  app.addHook('onClose', async () => ctx.jobs.stop());
  // Shared shapes, each a named component of the OpenAPI description (#/components/schemas/<$id>).
  for (const schema of [ErrorResponse, NextCursor, ...OTLP_SCHEMAS, ...OAUTH_SCHEMAS]) app.addSchema(schema);
  await app.register(swagger, openapiOptions(ctx.config));
  // Parses cookies in an onRequest hook registered before the auth hook, so the session cookie is readable there.
  await app.register(cookie);
  registerAuth(app, ctx);
  registerRequestAudit(app, ctx.audit, ctx.control);
  registerIdempotency(app, ctx.idempotency);
  // Identical concurrent reads of telemetry share one answer (routes that say sharedRead).
  registerSharedReads(app);

  healthRoutes(app, ctx);
  await otlpRoutes(app, ctx); // {ingest_url}/v1/metrics, at the root (not under /api/v1)
  await oauthRoutes(app, ctx); // /oauth/* and /.well-known/oauth-authorization-server, at the root
  jwksRoutes(app, ctx); // /.well-known/svc-signing-keys.json, at the root
  await app.register(
    async (api) => {
      // REST bodies are JSON only: Fastify's built-in text/plain parser would let a text body through to validation.
      api.removeContentTypeParser('text/plain');
      api.get(
        '/openapi.json',
        {
          // The document's own shape is documented only (config.openapi): the answer is not re-serialized through a schema.
          config: { auth: 'none', openapi: { responses: { 200: { type: 'object', additionalProperties: true, description: 'the OpenAPI 3.1 document' } } } },
          schema: { operationId: 'getOpenApiDocument', tags: ['meta'], summary: 'this OpenAPI 3.1 description, generated from the route schemas' },
        },
        async () => app.swagger(),
      );
      projectRoutes(api, ctx);
      telemetryRetentionRoutes(api, ctx);
      metricsRoutes(api, ctx);
      tracesRoutes(api, ctx);
      logsRoutes(api, ctx);
      apiKeyRoutes(api, ctx);
      auditRoutes(api, ctx);
      peopleRoutes(api, ctx);
      invitationRoutes(api, ctx);
      sessionRoutes(api, ctx);
      forecastRoutes(api, ctx);
      consentRoutes(api, ctx);
      agentConnectionRoutes(api, ctx);
      agentRunRoutes(api, ctx);
      llmRoutes(api, ctx);
      llmCallRoutes(api, ctx);
      quarantineRoutes(api, ctx);
      fleetRoutes(api, ctx);
      assetRoutes(api, ctx);
      signalRoutes(api, ctx);
      contentPolicyRoutes(api, ctx);
      contentErasureRoutes(api, ctx);
      memoryRoutes(api, ctx);
      receiptRoutes(api, ctx);
      authorityEdgeRoutes(api, ctx);
      signingKeyRoutes(api, ctx);
      abomRoutes(api, ctx);
      deploymentRoutes(api, ctx);
      chainProofRoutes(api, ctx);
      evaluatorRoutes(api, ctx);
      evaluationBudgetRoutes(api, ctx);
      evaluationResultRoutes(api, ctx);
      annotationRoutes(api, ctx);
      releaseGateRoutes(api, ctx);
      calibrationRoutes(api, ctx);
      datasetRoutes(api, ctx);
      experimentRoutes(api, ctx);
    },
    { prefix: API_PREFIX },
  );
  return app;
}
