/**
 * The OpenAPI description of the OAuth protocol routes (routes.ts). oidc-provider reads the requests
 * and writes the responses itself, so everything here is documentation only (`config.openapi`):
 * nothing is validated or serialized by Fastify. Error bodies of these routes are the protocol's
 * (RFC 6749 `{error, error_description}`, or the library's HTML page on the browser endpoints), not
 * the service's `{error, message}`.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import type { OperationDoc } from '../../http/openapi.js';
import { stringEnum } from '../../http/schemas.js';

const open = { additionalProperties: true };

/** A protocol shape as a named component: open to the fields this description does not list. */
const named = <T extends TProperties>($id: string, description: string, fields: T) => Type.Object(fields, { $id, description, ...open });

export const OAuthError = named('OAuthError', 'OAuth error (RFC 6749 section 5.2)', {
  error: Type.String({ description: 'an RFC 6749 error code, e.g. invalid_request, invalid_grant, invalid_client' }),
  error_description: Type.Optional(Type.String()),
});

export const OAuthServerMetadata = named('OAuthServerMetadata', 'authorization server metadata (RFC 8414)', {
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  device_authorization_endpoint: Type.Optional(Type.String()),
  registration_endpoint: Type.Optional(Type.String()),
  revocation_endpoint: Type.Optional(Type.String()),
  jwks_uri: Type.Optional(Type.String()),
  scopes_supported: Type.Optional(Type.Array(Type.String())),
  code_challenge_methods_supported: Type.Optional(Type.Array(Type.String())),
});

export const OAuthClientMetadata = named('OAuthClientMetadata', 'client metadata (RFC 7591)', {
  client_id: Type.Optional(Type.String({ description: 'in responses' })),
  redirect_uris: Type.Array(Type.String()),
  client_name: Type.Optional(Type.String()),
  grant_types: Type.Optional(Type.Array(Type.String())),
  token_endpoint_auth_method: Type.Optional(Type.String({ description: 'none for public clients (PKCE)' })),
  registration_access_token: Type.Optional(Type.String({ description: 'in the registration response' })),
  registration_client_uri: Type.Optional(Type.String({ description: 'in the registration response' })),
});

export const OAuthTokenResponse = named('OAuthTokenResponse', 'token response (RFC 6749 section 5.1)', {
  access_token: Type.String({ description: 'opaque; send as Authorization: Bearer' }),
  token_type: Type.String({ description: 'Bearer' }),
  expires_in: Type.Integer(),
  refresh_token: Type.Optional(Type.String({ description: 'rotated on each use' })),
  scope: Type.Optional(Type.String()),
  id_token: Type.Optional(Type.String()),
});

export const OAuthDeviceAuthorizationResponse = named('OAuthDeviceAuthorizationResponse', 'device authorization response (RFC 8628 section 3.2)', {
  device_code: Type.String(),
  user_code: Type.String(),
  verification_uri: Type.String(),
  verification_uri_complete: Type.Optional(Type.String()),
  expires_in: Type.Integer(),
  interval: Type.Optional(Type.Integer()),
});

export const OAuthPushedAuthorizationResponse = named('OAuthPushedAuthorizationResponse', 'pushed authorization response (RFC 9126 section 2.2)', { request_uri: Type.String(), expires_in: Type.Integer() });

export const JsonWebKeySet = named('JsonWebKeySet', 'public signing keys (RFC 7517)', {
  keys: Type.Array(Type.Object({ kty: Type.String(), kid: Type.Optional(Type.String()) }, open)),
});

const clientId = Type.String({ description: 'a registered client, or svc-cli (the CLI, device flow)' });
const scope = Type.String({ description: 'space-separated scopes: openid, offline_access and the service scopes' });
const projectId = Type.String({ description: 'limits the approval to one project' });

const authorizationFields = {
  response_type: stringEnum(['code']),
  client_id: clientId,
  redirect_uri: Type.String(),
  scope: Type.Optional(scope),
  state: Type.Optional(Type.String()),
  code_challenge: Type.String({ description: 'PKCE: BASE64URL(SHA-256(code_verifier))' }),
  code_challenge_method: stringEnum(['S256']),
  project_id: Type.Optional(projectId),
};

