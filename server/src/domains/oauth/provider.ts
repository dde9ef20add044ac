/**
 * The OAuth 2.1 authorization server: oidc-provider (an OpenID-certified implementation) with our
 * choices. The protocol is the library's; this file only configures it.
 *
 * - Issuer `<publicUrl>/oauth`; the library's endpoints live under it (/oauth/auth, /oauth/token,
 *   /oauth/reg, /oauth/device/auth, /oauth/token/revocation, /oauth/jwks).
 * - Authorization code with PKCE, S256 only (the library supports no other method), required for
 *   every client; dynamic client registration (RFC 7591), open; the device authorization grant
 *   (RFC 8628); refresh tokens on every code and device grant, rotated on each use.
 * - Access tokens are opaque, valid 10 minutes, checked on every request against the store.
 * - Scopes are ours (ALL_SCOPES) plus `openid` and `offline_access`.
 * - The consent step is ours (interactions/{uid}, device/approve): a signed-in person approves,
 *   and every approval is a new grant, never an earlier one reused, so each becomes one agent
 *   approval record.
 */
import type { default as Provider, Adapter, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { ALL_SCOPES } from '../api-keys/scopes.js';
import type { OAuthKeys } from './keys.js';
import { protocolErrorGuard, renderError, userCodeInput } from './protocol-errors.js';

/**
 * Loads the library. It warns on every load under a Node.js release line older than 22 ("Unsupported
 * runtime"), while it works on Node 20.6+ (the whole OAuth suite runs on it): that one line is dropped while
 * its module is evaluated; every other warning passes.
 */
async function loadLibrary(): Promise<typeof Provider> {
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0].replace(/\x1b\[[0-9;]*m/g, '') : '';
    if (!text.startsWith('oidc-provider WARNING: Unsupported runtime.')) original(...args);
  };
  try {
    return (await import('oidc-provider')).default;
  } finally {
    console.warn = original;
  }
}

export const OAUTH_PREFIX = '/oauth';
export const ACCESS_TOKEN_TTL_S = 10 * 60;
export const REFRESH_TOKEN_TTL_S = 30 * 86_400;
/** A grant outlives its refresh tokens: an agent that keeps refreshing stays connected a year. */
export const GRANT_TTL_S = 365 * 86_400;
export const DEVICE_CODE_TTL_S = 10 * 60;
export const INTERACTION_TTL_S = 60 * 60;

/**
 * Where the browser is sent for the consent step: the REST route that describes the request. The
 * library's interaction cookie is scoped to `<this>/<uid>`, so the approve and deny routes below it
 * receive it too, which binds the consent to the browser that started the authorization.
 */
export const INTERACTIONS_PATH = '/api/v1/oauth/interactions';

/** The public client of the `svc` CLI: device flow only, no secret. */
export const CLI_CLIENT_ID = 'svc-cli';

/** The extra authorization (and device authorization) parameter that limits an approval to one project. */
export const PROJECT_PARAM = 'project_id';

export interface ProviderDeps {
  issuer: string;
  keys: OAuthKeys;
  adapter: (model: string) => Adapter;
  /** Whether a person with this id exists (the library asks when it issues tokens). */
  personExists: (userId: string) => Promise<boolean>;
  /** Where the browser is sent for the consent step. */
  interactionPath: (uid: string) => string;
}

function deviceCodePage(ctx: KoaContextWithOIDC, title: string, text: string) {
  ctx.type = 'html';
  ctx.body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
}

export async function createProvider(deps: ProviderDeps): Promise<Provider> {
  const Library = await loadLibrary();
  const configuration: Configuration = {
    adapter: deps.adapter,
    jwks: deps.keys.jwks as Configuration['jwks'],
    cookies: { keys: deps.keys.cookieKeys },
    scopes: ['openid', 'offline_access', ...ALL_SCOPES],
    // Our one signing key is ES256 (keys.ts); ID tokens, when a client asks for openid, use it.
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    extraParams: [PROJECT_PARAM],
    // RFC 7591 names these; the library accepts only listed extras. They are labels, never verified.
    extraClientMetadata: { properties: ['software_id', 'software_version'] },
    clients: [
      {
        client_id: CLI_CLIENT_ID,
        client_name: 'svc CLI',
        token_endpoint_auth_method: 'none',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      deviceFlow: {
        enabled: true,
        // The library's own code-entry pages stay available; people approve through our API.
        successSource: async (ctx) => deviceCodePage(ctx, 'Device connected', 'You can close this window and return to your device.'),
        // Its errors are RFC 8628 JSON answers, not a re-rendered form.
        userCodeInputSource: userCodeInput((ctx, form) =>
          deviceCodePage(ctx, 'Connect a device', `Enter the code displayed on your device.</p>${form}<p><button type="submit" form="op.deviceInputForm">Continue</button>`),
        ),
      },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      rpInitiatedLogout: { enabled: false },
    },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      DeviceCode: DEVICE_CODE_TTL_S,
      Grant: GRANT_TTL_S,
      IdToken: ACCESS_TOKEN_TTL_S,
      Interaction: INTERACTION_TTL_S,
      RefreshToken: REFRESH_TOKEN_TTL_S,
      Session: 86_400,
    },
    rotateRefreshToken: true,
    // An agent needs to stay connected without asking for offline_access by name.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Only the grant our consent step made for this very request counts: never one from earlier.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    // Errors are RFC 6749 / 8628 JSON bodies, never the library's HTML error page.
    renderError,
    interactions: { url: async (_ctx, interaction) => deps.interactionPath(interaction.uid) },
    findAccount: async (_ctx, sub) => ((await deps.personExists(sub)) ? { accountId: sub, claims: async () => ({ sub }) } : undefined),
  };
  const provider = new Library(deps.issuer, configuration);
  provider.use(protocolErrorGuard);
  return provider;
}
