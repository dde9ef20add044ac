/**
 * Authentication and authorization before any product logic (spec 1, "Authentication" 1, 2, 3, 6, 7).
 * Order: credential (401) -> CSRF header of a cookie-authenticated write (403) -> project selector
 * of a project-scoped key (403) -> scope (403) -> strict query (400).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyService } from '../domains/api-keys/service.js';
import { readCookie, SESSION_COOKIE } from '../domains/sessions/cookies.js';
import type { SessionService } from '../domains/sessions/service.js';
import { invalidRequest, permissionDenied, unauthorized } from './errors.js';
import type { Principal } from './principal.js';
import { candidateValues, strictQuery } from './query.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'none' for the few public routes; every other route needs a credential. */
    auth?: 'none';
    /** The scope the route needs (a route without one checks its own rule in the service). */
    scope?: string;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

/** The credential of a request: one of the three API-key headers, or a bearer token. */
export function presentedCredential(req: FastifyRequest): string | undefined {
  const found = new Set<string>();
  const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  for (const v of single(req.headers['x-svc-api-key'])) found.add(v.trim());
  for (const v of single(req.headers['x-api-key'])) found.add(v.trim());
  const authz = req.headers.authorization;
  if (authz !== undefined) {
    const m = /^(ApiKey|Bearer)\s+(\S+)\s*$/i.exec(authz);
    found.add(m ? m[2] : authz); // an unreadable Authorization header is a (malformed) credential
  }
  if (found.size > 1) throw invalidRequest('more than one credential was sent; use one per request');
  return found.values().next().value;
}

function rawQuery(req: FastifyRequest): string {
  const i = req.url.indexOf('?');
  return i < 0 ? '' : req.url.slice(i + 1);
}

/**
 * Rule 3: a project-scoped key may omit `project_id` or repeat its own project exactly; any other
 * non-empty value, also one hidden in a repeated parameter or behind a malformed escape, is refused.
 */
export function checkProjectSelector(principal: Principal, raw: string): void {
  if (principal.projectId === null) return;
  const { values, malformed } = candidateValues(raw, 'project_id');
  if (malformed) throw permissionDenied('project_id is malformed; this key is bound to one project');
  if (values.some((v) => v !== '' && v !== principal.projectId))
    throw permissionDenied('project_id conflicts with the project this key is bound to');
}

export const CSRF_HEADER = 'x-svc-csrf';
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A browser sends cookies with requests that another site starts; it cannot add a custom header to
 * them without a CORS grant, which this service never gives. So a write authenticated by the
 * session cookie must carry `X-Svc-CSRF: 1`. (The sign-in routes take no credential and rely on
 * SameSite=Strict instead.)
 */
export function checkCsrf(principal: Principal, req: FastifyRequest): void {
  if (principal.kind === 'session' && UNSAFE_METHODS.has(req.method) && req.headers[CSRF_HEADER] !== '1')
    throw permissionDenied('a request authenticated by the session cookie that changes something must send the header X-Svc-CSRF: 1');
}

/** Resolves the one credential of a request: an API-key header or the browser-session cookie. */
async function authenticate(req: FastifyRequest, apiKeys: ApiKeyService, sessions: SessionService): Promise<Principal> {
  const secret = presentedCredential(req);
  const cookie = readCookie(req, SESSION_COOKIE);
  if (secret !== undefined && cookie !== undefined) throw invalidRequest('more than one credential was sent; use one per request');
  const principal = secret ? await apiKeys.authenticate(secret) : cookie ? await sessions.authenticate(cookie) : undefined;
  if (!principal) throw unauthorized();
  return principal;
}

export function registerAuth(app: FastifyInstance, apiKeys: ApiKeyService, sessions: SessionService) {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (req) => {
    if (req.is404) return;
    const config = req.routeOptions.config;
    const raw = rawQuery(req);
    if (config.auth !== 'none') {
      const principal = await authenticate(req, apiKeys, sessions);
      req.principal = principal;
      checkCsrf(principal, req);
      checkProjectSelector(principal, raw);
      if (config.scope && !principal.scopes.has(config.scope)) throw permissionDenied(`this request needs scope ${config.scope}`);
    }
    strictQuery(raw, req.routeOptions.schema?.querystring as never);
  });
}

/** The body's project selector gets the same rule as the query's (forecast takes `project_id` in the body). */
export function checkBodyProjectSelector(principal: Principal, value: unknown): void {
  if (principal.projectId !== null && value !== undefined && value !== '' && value !== principal.projectId)
    throw permissionDenied('project_id conflicts with the project this key is bound to');
}