export const OAuthAuthorizationRequest = named('OAuthAuthorizationRequest', 'authorization request (RFC 6749 section 4.1.1, PKCE RFC 7636)', authorizationFields);

export const OAuthTokenRequest = named('OAuthTokenRequest', 'token request (RFC 6749 sections 4.1.3 and 6, RFC 8628 section 3.4)', {
  grant_type: stringEnum(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']),
  client_id: Type.Optional(clientId),
  code: Type.Optional(Type.String({ description: 'authorization_code' })),
  redirect_uri: Type.Optional(Type.String({ description: 'authorization_code' })),
  code_verifier: Type.Optional(Type.String({ description: 'authorization_code (PKCE)' })),
  refresh_token: Type.Optional(Type.String({ description: 'refresh_token' })),
  device_code: Type.Optional(Type.String({ description: 'device_code' })),
  scope: Type.Optional(scope),
});

export const OAuthRevocationRequest = named('OAuthRevocationRequest', 'revocation request (RFC 7009 section 2.1)', {
  token: Type.String(),
  token_type_hint: Type.Optional(stringEnum(['access_token', 'refresh_token'])),
  client_id: Type.Optional(clientId),
});

export const OAuthDeviceAuthorizationRequest = named('OAuthDeviceAuthorizationRequest', 'device authorization request (RFC 8628 section 3.1)', {
  client_id: clientId,
  scope: Type.Optional(scope),
  project_id: Type.Optional(projectId),
});

export const OAUTH_SCHEMAS: TSchema[] = [
  OAuthError,
  OAuthServerMetadata,
  OAuthClientMetadata,
  OAuthTokenResponse,
  OAuthDeviceAuthorizationResponse,
  OAuthPushedAuthorizationResponse,
  JsonWebKeySet,
  OAuthAuthorizationRequest,
  OAuthTokenRequest,
  OAuthRevocationRequest,
  OAuthDeviceAuthorizationRequest,
];

const FORM = 'application/x-www-form-urlencoded';
const json = (name: string, description: string, type = 'application/json') => ({ description, content: { [type]: { schema: Type.Ref(name) } } });
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const form = (name: string) => ({ content: { [FORM]: { schema: Type.Ref(name) } } });
const redirect = (description: string) => ({ description, headers: { location: { type: 'string', description: 'where the browser goes next' } }, type: 'null' });
const none = (description: string) => ({ description, type: 'null' });
const oauthError = (description: string) => json('OAuthError', description);
const notFound = { 404: { description: "not found: the library's plain-text answer", content: { 'text/plain': { schema: { type: 'string' } } } } };
const preflight = { 204: none('CORS preflight answered') };
const authorizeAnswers = {
  303: redirect('to the consent step (/api/v1/oauth/interactions/{uid}), or back to redirect_uri with code or error'),
  400: html('the request cannot be redirected (unknown client, redirect_uri not registered): the library error page'),
};
const clientAnswers = { 200: json('OAuthClientMetadata', 'the client'), 401: oauthError('registration access token missing or invalid'), ...notFound };

export interface OAuthEndpointDoc {
  operationId: string;
  /** config.openapi of the route (see http/openapi.ts). */
  openapi: OperationDoc;
}

/** Keyed by `METHOD path` relative to the issuer (the keys of ENDPOINTS in routes.ts). */
export const OAUTH_ENDPOINT_DOCS: Record<string, OAuthEndpointDoc> = {
  'GET /.well-known/openid-configuration': { operationId: 'getOpenIdConfiguration', openapi: { responses: { 200: json('OAuthServerMetadata', 'the discovery document') } } },
  'GET /auth': { operationId: 'startAuthorization', openapi: { querystring: OAuthAuthorizationRequest, responses: authorizeAnswers } },
  'POST /auth': { operationId: 'startAuthorizationWithForm', openapi: { body: form('OAuthAuthorizationRequest'), responses: { ...authorizeAnswers, ...notFound } } },
  'GET /auth/:uid': { operationId: 'resumeAuthorization', openapi: { responses: authorizeAnswers } },
  'POST /token': {
  operationId: 'createToken',
  openapi: {
    body: form('OAuthTokenRequest'),
    responses: {
      200: json('OAuthTokenResponse', 'tokens'),
      400: oauthError('invalid_request, invalid_grant, authorization_pending, slow_down, access_denied, expired_token, ...'),
      401: oauthError('invalid_client'),
    },
  },
  },
  'OPTIONS /token': { operationId: 'preflightToken', openapi: { responses: preflight } },
  'POST /token/revocation': {
  operationId: 'revokeToken',
  openapi: { body: form('OAuthRevocationRequest'), responses: { 200: none('revoked, or the token was unknown (RFC 7009)'), 400: oauthError('invalid_request'), 401: oauthError('invalid_client') } },
  },
  'OPTIONS /token/revocation': { operationId: 'preflightTokenRevocation', openapi: { responses: preflight } },
  'POST /reg': {
  operationId: 'registerClient',
  openapi: {
    body: { content: { 'application/json': { schema: Type.Ref('OAuthClientMetadata') } } },
    responses: { 201: json('OAuthClientMetadata', 'registered; keep registration_access_token'), 400: oauthError('invalid_client_metadata, invalid_redirect_uri') },
  },
  },
  'GET /reg/:client_id': { operationId: 'getClient', openapi: { responses: clientAnswers } },
  'PUT /reg/:client_id': {
  operationId: 'updateClient',
  openapi: { body: { content: { 'application/json': { schema: Type.Ref('OAuthClientMetadata') } } }, responses: { ...clientAnswers, 400: oauthError('invalid_client_metadata') } },
  },
  'DELETE /reg/:client_id': { operationId: 'deleteClient', openapi: { responses: { 204: none('deleted'), 401: clientAnswers[401], ...notFound } } },
  'POST /device/auth': {
  operationId: 'createDeviceAuthorization',
  openapi: {
    body: form('OAuthDeviceAuthorizationRequest'),
    responses: { 200: json('OAuthDeviceAuthorizationResponse', 'show user_code and verification_uri to the person, then poll /oauth/token'), 400: oauthError('invalid_request, invalid_scope'), 401: oauthError('invalid_client') },
  },
  },
  'OPTIONS /device/auth': { operationId: 'preflightDeviceAuthorization', openapi: { responses: preflight } },
  'GET /device': { operationId: 'getDeviceUserCodePage', openapi: { responses: { 200: html('the user-code entry page') } } },
  'POST /device': {
  operationId: 'submitDeviceUserCode',
  openapi: { body: { content: { [FORM]: { schema: Type.Object({ user_code: Type.String(), xsrf: Type.Optional(Type.String({ description: "the entry page's form token" })) }, open) } } }, responses: { 200: html('the next page of the device flow'), 400: html('the library error page') } },
  },
  'GET /device/:uid': { operationId: 'resumeDeviceAuthorization', openapi: { responses: { 200: html('the result page of the device flow'), 400: html('the library error page') } } },
  'POST /request': {
  operationId: 'createPushedAuthorizationRequest',
  openapi: {
    body: form('OAuthAuthorizationRequest'),
    responses: { 201: json('OAuthPushedAuthorizationResponse', 'use request_uri at /oauth/auth'), 400: oauthError('invalid_request'), 401: oauthError('invalid_client') },
  },
  },
  'OPTIONS /request': { operationId: 'preflightPushedAuthorizationRequest', openapi: { responses: preflight } },
  'GET /jwks': { operationId: 'getJsonWebKeySet', openapi: { responses: { 200: json('JsonWebKeySet', 'the keys', 'application/jwk-set+json') } } },
};

/** The RFC 8414 metadata routes (bare name and the issuer's path-inserted name). */
export const METADATA_DOCS: Record<string, OAuthEndpointDoc> = {
  '/.well-known/oauth-authorization-server': {
  operationId: 'getAuthorizationServerMetadata',
  openapi: { responses: { 200: json('OAuthServerMetadata', 'the metadata') } },
  },
  '/.well-known/oauth-authorization-server/oauth': {
  operationId: 'getIssuerAuthorizationServerMetadata',
  openapi: { responses: { 200: json('OAuthServerMetadata', 'the metadata') } },
  },
};
