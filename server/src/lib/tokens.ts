/** High-entropy one-time secrets (invitations, browser sessions), stored only as their SHA-256. */
import { createHash, randomBytes } from 'node:crypto';

/** `<prefix>_` and 43 url-safe characters: 256 random bits. */
export function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** 256 random bits need no slow hash: a SHA-256 of the secret cannot be reversed or guessed. */
export function tokenHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Shape check before any lookup, so junk never reaches the store; failures get the caller's usual refusal. */
export function plausibleToken(secret: string, prefix: string): boolean {
  return secret.length === prefix.length + 44 && secret.startsWith(`${prefix}_`) && /^[A-Za-z0-9_-]+$/.test(secret.slice(prefix.length + 1));
}
