/** Rules shared by trace and log ingestion (as metrics-ingest.ts does for metrics). */
import { ApiError } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import { PartialWriteError, WriterStoppedError } from '../../lib/writer-stopped.js';
import type { Credential } from '../../domains/traces/rows.js';

/** What the export response reports: OTLP `partial_success`, absent when `rejected` is 0 and there is no message. */
export interface SignalOutcome {
  /** rejected_spans / rejected_log_records. */
  rejected: number;
  /** Set when something was rejected, or as a warning (OTLP allows a message with 0 rejected). */
  errorMessage?: string;
  /** Rows committed (for logs and tests; not part of the response). */
  stored: number;
  /** Items dropped by sampling (for logs and tests; not rejected, not in the response). */
  dropped: number;
}

export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Runs the write; when nothing of the request could be committed, answers 503 with Retry-After so the
 * client retries (never 2xx).
 */
export async function committedOr503(write: () => Promise<void>, what: string): Promise<void> {
  try {
    await write();
  } catch (e) {
    const message =
      e instanceof WriterStoppedError
        ? 'the server is shutting down; nothing was stored, retry'
        : e instanceof PartialWriteError
          ? `the ${what} could not all be stored; retry (a retry stores each once)`
          : `the ${what} could not be committed; nothing was stored, retry`;
    const err = new ApiError(503, 'unavailable', message, undefined, { 'retry-after': '1' });
    (err as Error).cause = e;
    throw err;
  }
}

/**
 * The credential an agent sighting is attributed to (spec 2 "Attribution entry"): an API key by its id;
 * anything else carried no key and is `bearer_token` (an OAuth access token, or a signed-in person's
 * browser session, the one other credential the auth hook accepts).
 */
export function credentialOf(p: Principal): Credential {
  return p.kind === 'api_key' && p.keyId ? { source: 'api_key', apiKeyId: p.keyId } : { source: 'bearer_token', apiKeyId: '' };
}
