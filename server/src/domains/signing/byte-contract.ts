/**
 * The byte contract of signed artifacts (docs/signatures.md): RFC 8785 canonical JSON as UTF-8,
 * timestamps in UTC RFC 3339 with exactly nine fractional digits, and the signing input
 * `ASCII(domain) || 0x00 || SHA-256(canonical bytes)`.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** Signing domains: a signature made for one must fail in the other. */
export const SIGNING_DOMAINS = {
  abom: 'svc.abom.signature.v1',
  checkpoint: 'svc.receipt-checkpoint.signature.v1',
  /** The signed tree head of a receipt chain's Merkle tree (docs/receipt-chains.md): our own artifact. */
  treeHead: 'svc.receipt-tree-head.signature.v1',
} as const;

/** RFC 8785 (JCS) canonical form of a JSON value. */
export function canonicalJson(value: unknown): string {
  const s = canonicalize(value);
  if (s === undefined) throw new Error('value has no canonical JSON form');
  return s;
}

/** Raw SHA-256 of the UTF-8 bytes. */
export function sha256(bytes: string | Uint8Array): Buffer {
  return createHash('sha256').update(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes).digest();
}

/** What is signed: the ASCII domain, one 0x00 byte, then the raw 32-byte digest. */
export function signingInput(domain: string, digest: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(domain, 'ascii'), Buffer.from([0]), digest]);
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * A UTC RFC 3339 timestamp with exactly nine fractional digits (trailing zeros kept): from an RFC 3339
 * string (up to nanosecond precision, any offset), a Date, or non-negative epoch nanoseconds.
 */
export function nanoTimestamp(t: string | Date | bigint): string {
  if (typeof t === 'bigint') {
    if (t < 0n) throw new Error('timestamps before 1970 are not supported');
    const seconds = new Date(Number(t / 1_000_000_000n) * 1000).toISOString().slice(0, 19);
    return `${seconds}.${(t % 1_000_000_000n).toString().padStart(9, '0')}Z`;
  }
  if (t instanceof Date) {
    if (Number.isNaN(t.getTime())) throw new Error('not a timestamp');
    return `${t.toISOString().slice(0, 23)}000000Z`;
  }
  const m = RFC3339.exec(t);
  if (!m) throw new Error(`not an RFC 3339 timestamp: ${t}`);
  const whole = new Date(`${m[1]}${m[3].toUpperCase()}`);
  if (Number.isNaN(whole.getTime())) throw new Error(`not an RFC 3339 timestamp: ${t}`);
  return `${whole.toISOString().slice(0, 19)}.${(m[2] ?? '').padEnd(9, '0')}Z`;
}
