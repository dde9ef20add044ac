import { randomBytes } from 'node:crypto';

/** Every API key starts with this; a bearer value that does not is an OAuth access token. */
export const KEY_PREFIX = 'svc_';

/** A new API key secret: `svc_` and 43 url-safe characters (256 random bits). */
export function newKeySecret(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Keys are stored only as their HMAC under the server secret (lib/keyed-hash.ts). */

/** How many characters of a generated key's random part its listing shows. */
export const SHOWN_RANDOM_CHARS = 6;
const GENERATED = /^svc_[A-Za-z0-9_-]{43}$/;

/**
 * What a listing shows of a key: `svc_` and the first 6 characters of the random part of a
 * generated key (36 of its 256 bits); nothing of a key a person chose (SVC_INIT_API_KEY), which
 * may be short enough that any shown character helps a guesser.
 */
export function keyPrefix(secret: string): string {
  return GENERATED.test(secret) ? secret.slice(0, KEY_PREFIX.length + SHOWN_RANDOM_CHARS) : '';
}

/** Shape check done before any lookup; a failure gets the same 401 as an unknown key. */
export function plausibleKey(secret: string): boolean {
  return secret.length >= 16 && secret.length <= 256 && /^[\x21-\x7e]+$/.test(secret);
}
