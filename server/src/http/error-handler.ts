/** Every non-2xx answer is `{error, message, details?}`; nothing internal (stack, SQL, library text) leaks. */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { ApiError, JSON_ONLY, unsupportedMediaType, type ErrorBody } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body media types the route accepts (named by its 415); JSON when not set. */
    accepts?: string[];
  }
}

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface AjvLikeError {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

function validationMessage(context: string | undefined, errors: AjvLikeError[]): string {
  const e = errors[0] ?? {};
  const where = `${context ?? 'request'}${(e.instancePath ?? '').replace(/\//g, '.')}`;
  if (e.keyword === 'additionalProperties') return `${where} has an unknown field "${String(e.params?.additionalProperty)}"`;
  if (e.keyword === 'enum') return `${where} must be one of: ${(e.params?.allowedValues as unknown[]).join(', ')}`;
  // A union of literals fails on each branch: the allowed values are the consts reported for the same place.
  if (e.keyword === 'const') {
    const allowed = errors.filter((x) => x.keyword === 'const' && x.instancePath === e.instancePath).map((x) => String(x.params?.allowedValue));
    return `${where} must be ${allowed.length > 1 ? 'one of: ' : ''}${[...new Set(allowed)].join(', ')}`;
  }
  if (e.keyword === 'required') return `${where} is missing required field "${String(e.params?.missingProperty)}"`;
  if (e.keyword === 'format') return `${where} must be a valid ${String(e.params?.format)}`;
  return `${where} ${e.message ?? 'is invalid'}`;
}

/** Maps framework errors to the spec's codes. */
function toApiError(err: FastifyError, req: FastifyRequest): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err.validation) return new ApiError(400, 'invalid_request', validationMessage(err.validationContext, err.validation as AjvLikeError[]));
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        413,
        'payload_too_large',
        `request body is larger than the limit of ${req.routeOptions.bodyLimit ?? 'the server'} bytes (${
          req.routeOptions.config?.telemetryWrite ? 'SVC_OTLP_BODY_LIMIT_BYTES sets it for the OTLP routes' : 'SVC_BODY_LIMIT_BYTES sets it for the REST API'
        })`,
        { limit_bytes: req.routeOptions.bodyLimit },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType(req.routeOptions.config?.accepts ?? JSON_ONLY);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_request', 'request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'invalid_request', 'request body length does not match Content-Length');
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    return new ApiError(400, 'invalid_request', 'request body is not valid JSON');
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return new ApiError(status, 'invalid_request', 'the request could not be read');
  return undefined;
}

export function sendError(reply: FastifyReply, e: ApiError) {
  const body: ErrorBody = { error: e.code, message: e.message };
  if (e.details) body.details = e.details;
  if (e.headers) reply.headers(e.headers);
  return reply.code(e.status).type('application/json; charset=utf-8').send(body);
}

/** `fallback` answers what no route takes before the 404 (the UI's pages, http/ui.ts); it returns false to pass. */
export function registerErrorHandling(app: FastifyInstance, fallback: (req: FastifyRequest, reply: FastifyReply) => boolean = () => false) {
  // A second router that knows every declared path, to tell 405 (path exists) from 404.
  const known = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => METHODS.includes(m as HTTPMethod));
    for (const m of methods) {
      if (!known.find(m as HTTPMethod, route.url)) known.on(m as HTTPMethod, route.url, () => undefined, { pattern: route.url });
    }
  });

  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const mapped = toApiError(err, req);
    if (mapped?.cause !== undefined) req.log.warn({ err: mapped.cause }, mapped.message);
    if (mapped) return sendError(reply, mapped);
    req.log.error({ err }, 'unhandled error');
    return sendError(reply, new ApiError(500, 'internal_error', 'internal error; retrying unchanged will not help'));
  });

  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => {
    if (fallback(req, reply)) return reply;
    const path = req.url.split('?')[0];
    const allowed = METHODS.filter((m) => known.find(m, path) !== null);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, new ApiError(405, 'method_not_allowed', `method ${req.method} is not allowed here; allowed: ${allowed.join(', ')}`));
    }
    return sendError(reply, new ApiError(404, 'not_found', 'route not found'));
  });
}
