/**
 * The UI's one way to the service: a client typed by the OpenAPI document (schema.d.ts, generated), on the
 * same origin with the browser session cookie. Writes carry `X-Svc-CSRF: 1`, as the API asks of every
 * cookie-authenticated change. A refusal becomes an ApiFailure with the API's own code and message, shown
 * next to what caused it (ui.tsx ErrorNote).
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

export type { paths };

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const csrf: Middleware = {
  onRequest({ request }) {
    if (UNSAFE.has(request.method)) request.headers.set('x-svc-csrf', '1');
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(csrf);

/** The API's error body, or what the browser could tell when there was none. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** The data of an openapi-fetch answer, or throws its ApiFailure. */
export function ok<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.error !== undefined || !r.response.ok) {
    const e = r.error as { error?: string; message?: string } | undefined;
    throw new ApiFailure(r.response.status, e?.error ?? `http_${r.response.status}`, e?.message ?? `${r.response.status} ${r.response.statusText}`, r.error);
  }
  return r.data as T;
}
