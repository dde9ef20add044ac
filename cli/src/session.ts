/**
 * The signed-in session of `svc login` (spec 1 "Authentication" 2: a person signs the CLI in
 * through a browser device flow and it then holds a short-lived user OAuth access token).
 *
 * The protocol, against the service's own authorization server (public client `svc-cli`):
 * - device authorization (RFC 8628) at `<api-url>/oauth/device/auth`, then polling
 *   `<api-url>/oauth/token` every `interval` seconds (5 when not given): `authorization_pending`
 *   keeps polling, `slow_down` adds 5 seconds to the interval, `expired_token` and
 *   `access_denied` end the sign-in;
 * - refresh (`grant_type=refresh_token`): the server rotates the refresh token on every use and
 *   treats a reused one as stolen (it revokes the whole grant), so the new pair is saved before the
 *   new access token is used, and refreshing happens under a lock file so that two `svc`
 *   processes never present the same refresh token;
 * - revocation (RFC 7009) at `<api-url>/oauth/token/revocation`, refresh token first (on this
 *   server that ends the grant, its access tokens and the agent connection), then the access token.
 *
 * The session is stored in the profile as `session: {access_token, refresh_token, expires_at,
 * scope, api_url}` (config.ts; the file is mode 0600) and is only ever sent to its own api_url.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadConfig, updateSession, type StoredSession } from './config.js';
import { CliError, ExitCode, usageError, type ExitCodeValue } from './errors.js';
import { connectionFailed, USER_AGENT, type BearerAuth, type FetchLike } from './http.js';
import { ALL_SCOPES, isScope } from './scopes.js';

export type { StoredSession } from './config.js';

/** The built-in public client of the CLI (server/src/domains/oauth/provider.ts CLI_CLIENT_ID). */
export const CLI_CLIENT_ID = 'svc-cli';
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
export const OAUTH_PATHS = {
  deviceAuthorization: '/oauth/device/auth',
  token: '/oauth/token',
  revocation: '/oauth/token/revocation',
} as const;

/** RFC 8628 3.2: the polling interval when the server names none, and what `slow_down` adds. */
export const DEFAULT_POLL_INTERVAL_S = 5;
export const SLOW_DOWN_STEP_S = 5;
/** Polling gives up after this many failed requests in a row (network errors, 5xx). */
export const MAX_POLL_FAILURES = 3;
/** An access token expiring within this is refreshed before a request. */
export const REFRESH_MARGIN_MS = 30_000;
/** The protocol scopes a login may ask for besides the service's own. */
export const PROTOCOL_SCOPES = ['offline_access', 'openid'] as const;

/** The lock held while refreshing or signing out; one older than LOCK_STALE_MS was left by a dead process. */
const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 35_000;
const LOCK_POLL_MS = 100;

export type Sleep = (ms: number) => Promise<void>;
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the protocol functions need from outside: replaced in tests. */
export interface OAuthDeps {
  fetch: FetchLike;
  now: () => Date;
  sleep: Sleep;
}

const unauthenticated = (code: string, message: string, status?: number) =>
  new CliError(code, message, ExitCode.unauthenticated, status === undefined ? {} : { status });

/** The scopes `svc login` asks for: the given ones (default: every scope of the service), plus offline_access. */
export function loginScopes(requested: string[] | undefined): string[] {
  const given = (requested ?? []).flatMap((s) => s.split(/[\s,]+/)).filter(Boolean);
  const unknown = given.filter((s) => !isScope(s) && !(PROTOCOL_SCOPES as readonly string[]).includes(s));
  if (unknown.length)
    throw usageError(`unknown scope ${unknown.join(', ')}; known scopes: ${ALL_SCOPES.join(', ')}, offline_access`);
  const scopes = given.length ? given : [...ALL_SCOPES];
  return [...new Set([...scopes, 'offline_access'])];
}

interface OAuthAnswer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

