import { createHash, randomBytes } from 'node:crypto';

/** Every API key starts with this; a bearer value that does not is an OAuth access token. */
export const KEY_PREFIX = 'svc_';

/** A new API key secret: `svc_` and 43 url-safe characters (256 random bits). */
export function newKeySecret(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Keys are stored only as this hash; high-entropy secrets need no slow hash. */
export function hashKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function keyPrefix(secret: string): string {
  return secret.slice(0, 12);
}

/** Shape check done before any lookup; a failure gets the same 401 as an unknown key. */
export function plausibleKey(secret: string): boolean {
  return secret.length >= 16 && secret.length <= 256 && /^[\x21-\x7e]+$/.test(secret);
}
