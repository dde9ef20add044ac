/** Exit codes of the `svc` client (one place, so the mapping is testable). */
export const ExitCode = {
  ok: 0,
  /** API or general error, invalid JSON from the server, signal interruption. */
  general: 1,
  /** Usage error: commander errors, bad flag values, missing --yes. */
  usage: 2,
  /** HTTP 401, or no API key configured at all. */
  unauthenticated: 3,
  /** HTTP 403, including a project-bound key conflicting with the active project. */
  forbidden: 4,
  /** HTTP 404. */
  notFound: 5,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code for a failed HTTP response. */
export function exitCodeForStatus(status: number): ExitCodeValue {
  if (status === 401) return ExitCode.unauthenticated;
  if (status === 403) return ExitCode.forbidden;
  if (status === 404) return ExitCode.notFound;
  return ExitCode.general;
}

/** Every failure the client reports on purpose. Rendered by `formatError`. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: ExitCodeValue,
    readonly extra: {
      /** The real HTTP status, for API failures. */
      status?: number;
      /** Seconds, from a `Retry-After` response header. */
      retryAfter?: number;
      details?: unknown;
    } = {},
  ) {
    super(message);
  }

  /** The object printed on standard error in non-interactive mode. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { error: this.code, message: this.message, exit_code: this.exitCode };
    if (this.extra.status !== undefined) out.status = this.extra.status;
    if (this.extra.retryAfter !== undefined) out.retry_after = this.extra.retryAfter;
    if (this.extra.details !== undefined) out.details = this.extra.details;
    return out;
  }
}

export const usageError = (message: string) => new CliError('usage_error', message, ExitCode.usage);

export const generalError = (code: string, message: string) => new CliError(code, message, ExitCode.general);

/** How to choose the active project, for every message that asks for one. */
export const PROJECT_HINT =
  'pass --project <id>, set SVC_PROJECT, or run `svc projects use <id>` to make it the active project (`svc projects list` shows the ids)';

/**
 * No project is selected where one is needed (e.g. the server's 400 "project_id is required for
 * organization-level credentials"): a usage error (exit 2) that says how to choose one. `status` is the
 * HTTP status when the server said so.
 */
export function projectRequired(what: string, status?: number): CliError {
  return new CliError('project_required', `${what}: ${PROJECT_HINT}`, ExitCode.usage, status === undefined ? {} : { status });
}

/**
 * The server's 400 for an organization-level credential that named no project ("project_id is required
 * for organization-level credentials") becomes `projectRequired` (exit 2, status 400 kept); any other
 * error is returned as is.
 */
export function withProjectHint(e: CliError): CliError {
  if (e.extra.status === 400 && e.code === 'invalid_request' && /\bproject_id is required\b/.test(e.message))
    return projectRequired('this command needs a project, and the credential is organization-wide', 400);
  return e;
}