/** POSTs a form to an endpoint of the authorization server; the answer's JSON object (or {}). */
async function postForm(deps: OAuthDeps, origin: string, path: string, params: Record<string, string>): Promise<OAuthAnswer> {
  let res: Response;
  let text: string;
  try {
    res = await deps.fetch(`${origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': USER_AGENT },
      body: new URLSearchParams(params).toString(),
    });
    text = await res.text();
  } catch (e) {
    throw connectionFailed(origin, e);
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    /* not JSON: judged by the status alone */
  }
  return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);

/** An OAuth error answer as a CliError: 5xx is a general error, a refusal gets `refusedExit`. */
function oauthError(a: OAuthAnswer, what: string, refusedExit: ExitCodeValue): CliError {
  const code = str(a.body.error) ?? 'http_error';
  const why = str(a.body.error_description) ?? str(a.body.error) ?? `HTTP ${a.status}`;
  const retryAfter = a.retryAfter !== null && /^\d+$/.test(a.retryAfter.trim()) ? Number(a.retryAfter) : undefined;
  return new CliError(code, `${what}: ${why}`, a.status >= 500 || a.status === 429 ? ExitCode.general : refusedExit, {
    status: a.status,
    retryAfter,
  });
}

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  /** Seconds the codes stay valid. */
  expires_in: number;
  /** Seconds between polls. */
  interval: number;
}

/** Starts the device flow (RFC 8628 3.1) for `scopes`. */
export async function startDeviceAuthorization(deps: OAuthDeps, apiUrl: string, scopes: string[]): Promise<DeviceAuthorization> {
  const a = await postForm(deps, apiUrl, OAUTH_PATHS.deviceAuthorization, { client_id: CLI_CLIENT_ID, scope: scopes.join(' ') });
  if (a.status !== 200) throw oauthError(a, `${apiUrl} refused to start a sign-in`, ExitCode.general);
  const b = a.body;
  const deviceCode = str(b.device_code);
  const userCode = str(b.user_code);
  const uri = str(b.verification_uri);
  if (!deviceCode || !userCode || !uri)
    throw new CliError('invalid_response', `${apiUrl} answered the device authorization without device_code, user_code or verification_uri`, ExitCode.general);
  return {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: uri,
    verification_uri_complete: str(b.verification_uri_complete),
    expires_in: num(b.expires_in) ?? 600,
    interval: num(b.interval) ?? DEFAULT_POLL_INTERVAL_S,
  };
}

/**
 * Polls the token endpoint until the person approves (RFC 8628 3.4, 3.5); resolves with the
 * token response. The time spent is counted by the sleeps, so a test's sleep controls it.
 */
export async function pollForTokens(deps: OAuthDeps, apiUrl: string, d: DeviceAuthorization): Promise<Record<string, unknown>> {
  let interval = d.interval;
  let waitedMs = 0;
  let failures = 0;
  const expired = () => unauthenticated('expired_token', 'the sign-in code expired before it was approved: run `svc login` again');
  for (;;) {
    if (waitedMs >= d.expires_in * 1000) throw expired();
    await deps.sleep(interval * 1000);
    waitedMs += interval * 1000;
    let a: OAuthAnswer;
    try {
      a = await postForm(deps, apiUrl, OAUTH_PATHS.token, { grant_type: DEVICE_GRANT_TYPE, device_code: d.device_code, client_id: CLI_CLIENT_ID });
    } catch (e) {
      if (++failures >= MAX_POLL_FAILURES) throw e;
      continue;
    }
    if (a.status === 200) return a.body;
    if (a.status >= 500 || a.status === 429) {
      if (++failures >= MAX_POLL_FAILURES) throw oauthError(a, 'waiting for the sign-in failed', ExitCode.general);
      continue;
    }
    failures = 0;
    switch (a.body.error) {
      case 'authorization_pending':
        continue;
      case 'slow_down':
        interval += SLOW_DOWN_STEP_S;
        continue;
      case 'expired_token':
        throw expired();
      case 'access_denied':
        throw unauthenticated('access_denied', 'the sign-in was denied in the browser', a.status);
      default:
        throw oauthError(a, 'the sign-in failed', ExitCode.unauthenticated);
    }
  }
}

/** A token response as the session to store; `previous` fills what a refresh answer may leave out. */
export function sessionFromTokens(tokens: Record<string, unknown>, apiUrl: string, now: Date, previous?: StoredSession): StoredSession {
  const access = str(tokens.access_token);
  const type = str(tokens.token_type);
  if (!access || (type !== undefined && type.toLowerCase() !== 'bearer'))
    throw new CliError('invalid_response', `${apiUrl} answered without a bearer access token`, ExitCode.general);
  return {
    access_token: access,
    refresh_token: str(tokens.refresh_token) ?? previous?.refresh_token ?? '',
    expires_at: new Date(now.getTime() + (num(tokens.expires_in) ?? 300) * 1000).toISOString(),
    scope: str(tokens.scope) ?? previous?.scope ?? '',
    api_url: apiUrl,
  };
}

/** Whether the access token expires within REFRESH_MARGIN_MS of `now` (or has no readable expiry). */
export function expiresSoon(session: StoredSession, now: Date): boolean {
  const at = Date.parse(session.expires_at);
  return !Number.isFinite(at) || at - now.getTime() < REFRESH_MARGIN_MS;
}

const SIGN_IN_AGAIN = 'run `svc login` again';

/** Exchanges the refresh token for a new pair (the old refresh token is dead afterwards). */
export async function refreshSession(deps: OAuthDeps, session: StoredSession): Promise<StoredSession> {
  if (!session.refresh_token) throw unauthenticated('session_expired', `the signed-in session has no refresh token and its access token expired: ${SIGN_IN_AGAIN}`);
  const a = await postForm(deps, session.api_url, OAUTH_PATHS.token, {
    grant_type: 'refresh_token',
    refresh_token: session.refresh_token,
    client_id: CLI_CLIENT_ID,
  });
  if (a.status === 200) return sessionFromTokens(a.body, session.api_url, deps.now(), session);
  if (a.body.error === 'invalid_grant')
    throw unauthenticated('session_expired', `the signed-in session has expired or was revoked: ${SIGN_IN_AGAIN}`, a.status);
  throw oauthError(a, `refreshing the signed-in session failed (${SIGN_IN_AGAIN} if this persists)`, ExitCode.unauthenticated);
}

/**
 * Revokes the refresh token, then the access token (RFC 7009). Any failure (network, 5xx, a
 * refusal) throws `revocation_failed`: the caller keeps the stored session so that the user can retry.
 */
export async function revokeSession(deps: OAuthDeps, session: StoredSession): Promise<void> {
  const kept = 'the session is kept: try again, or `svc logout --forget` to delete it on this computer only';
  const tokens: [string, string][] = [
    [session.refresh_token, 'refresh_token'],
    [session.access_token, 'access_token'],
  ];
  for (const [token, hint] of tokens) {
    if (!token) continue;
    let a: OAuthAnswer;
    try {
      a = await postForm(deps, session.api_url, OAUTH_PATHS.revocation, { token, token_type_hint: hint, client_id: CLI_CLIENT_ID });
    } catch (e) {
      throw new CliError('revocation_failed', `${(e as Error).message}; ${kept}`, ExitCode.general);
    }
    if (a.status !== 200) {
      const e = oauthError(a, `${session.api_url} could not revoke the ${hint.replace('_', ' ')}`, ExitCode.general);
      throw new CliError('revocation_failed', `${e.message}; ${kept}`, ExitCode.general, e.extra);
    }
  }
}

/**
 * Runs `fn` holding `<config>.lock`, so that one `svc` process at a time refreshes or removes the
 * session (a refresh token presented twice makes the server revoke the whole sign-in).
 */
export async function withSessionLock<T>(configPath: string, sleep: Sleep, fn: () => Promise<T>): Promise<T> {
  const lock = `${configPath}.lock`;
  mkdirSync(dirname(configPath), { recursive: true, mode: 0o700 });
  let waited = 0;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new CliError('config_error', `cannot create ${lock}: ${(e as Error).message}`, ExitCode.general);
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) {
        unlinkSync(lock); // left by a process that died while refreshing
        continue;
      }
    } catch {
      continue; // released meanwhile
    }
    if (waited >= LOCK_WAIT_MS) throw new CliError('session_locked', `another svc process holds ${lock}; remove it if no svc is running`, ExitCode.general);
    await sleep(LOCK_POLL_MS);
    waited += LOCK_POLL_MS;
  }
  try {
    return await fn();
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      /* already gone */
    }
  }
}

/** Stores the session of a profile; a failure to write is reported with what it means for the user. */
export function saveSession(configPath: string, profile: string, session: StoredSession | undefined): void {
  try {
    updateSession(configPath, profile, session);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new CliError('config_error', `cannot save the session in ${configPath}: ${why}`, ExitCode.general);
  }
}

/** The bearer credential of ApiClient for a stored session: refreshes before expiry and after a 401. */
export class SessionAuth implements BearerAuth {
  private current: StoredSession;

  constructor(
    private readonly opts: { configPath: string; profile: string; session: StoredSession; deps: OAuthDeps },
  ) {
    this.current = opts.session;
  }

  get session(): StoredSession {
    return this.current;
  }

  async token(): Promise<string> {
    return expiresSoon(this.current, this.opts.deps.now()) ? this.refresh() : this.current.access_token;
  }

  async refresh(): Promise<string> {
    const { configPath, profile, deps } = this.opts;
    const used = this.current;
    return withSessionLock(configPath, deps.sleep, async () => {
      const stored = loadConfig(configPath).profiles[profile]?.session;
      if (!stored || stored.api_url !== used.api_url)
        throw unauthenticated('session_expired', `the session of profile "${profile}" was signed out or replaced meanwhile: ${SIGN_IN_AGAIN}`);
      if (stored.refresh_token !== used.refresh_token) {
        // Another svc process refreshed meanwhile: its pair is the live one.
        this.current = stored;
        if (!expiresSoon(stored, deps.now())) return stored.access_token;
      }
      const next = await refreshSession(deps, this.current);
      // Saved before the new access token is used: the old refresh token no longer works.
      try {
        updateSession(configPath, profile, next);
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        throw new CliError('config_error', `the session was refreshed but could not be saved in ${configPath} (${why}): ${SIGN_IN_AGAIN}`, ExitCode.general);
      }
      this.current = next;
      return next.access_token;
    });
  }
}

/**
 * Opens `url` with the platform's opener (open, xdg-open; rundll32's URL handler on Windows, which
 * unlike `start` needs no shell quoting). Resolves false when there is no opener; a started opener
 * counts as success even if it then finds no browser, so the printed URL stays the fallback.
 */
export function openInBrowser(url: string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  if (!/^https?:\/\//i.test(url)) return Promise.resolve(false);
  const [command, args] =
    platform === 'darwin' ? ['open', [url]] : platform === 'win32' ? ['rundll32', ['url.dll,FileProtocolHandler', url]] : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { stdio: 'ignore', detached: platform !== 'win32' });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
