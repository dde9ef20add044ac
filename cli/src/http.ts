/** The HTTP client: REST base `<api-url>/api/v1`, key in `X-Svc-API-Key`, errors mapped to exit codes. */
import { CliError, ExitCode, exitCodeForStatus } from './errors.js';

export const API_KEY_HEADER = 'X-Svc-API-Key';
export const USER_AGENT = 'svc-cli/0.1.0';

export type Query = Record<string, string | number | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
}

export type FetchLike = typeof fetch;

/** `Retry-After` as seconds: delta-seconds, or an HTTP date relative to `now` (never negative). */
export function parseRetryAfter(header: string | null, now: Date = new Date()): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** Builds `<origin>/api/v1<path>?<query>`, leaving out undefined query values. */
export function buildUrl(origin: string, path: string, query: Query = {}): string {
  const url = new URL(`${origin}/api/v1${path}`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.append(k, String(v));
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
    private readonly apiKey: string,
    private readonly fetchImpl: FetchLike = fetch,
  ) {}

  get<T>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('GET', path, opts);
  }
  post<T>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('POST', path, opts);
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
      [API_KEY_HEADER]: this.apiKey,
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    let res: Response;
    let text: string;
    try {
      res = await this.fetchImpl(url, { method, headers, body });
      text = await res.text();
    } catch (e) {
      throw connectionFailed(this.origin, e);
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
}

function connectionFailed(origin: string, e: unknown): CliError {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  const why = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
  return new CliError('connection_failed', `cannot reach ${origin}: ${why}`, ExitCode.general);
}
