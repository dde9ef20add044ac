/**
 * The server secret that API-key hashes are keyed with (HMAC-SHA256), so a copy of the database
 * alone does not allow guessing a key offline, not even a short key chosen by a person.
 *
 * It comes from SVC_KEY_HASH_SECRET (base64 of at least 32 bytes) or from a file in the data dir
 * (`key-hash.secret`, 32 random bytes, mode 0600, created on the first start). Several API nodes
 * over one PostgreSQL must share it: set the same SVC_KEY_HASH_SECRET on each.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export const KEY_HASH_SECRET_FILE = 'key-hash.secret';
export const KEY_HASH_SECRET_BYTES = 32;

export class KeyedHash {
  constructor(private readonly secret: Buffer) {
    if (secret.length < KEY_HASH_SECRET_BYTES) throw new Error(`the key hash secret must be at least ${KEY_HASH_SECRET_BYTES} bytes`);
  }

  /** HMAC-SHA256 of `value` under the server secret, hex. */
  hash(value: string): string {
    return createHmac('sha256', this.secret).update(value, 'utf8').digest('hex');
  }

  /** Keyed digest of structured data (request fingerprints), base64url. */
  digest(parts: unknown): string {
    return createHmac('sha256', this.secret).update(JSON.stringify(parts)).digest('base64url');
  }
}

/** The unkeyed SHA-256 that stored API keys used before the keyed hash; such rows are upgraded on first use. */
export function legacyKeyHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Reads `<dataDir>/key-hash.secret`, creating it (32 random bytes, 0600) when it does not exist. */
export async function keyHashSecretFile(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, KEY_HASH_SECRET_FILE);
  await fs.mkdir(dataDir, { recursive: true });
  try {
    await fs.writeFile(file, randomBytes(KEY_HASH_SECRET_BYTES), { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const secret = await fs.readFile(file);
  if (secret.length < KEY_HASH_SECRET_BYTES) throw new Error(`${file} must hold at least ${KEY_HASH_SECRET_BYTES} bytes`);
  return secret;
}

/** The configuration with its key hash secret: SVC_KEY_HASH_SECRET when set, else the data dir's file. */
export async function withKeyHashSecret<C extends { dataDir: string; keyHashSecret?: Buffer }>(config: C): Promise<C & { keyHashSecret: Buffer }> {
  return { ...config, keyHashSecret: config.keyHashSecret ?? (await keyHashSecretFile(config.dataDir)) };
}
