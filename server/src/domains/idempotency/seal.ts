/**
 * Sealing of stored replays: AES-256-GCM under a key derived (HKDF-SHA256) from the secret the
 * credential presented, bound to the credential and the Idempotency-Key. Only a request carrying
 * the same secret can open the replay; the database (and the server's own secrets) hold nothing
 * that opens it.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { StoredResponse } from './store.js';

const VERSION = 'v1';
const INFO = 'svc idempotency replay v1';

export function replayKey(secret: string, credential: string, idempotencyKey: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from(`${credential}\n${idempotencyKey}`, 'utf8'), INFO, 32));
}

/** `v1.` and base64url of iv (12 bytes), tag (16 bytes) and the ciphertext of `{headers, body}`. */
export function seal(key: Buffer, response: Pick<StoredResponse, 'headers' | 'body'>): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const text = Buffer.concat([cipher.update(JSON.stringify({ headers: response.headers, body: response.body }), 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), text]).toString('base64url')}`;
}

/** The sealed answer, or undefined when this key cannot open it (another secret, or not a sealed value). */
export function unseal(key: Buffer, sealed: string): Pick<StoredResponse, 'headers' | 'body'> | undefined {
  if (!sealed.startsWith(`${VERSION}.`)) return undefined;
  const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Pick<StoredResponse, 'headers' | 'body'>;
  } catch {
    return undefined;
  }
}
