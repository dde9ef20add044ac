/**
 * Storage port of idempotency records (spec 1, Authentication rule 7 and Limits: "idempotency
 * replays (about 10-minute window, keyed to the credential)").
 */
export interface StoredResponse {
  status: number;
  /** The headers worth replaying (content-type, location). */
  headers: Record<string, string>;
  body: string;
}

/**
 * What is stored of an answer: its status, and its headers and body sealed (AES-256-GCM) under a
 * key derived from the presenting credential's own secret, so a copy of the database, or of the
 * server's secrets, reveals nothing of it (a new API key's secret, an invitation token).
 */
export interface SealedResponse {
  status: number;
  sealed: string;
}

export interface IdempotencyRecord {
  /** `<kind>:<id>` of the credential that sent the first request (api key, sign-in, agent approval). */
  credential: string;
  key: string;
  /** Method, route, parameters, query and body of the first request. */
  fingerprint: string;
  /** pending: the first request is still running; done: its answer is stored. */
  state: 'pending' | 'done';
  response: SealedResponse | null;
  createdAt: string;
  expiresAt: string;
}

export interface IdempotencyStore {
  /**
   * Claims (credential, key) for a new request unless a live record holds it: inserts a pending
   * record and returns 'claimed', or returns the live record. An expired record, or a pending one
   * whose request started before `abandonedBefore` (its process died), is replaced.
   */
  claim(r: IdempotencyRecord, now: string, abandonedBefore: string): Promise<'claimed' | IdempotencyRecord>;
  /** pending -> done with the answer; only the claim of `createdAt` is completed. */
  complete(credential: string, key: string, createdAt: string, response: SealedResponse): Promise<void>;
  /** Drops a pending claim whose request did not succeed, so a retry runs again. */
  release(credential: string, key: string, createdAt: string): Promise<void>;
  /** Removes records that expired before `now`; returns how many. */
  purgeExpired(now: string): Promise<number>;
}
