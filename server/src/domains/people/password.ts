/**
 * Password hashing with scrypt, a memory-hard function (node:crypto, no extra dependency).
 * Stored as `scrypt$N$r$p$<salt base64>$<hash base64>` so the cost can be raised later while old
 * hashes still verify.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const MIN_PASSWORD_LENGTH = 12;
/** Bounds the work one request can cause; far above any password a person types. */
export const MAX_PASSWORD_LENGTH = 1024;

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 64;
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; the default maxmem (32 MiB) is exactly that for N=2^15, r=8,
  // and OpenSSL refuses at the limit, so allow twice as much.
  const opts: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const STORED = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m) return false;
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Parameters come from our own store; the bounds only keep a corrupted row from exhausting memory.
  if (n > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(m[5], 'base64');
  const key = await derive(password, Buffer.from(m[4], 'base64'), n, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Parameters of a real hash with a key nobody can match; verifying against it costs one full scrypt. */
const DUMMY = `scrypt$${N}$${R}$${P}$${Buffer.alloc(SALT_BYTES).toString('base64')}$${Buffer.alloc(KEY_LENGTH).toString('base64')}`;

/**
 * Runs one scrypt comparison that always fails, so an unknown email costs the same time as a
 * wrong password and the answer time reveals nothing about who has an account.
 */
export async function burnPasswordCheck(password: string): Promise<void> {
  await verifyPassword(password, DUMMY);
}
