/** The one error type the service throws on purpose; the error handler turns it into `{error, message, details?}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const invalidRequest = (message: string, details?: Record<string, unknown>) =>
  new ApiError(400, 'invalid_request', message, details);

export const unauthorized = () => new ApiError(401, 'unauthorized', 'authentication required');

/** A failed sign-in or password proof: the same answer for an unknown email and a wrong password. */
export const badCredentials = () => new ApiError(401, 'unauthorized', 'invalid email or password');

export const permissionDenied = (message = 'permission denied') => new ApiError(403, 'permission_denied', message);

export const notFound = (what = 'resource') => new ApiError(404, 'not_found', `${what} not found`);

/** The body's media types a REST write accepts. */
export const JSON_ONLY = ['application/json'];

/** 415 naming what the route accepts, in the message and as `details.accepted`. */
export const unsupportedMediaType = (accepted: string[], message = 'unsupported content type') =>
  new ApiError(415, 'unsupported_media_type', `${message}; send ${accepted.join(' or ')}`, { accepted });

export const conflict = (message: string) => new ApiError(409, 'conflict', message);

export const tooLarge = (message: string, details?: Record<string, unknown>) =>
  new ApiError(429, 'result_too_large', message, details);

export const unavailable = (message: string, retryAfterSeconds = 1, cause?: unknown) => {
  const e = new ApiError(503, 'unavailable', message, undefined, { 'retry-after': String(retryAfterSeconds) });
  // The fault behind a 503 is logged by the error handler, never sent.
  if (cause !== undefined) e.cause = cause;
  return e;
};

export interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
}
