/**
 * Safe retries of writes (spec 1, rule 7 and Limits): a write sent with an `Idempotency-Key`
 * header runs once; a retry with the same key by the same credential within about ten minutes
 * gets the first answer again instead of running twice. Records are keyed to the credential, so
 * another credential's identical key is a different request, and a revoked credential can never
 * reach its replays (it is refused by authentication before this step).
 *
 * Only successful answers are stored: a refused or failed write changed nothing, so its retry
 * simply runs again. A retry while the first request is still running gets 409; the same key
 * with a different request gets 422.
 *
 * Nothing secret is at rest in clear: the stored answer is sealed under a key derived from the
 * secret the credential presented (seal.ts), and the request fingerprint is an HMAC under the
 * server secret. A retry by another token of the same credential (a browser session or an agent
 * whose access token was refreshed in between) cannot open the replay: 409, use a new key.
 */
import { ApiError, conflict, invalidRequest } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { KeyedHash } from '../../lib/keyed-hash.js';
import { replayKey, seal, unseal } from './seal.js';
import type { IdempotencyStore, StoredResponse } from './store.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** "about 10 minutes" */
export const REPLAY_WINDOW_MS = 10 * 60_000;
/** A claim whose request has not finished after this long belongs to a process that died. */
export const ABANDONED_AFTER_MS = 60_000;
export const MAX_KEY_LENGTH = 255;
/** Expired records are removed on every this-many claims. */
const PURGE_EVERY = 200;

export interface Claim {
  credential: string;
  key: string;
  createdAt: string;
  /** Seals the answer; derived from the presented secret, never stored. */
  sealKey: Buffer;
}

export type Admission = { kind: 'run'; claim: Claim } | { kind: 'replay'; response: StoredResponse };

/** The credential the replays are keyed to: the key, the sign-in (one device), or the agent approval. */
export function credentialOf(p: Principal): string {
  if (p.kind === 'api_key') return `api_key:${p.keyId}`;
  if (p.kind === 'session') return `session:${p.signInId}`;
  return `oauth:${p.connectionId}`;
}

/** A key is 1 to 255 visible ASCII characters; anything else (or two headers) is refused. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) throw invalidRequest('Idempotency-Key must be sent at most once');
  if (header.length === 0 || header.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(header))
    throw invalidRequest(`Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters`);
  return header;
}

export class IdempotencyService {
  private claims = 0;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly keyHash: KeyedHash,
  ) {}

  /** What identifies a request (a keyed hash: a password in a body cannot be guessed from a database copy). */
  fingerprint(parts: { method: string; route: string; url: string; body: unknown }): string {
    return this.keyHash.digest([parts.method, parts.route, parts.url, parts.body ?? null]);
  }

  /** Runs the request (holding a claim) or replays the stored first answer; `secret` is what the credential presented. */
  async admit(principal: Principal, secret: string, key: string, requestFingerprint: string): Promise<Admission> {
    const now = this.clock.now();
    const credential = credentialOf(principal);
    const claim: Claim = { credential, key, createdAt: now.toISOString(), sealKey: replayKey(secret, credential, key) };
    if (++this.claims % PURGE_EVERY === 0) await this.store.purgeExpired(claim.createdAt);
    const got = await this.store.claim(
      {
        ...claim,
        fingerprint: requestFingerprint,
        state: 'pending',
        response: null,
        expiresAt: new Date(now.getTime() + REPLAY_WINDOW_MS).toISOString(),
      },
      claim.createdAt,
      new Date(now.getTime() - ABANDONED_AFTER_MS).toISOString(),
    );
    if (got === 'claimed') return { kind: 'run', claim };
    if (got.fingerprint !== requestFingerprint)
      throw new ApiError(422, 'idempotency_key_reused', 'this Idempotency-Key was already used for a different request; use a new key', {
        reason: 'IDEMPOTENCY_KEY_REUSED',
      });
    if (got.state === 'pending' || !got.response) {
      const e = conflict('a request with this Idempotency-Key is still running; retry shortly');
      throw new ApiError(e.status, e.code, e.message, { reason: 'IDEMPOTENCY_IN_PROGRESS' }, { 'retry-after': '1' });
    }
    const opened = unseal(claim.sealKey, got.response.sealed);
    if (!opened)
      throw new ApiError(409, 'conflict', 'the first request with this Idempotency-Key was answered to another token of this credential and cannot be replayed to this one; use a new key', {
        reason: 'IDEMPOTENCY_REPLAY_UNREADABLE',
      });
    return { kind: 'replay', response: { status: got.response.status, ...opened } };
  }

  complete(claim: Claim, response: StoredResponse): Promise<void> {
    return this.store.complete(claim.credential, claim.key, claim.createdAt, { status: response.status, sealed: seal(claim.sealKey, response) });
  }

  release(claim: Claim): Promise<void> {
    return this.store.release(claim.credential, claim.key, claim.createdAt);
  }
}
