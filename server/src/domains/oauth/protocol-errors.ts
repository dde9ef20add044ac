/**
 * How the authorization server answers bad input: every error of the library is an RFC 6749 §5.2 /
 * RFC 8628 §3.5 JSON body `{error, error_description}`, also on the pages the library renders for a
 * browser (its error page, its user-code form), never HTML and never a 500 for bad input. What the
 * library does not route is our JSON 404.
 *
 * The library's `renderError` and `features.deviceFlow.userCodeInputSource` hooks are used, plus
 * one Koa middleware in front of its router; the library itself is not patched.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { ErrorBody } from '../../http/errors.js';

interface LibraryError {
  name?: string;
  statusCode?: number;
}

export interface ProtocolError {
  error: string;
  error_description?: string;
}

/**
 * The user-code form's own refusals (the library re-renders its form for them, with status 200)
 * as RFC 8628 answers.
 */
const USER_CODE_REFUSALS: Record<string, ProtocolError> = {
  NoCodeError: { error: 'invalid_request', error_description: 'no user code was submitted' },
  NotFoundError: { error: 'invalid_grant', error_description: 'the user code was not found' },
  ExpiredError: { error: 'expired_token', error_description: 'the user code has expired' },
  AlreadyUsedError: { error: 'invalid_grant', error_description: 'the user code was already used' },
  AbortedError: { error: 'access_denied', error_description: 'the authorization was interrupted' },
};

/**
 * The library's error pages pre-generate a form secret in a browser session it may never have
 * stored; persisting that session afterwards throws (a TypeError answered 500). An error answer
 * needs no session: a session the library never stored is left unstored.
 */
function forgetUnstoredSession(ctx: KoaContextWithOIDC): void {
  const session = ctx.oidc?.session as { exp?: number; touched?: boolean } | undefined;
  if (session && typeof session.exp !== 'number') session.touched = false;
}

function sendProtocolError(ctx: KoaContextWithOIDC, status: number, body: ProtocolError): void {
  forgetUnstoredSession(ctx);
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = { error: body.error, ...(body.error_description !== undefined ? { error_description: body.error_description } : {}) };
}

/** `renderError`: what the library would show as an HTML error page, as JSON with the library's status. */
export async function renderError(ctx: KoaContextWithOIDC, out: ProtocolError): Promise<void> {
  sendProtocolError(ctx, ctx.status >= 400 ? ctx.status : 400, out);
}

/** The library's user-code form: `page` renders it; an error is answered in JSON instead of re-rendering it. */
export function userCodeInput(page: (ctx: KoaContextWithOIDC, form: string) => void) {
  return async (ctx: KoaContextWithOIDC, form: string, out?: ProtocolError, err?: LibraryError): Promise<void> => {
    if (!out && !err) return page(ctx, form);
    const refusal = err?.name !== undefined ? USER_CODE_REFUSALS[err.name] : undefined;
    if (refusal) return sendProtocolError(ctx, 400, refusal);
    sendProtocolError(ctx, ctx.status >= 400 ? ctx.status : 400, out ?? { error: 'invalid_request' });
  };
}

/** The raw request carries an error that escaped the library, for the route to log. */
export type EscapedError = { oauthEscapedError?: unknown };

const NOT_FOUND: ErrorBody = { error: 'not_found', message: 'route not found' };

/**
 * In front of the library's router: a path it does not route is our JSON 404 (Koa would answer
 * plain text), and an error escaping the library (Koa would answer a plain-text 500) keeps an error
 * answer the library already chose, or becomes a JSON `server_error`.
 */
export async function protocolErrorGuard(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
  try {
    await next();
  } catch (err) {
    // Logged by the route that handed the request over (routes.ts), with the request's logger.
    (ctx.req as EscapedError).oauthEscapedError = err;
    const chosen = ctx.status >= 400 && ctx.status < 500 && ctx.body !== undefined && ctx.body !== null;
    if (!chosen) sendProtocolError(ctx, 500, { error: 'server_error', error_description: 'internal error; retrying unchanged will not help' });
    return;
  }
  if (ctx.status === 404 && (ctx.body === undefined || ctx.body === null)) {
    ctx.status = 404;
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = NOT_FOUND;
  }
}
