/**
 * The HTTP client: REST base `<api-url>/api/v1`, errors mapped to exit codes. The credential is an
 * API key (sent in `X-Svc-API-Key`) or the bearer access token of a signed-in session
 * (`Authorization: Bearer`), refreshed before it expires and once more after a 401.
 */
import { CliError, ExitCode, exitCodeForStatus } from './errors.js';

export const API_KEY_HEADER = 'X-Svc-API-Key';
export const USER_AGENT = 'svc-cli/0.1.0';

/** Query values; an array is sent as the key repeated once per element, in order. */
export type Query = Record<string, string | number | readonly (string | number)[] | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
}

export type FetchLike = typeof fetch;

/** The access token of a signed-in session (`svc login`); see session.ts. */
export interface BearerAuth {
  /** The current access token, refreshed first when it is about to expire. */
  token(): Promise<string>;
  /** A new access token after the server refused the current one (throws when that is impossible). */
  refresh(): Promise<string>;
}

/** An API key, or a signed-in session. */
export type Credential = string | BearerAuth;

/** `Retry-After` as seconds: delta-seconds, or an HTTP date relative to `now` (never negative). */
export function parseRetryAfter(header: string | null, now: Date = new Date()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** Builds `<origin>/api/v1<path>?<query>`, leaving out undefined query values; arrays repeat the key. */
export function buildUrl(origin: string, path: string, query: Query = {}): string {
  const url = new URL(`${origin}/api/v1${path}`);
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, String(item));
    else url.searchParams.append(k, String(v));
  }
  return url.toString();
}

/** Maps a failed response to a CliError carrying the real status (and Retry-After). */
export function errorFromResponse(status: number, statusText: string, bodyText: string, retryAfter: string | null): CliError {
  let code = 'http_error';
  let message = `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
  let details: unknown;
  try {
    const body = JSON.parse(bodyText) as Record<string, unknown>;
    if (body && typeof body === 'object') {
      if (typeof body.error === 'string' && body.error) code = body.error;
      if (typeof body.message === 'string' && body.message) message = body.message;
      if (body.details !== undefined) details = body.details;
    }
  } catch {
    /* not JSON: keep the generic message */
  }
  return new CliError(code, message, exitCodeForStatus(status), {
    status,
    retryAfter: parseRetryAfter(retryAfter),
    details,
  });
}

export class ApiClient {
  constructor(
    readonly origin: string,
    private readonly credential: Credential,
    private readonly fetchImpl: FetchLike = fetch,
  ) {}

  /** Whether requests carry a signed-in session's bearer token rather than an API key. */
  get usesSession(): boolean {
    return typeof this.credential !== 'string';
  }

  get<T>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('GET', path, opts);
  }
  post<T>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('POST', path, opts);
  }
  put<T>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('PUT', path, opts);
  }
  patch<T>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('PATCH', path, opts);
  }
  delete<T>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('DELETE', path, opts);
  }

  /** Sends one request; resolves with the parsed JSON body (undefined for an empty body). */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const url = buildUrl(this.origin, path, opts.query);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    const auth = this.credential;
    if (typeof auth === 'string') headers[API_KEY_HEADER] = auth;
    else headers.authorization = `Bearer ${await auth.token()}`;
    let { res, text } = await this.send(url, { method, headers, body });
    if (res.status === 401 && typeof auth !== 'string') {
      // The token may have been revoked or rotated elsewhere: refresh once, retry once.
      headers.authorization = `Bearer ${await auth.refresh()}`;
      ({ res, text } = await this.send(url, { method, headers, body }));
      if (res.status === 401)
        throw new CliError('unauthenticated', 'the server refused the signed-in session even after a refresh: run `svc login` again', ExitCode.unauthenticated, {
          status: 401,
        });
    }
    if (!res.ok) throw errorFromResponse(res.status, res.statusText, text, res.headers.get('retry-after'));
    if (text.trim() === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError('invalid_response', `the server returned invalid JSON for ${method} ${new URL(url).pathname}`, ExitCode.general, {
        status: res.status,
      });
    }
  }

  /**
   * Opens a streaming GET (Server-Sent Events) with the same credential handling as `request` (a
   * signed-in session is refreshed before it expires and once more after a 401). Resolves with the
   * 2xx Response, its body unread; a non-2xx answer becomes the usual CliError (with `Retry-After`).
   */
  async stream(path: string, opts: { query?: Query; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    const url = buildUrl(this.origin, path, opts.query);
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      'cache-control': 'no-cache',
      'user-agent': USER_AGENT,
      ...(opts.headers ?? {}),
    };
    const auth = this.credential;
    if (typeof auth === 'string') headers[API_KEY_HEADER] = auth;
    else headers.authorization = `Bearer ${await auth.token()}`;
    let res = await this.open(url, { method: 'GET', headers, signal: opts.signal });
    if (res.status === 401 && typeof auth !== 'string') {
      await res.body?.cancel().catch(() => {});
      headers.authorization = `Bearer ${await auth.refresh()}`;
      res = await this.open(url, { method: 'GET', headers, signal: opts.signal });
      if (res.status === 401) {
        await res.body?.cancel().catch(() => {});
        throw new CliError('unauthenticated', 'the server refused the signed-in session even after a refresh: run `svc login` again', ExitCode.unauthenticated, {
          status: 401,
        });
      }
    }
    if (!res.ok) {
      let text = '';
      try {
        text = await res.text();
      } catch {
        /* the body could not be read: keep the generic message */
      }
      throw errorFromResponse(res.status, res.statusText, text, res.headers.get('retry-after'));
    }
    return res;
  }

  private async open(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchImpl(url, init);
    } catch (e) {
      throw connectionFailed(this.origin, e);
    }
  }

  private async send(url: string, init: RequestInit): Promise<{ res: Response; text: string }> {
    try {
      const res = await this.fetchImpl(url, init);
      return { res, text: await res.text() };
    } catch (e) {
      throw connectionFailed(this.origin, e);
    }
  }
}

/** A request that never got an answer (refused, reset, DNS). */
export function connectionFailed(origin: string, e: unknown): CliError {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  const why = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
  return new CliError('connection_failed', `cannot reach ${origin}: ${why}`, ExitCode.general);
}
