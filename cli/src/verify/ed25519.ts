/**
 * Offline check of a signed artifact's signature (docs/signatures.md), with nothing from the service:
 * this file imports only node:crypto, on purpose, so that it is a second, independent implementation of
 * the signature procedure.
 *
 * 1. the `signing_key_id` is read from inside the canonical bytes and looked up in the JWK Set;
 * 2. the raw SHA-256 of the canonical bytes (UTF-8) must equal the recorded hex digest;
 * 3. the Ed25519 signature (unpadded base64url, 64 bytes) must verify over
 *    `ASCII(domain) || 0x00 || digest` under that key.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';

export interface Jwk {
  kty?: unknown;
  crv?: unknown;
  kid?: unknown;
  x?: unknown;
  alg?: unknown;
  use?: unknown;
}

export interface JwkSet {
  keys: Jwk[];
}

/** Why a signature does not verify: short lowercase codes. */
export type SignatureFault =
  | 'canonical_form_unreadable'
  | 'no_signing_key_id'
  | 'unknown_key'
  | 'key_malformed'
  | 'digest_malformed'
  | 'digest_mismatch'
  | 'signature_malformed'
  | 'signature_invalid';

export type SignatureVerdict = { ok: true; kid: string } | { ok: false; fault: SignatureFault };

const B64URL = /^[A-Za-z0-9_-]*$/;

/** Strict unpadded base64url: undefined for padding, other alphabets, or non-canonical trailing bits. */
export function fromBase64url(s: string): Buffer | undefined {
  if (!B64URL.test(s) || s.length % 4 === 1) return undefined;
  const b = Buffer.from(s, 'base64url');
  return b.toString('base64url') === s ? b : undefined;
}

/** What is signed: the ASCII domain, one 0x00 byte, the raw 32-byte digest. */
export function domainSeparated(domain: string, digest: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(domain, 'ascii'), Buffer.from([0]), digest]);
}

/** The kid inside the canonical bytes, or the fault. */
function kidOf(canonical: string): { kid: string } | { fault: SignatureFault } {
  let doc: unknown;
  try {
    doc = JSON.parse(canonical);
  } catch {
    return { fault: 'canonical_form_unreadable' };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { fault: 'canonical_form_unreadable' };
  const kid = (doc as Record<string, unknown>).signing_key_id;
  return typeof kid === 'string' && kid !== '' ? { kid } : { fault: 'no_signing_key_id' };
}

export function verifyArtifactSignature(canonical: string, sha256hex: string, signatureB64u: string, domain: string, jwks: JwkSet): SignatureVerdict {
  const k = kidOf(canonical);
  if ('fault' in k) return { ok: false, fault: k.fault };
  const jwk = jwks.keys.find((j) => j && j.kid === k.kid);
  if (!jwk) return { ok: false, fault: 'unknown_key' };
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || fromBase64url(jwk.x)?.length !== 32) return { ok: false, fault: 'key_malformed' };
  if (!/^[0-9a-f]{64}$/.test(sha256hex)) return { ok: false, fault: 'digest_malformed' };
  const digest = createHash('sha256').update(Buffer.from(canonical, 'utf8')).digest();
  if (digest.toString('hex') !== sha256hex) return { ok: false, fault: 'digest_mismatch' };
  const sig = fromBase64url(signatureB64u);
  if (!sig || sig.length !== 64) return { ok: false, fault: 'signature_malformed' };
  let good = false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
    good = verify(null, domainSeparated(domain, digest), key, sig);
  } catch {
    return { ok: false, fault: 'key_malformed' };
  }
  return good ? { ok: true, kid: k.kid } : { ok: false, fault: 'signature_invalid' };
}

/** The key set as the chain verifier names it. */
export type Jwks = JwkSet;

/** Reads a JWK Set file's parsed JSON; undefined when it is not `{keys: [...]}`. */
export function asJwks(v: unknown): Jwks | undefined {
  if (!v || typeof v !== 'object' || !Array.isArray((v as { keys?: unknown }).keys)) return undefined;
  return v as Jwks;
}
