/**
 * Mounts oidc-provider (a Koa application) inside Fastify under /oauth, and serves the RFC 8414
 * metadata. The library parses its own request bodies (form posts of the token endpoint, JSON of
 * registration), so these routes leave the body stream unread and hand the raw request over; the
 * library writes the whole response itself.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { METADATA_DOCS, OAUTH_ENDPOINT_DOCS } from './openapi.js';
import type { EscapedError } from './protocol-errors.js';
import { OAUTH_PREFIX } from './provider.js';

/**
 * The library's endpoints (its default routes, relative to the issuer), declared one by one so
 * the OpenAPI description names them and anything else under /oauth is our plain 404.
 */
const ENDPOINTS: { method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS'; url: string; summary: string }[] = [
  { method: 'GET', url: '/.well-known/openid-configuration', summary: 'discovery (OpenID Connect form of the metadata)' },
  { method: 'GET', url: '/auth', summary: 'authorization endpoint (code + PKCE S256); sends the browser to the consent step' },
  { method: 'GET', url: '/auth/:uid', summary: 'resumes an authorization after the consent step' },
  { method: 'POST', url: '/token', summary: 'token endpoint: authorization_code, refresh_token (rotating), device_code' },
  { method: 'OPTIONS', url: '/token', summary: 'CORS preflight' },
  { method: 'POST', url: '/token/revocation', summary: 'token revocation (RFC 7009); revoking a refresh token ends its agent approval' },
  { method: 'OPTIONS', url: '/token/revocation', summary: 'CORS preflight' },
  { method: 'POST', url: '/reg', summary: 'dynamic client registration (RFC 7591)' },
  { method: 'GET', url: '/reg/:client_id', summary: 'client configuration read (RFC 7592), with the registration access token; update and deletion are not offered' },
  { method: 'POST', url: '/device/auth', summary: 'device authorization endpoint (RFC 8628)' },
  { method: 'OPTIONS', url: '/device/auth', summary: 'CORS preflight' },
  { method: 'GET', url: '/device', summary: "the library's own user-code entry page" },
  { method: 'POST', url: '/device', summary: "the library's own user-code entry page, form post" },
  { method: 'GET', url: '/device/:uid', summary: 'resumes a device authorization after the consent step' },
  { method: 'POST', url: '/request', summary: 'pushed authorization requests (RFC 9126)' },
  { method: 'OPTIONS', url: '/request', summary: 'CORS preflight' },
  { method: 'GET', url: '/jwks', summary: 'public signing keys' },
];
/** The library's discovery document, which the metadata routes serve under the RFC 8414 names. */
const DISCOVERY = '/.well-known/openid-configuration';
const config = { auth: 'none' as const, rawQuery: true };

async function handOver(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, innerUrl: string) {
  const provider = await ctx.oauth.provider();
  const raw = req.raw as IncomingMessage & { originalUrl?: string };
  // As a mounting framework does: the library sees its own path and derives its mount path from originalUrl.
  raw.originalUrl = `${OAUTH_PREFIX}${innerUrl}`;
  raw.url = innerUrl;
  reply.hijack();
  await provider.callback()(raw, reply.raw);
  const escaped = (raw as EscapedError).oauthEscapedError;
  if (escaped !== undefined) req.log.warn({ err: escaped }, 'error escaped the authorization server; answered in JSON');
}

export async function oauthRoutes(app: FastifyInstance, ctx: AppContext) {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
    for (const e of ENDPOINTS) {
      const doc = OAUTH_ENDPOINT_DOCS[`${e.method} ${e.url}`];
      scope.route({
        method: e.method,
        url: `${OAUTH_PREFIX}${e.url}`,
        config: { ...config, openapi: doc.openapi },
        schema: { operationId: doc.operationId, tags: ['oauth'], security: [], summary: e.summary },
        handler: (req, reply) =>
          // `svc login` prints the library's code-entry address (RFC 8628 verification_uri); with the web UI
          // built, a person following it lands on the UI's page for the code, signed in or asked to.
          e.method === 'GET' && e.url === '/device' && ctx.config.uiDir !== null
            ? reply.redirect(`/device${req.url.slice(`${OAUTH_PREFIX}/device`.length)}`, 303)
            : handOver(ctx, req, reply, req.url.slice(OAUTH_PREFIX.length)),
      });
    }
  });

  // RFC 8414: for the issuer `<origin>/oauth` the metadata lives at the path-inserted name; the bare
  // name is served too because clients that know only the origin look there.
  for (const url of ['/.well-known/oauth-authorization-server', `/.well-known/oauth-authorization-server${OAUTH_PREFIX}`]) {
    app.get(
      url,
      {
        config: { ...config, openapi: METADATA_DOCS[url].openapi },
        schema: { operationId: METADATA_DOCS[url].operationId, tags: ['oauth'], security: [], summary: 'authorization server metadata (RFC 8414), from the library\'s discovery' },
      },
      (req, reply) => handOver(ctx, req, reply, DISCOVERY),
    );
  }
}
