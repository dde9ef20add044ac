/**
 * Authentication and authorization before any product logic (spec 1, "Authentication" 1, 2, 3, 6, 7).
 * Order: credential (401) -> CSRF header of a cookie-authenticated write (403) -> project selector
 * of a project-scoped credential (403) -> scope (403) -> agent budget (429) -> strict query (400).
 *
 * Credentials: an API key in `X-Svc-API-Key`, `X-API-Key`, `Authorization: ApiKey` or
 * `Authorization: Bearer svc_...`; any other `Authorization: Bearer` value is an OAuth access token
 * of a person, held by an agent (rule 2); the browser-session cookie.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AgentBudgetService } from '../domains/agent-connections/budgets-service.js';
import type { AgentConnectionService } from '../domains/agent-connections/service.js';
import type { ApiKeyService } from '../domains/api-keys/service.js';
import { KEY_PREFIX } from '../domains/api-keys/secret.js';
import { readCookie, SESSION_COOKIE } from '../domains/sessions/cookies.js';
import type { SessionService } from '../domains/sessions/service.js';
import { invalidRequest, notFound, permissionDenied, unauthorized } from './errors.js';
import type { Principal } from './principal.js';
import { candidateValues, strictQuery } from './query.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'none' for the few public routes; every other route needs a credential. */
    auth?: 'none';
    /** The scope the route needs (a route without one checks its own rule in the service). */
    scope?: string;
    /** The OAuth protocol routes answer malformed queries in the protocol's own error format. */
    rawQuery?: boolean;
    /** A telemetry write (OTLP ingest): refused, as for a revoked key, to a key a containment froze. */
    telemetryWrite?: boolean;
    /**
     * 'not_found': a project-scoped key naming another project gets 404, the same answer as a missing
     * object, instead of 403 (the evaluation routes). Still before anything else runs.
     */
    foreignProject?: 'not_found';
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

export interface PresentedCredential {
  secret: string;
  /** An `Authorization: Bearer` value that is not an API key: an OAuth access token. */
  oauth: boolean;
}

const CREDENTIAL_HEADERS = new Set(['x-svc-api-key', 'x-api-key', 'authorization']);
const TWO_CREDENTIALS = 'more than one credential was sent; use one per request';

/**
 * How many credential headers the request carried, counted on the raw header list: Node keeps only
 * the first `Authorization` and joins repeated `X-Svc-API-Key` values with ", ", so the parsed
 * headers cannot tell.
 */
function credentialHeaderCount(rawHeaders: string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (CREDENTIAL_HEADERS.has(rawHeaders[i].toLowerCase())) n++;
  return n;
}

/** The credential of a request: one of the three API-key headers, or a bearer token. */
export function presentedCredential(req: FastifyRequest): PresentedCredential | undefined {
  // Two credential headers of any kind, identical or not, are refused.
  if (credentialHeaderCount(req.raw.rawHeaders) > 1) throw invalidRequest(TWO_CREDENTIALS);
  const found = new Set<string>();
  let bearer: string | undefined;
  const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  for (const v of single(req.headers['x-svc-api-key'])) found.add(v.trim());
  for (const v of single(req.headers['x-api-key'])) found.add(v.trim());
  const authz = req.headers.authorization;
  if (authz !== undefined) {
    const m = /^(ApiKey|Bearer)\s+(\S+)\s*$/i.exec(authz);
    found.add(m ? m[2] : authz); // an unreadable Authorization header is a (malformed) credential
    if (m && m[1].toLowerCase() === 'bearer') bearer = m[2];
  }
  if (found.size > 1) throw invalidRequest(TWO_CREDENTIALS);
  const secret = found.values().next().value;
  if (secret === undefined) return undefined;
  return { secret, oauth: secret === bearer && !secret.startsWith(KEY_PREFIX) };
}

/** The secret the request authenticated with: the API key or bearer token, else the session cookie. */
export function credentialSecret(req: FastifyRequest): string | undefined {
  return presentedCredential(req)?.secret ?? readCookie(req, SESSION_COOKIE);
}

function rawQuery(req: FastifyRequest): string {
  const i = req.url.indexOf('?');
  return i < 0 ? '' : req.url.slice(i + 1);
}

/**
 * Rule 3: a project-scoped key may omit `project_id` or repeat its own project exactly; any other
 * non-empty value, also one hidden in a repeated parameter or behind a malformed escape, is refused.
 */
export function checkProjectSelector(principal: Principal, raw: string, foreign?: 'not_found'): void {
  if (principal.projectId === null) return;
  const { values, malformed } = candidateValues(raw, 'project_id');
  if (malformed) throw permissionDenied('project_id is malformed; this key is bound to one project');
  if (values.some((v) => v !== '' && v !== principal.projectId))
    throw foreign === 'not_found' ? notFound('project') : permissionDenied('project_id conflicts with the project this key is bound to');
}

/** The REST base path; OTLP ingestion and the OAuth protocol routes live outside it. */
export const API_PREFIX = '/api/v1';

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

export interface Authenticators {
  apiKeys: ApiKeyService;
  sessions: SessionService;
  agentConnections: AgentConnectionService;
  agentBudgets: AgentBudgetService;
}

/** Resolves the one credential of a request: an API key, an OAuth access token, or the browser-session cookie. */
async function authenticate(req: FastifyRequest, auth: Authenticators): Promise<Principal> {
  const presented = presentedCredential(req);
  const cookie = readCookie(req, SESSION_COOKIE);
  if (presented !== undefined && cookie !== undefined) throw invalidRequest(TWO_CREDENTIALS);
  const principal = presented
    ? presented.oauth
      ? await auth.agentConnections.authenticate(presented.secret)
      : await auth.apiKeys.authenticate(presented.secret)
    : cookie
      ? await auth.sessions.authenticate(cookie)
      : undefined;
  if (!principal) throw unauthorized();
  return principal;
}

export function registerAuth(app: FastifyInstance, auth: Authenticators) {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (req) => {
    if (req.is404) return;
    const config = req.routeOptions.config;
    const raw = rawQuery(req);
    if (config.auth !== 'none') {
      const principal = await authenticate(req, auth);
      // A frozen key writes no telemetry: the answer is the revoked key's, so the agent learns nothing more.
      if (config.telemetryWrite && principal.writeFrozen) throw unauthorized();
      req.principal = principal;
      checkCsrf(principal, req);
      checkProjectSelector(principal, raw, config.foreignProject);
      if (config.scope && !principal.scopes.has(config.scope)) throw permissionDenied(`this request needs scope ${config.scope}`);
      // Only admitted requests spend an agent's budget: refusals above cost nothing.
      await auth.agentBudgets.admit(principal, req.method);
    }
    if (!config.rawQuery)
      strictQuery(raw, req.routeOptions.schema?.querystring as never, { undeclaredIsNone: req.routeOptions.url?.startsWith(API_PREFIX) });
  });
}

/** The body's project selector gets the same rule as the query's (forecast takes `project_id` in the body). */
export function checkBodyProjectSelector(principal: Principal, value: unknown): void {
  if (principal.projectId !== null && value !== undefined && value !== '' && value !== principal.projectId)
    throw permissionDenied('project_id conflicts with the project this key is bound to');
}
