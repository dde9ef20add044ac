/**
 * The artifact signature check of the offline verifier (docs/signatures.md), with no import from the
 * service: take the `signing_key_id` from inside the canonical bytes and find that `kid` in the JWK Set;
 * the raw SHA-256 of the canonical bytes must equal the recorded hex digest; the Ed25519 signature
 * (unpadded base64url, 64 bytes) must verify over `ASCII(domain) || 0x00 || digest`.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';

export interface Jwk {
  kty?: unknown;
  crv?: unknown;
  x?: unknown;
  kid?: unknown;
  alg?: unknown;
  use?: unknown;
}

export interface Jwks {
  keys: Jwk[];
}

export type SignatureCheck = { valid: true; kid: string } | { valid: false; fault: SignatureFault; message: string };

export type SignatureFault =
  | 'canonical_form_unreadable'
  | 'digest_mismatch'
  | 'unknown_key'
  | 'unusable_key'
  | 'signature_malformed'
  | 'signature_invalid';

const B64U = /^[A-Za-z0-9_-]*$/;

/** Strict unpadded base64url: the alphabet only, and the text must be the canonical encoding of its bytes. */
export function decodeBase64url(s: string): Buffer | undefined {
  if (typeof s !== 'string' || !B64U.test(s)) return undefined;
  const bytes = Buffer.from(s, 'base64url');
  return bytes.toString('base64url') === s ? bytes : undefined;
}

/** Reads a JWK Set file's parsed JSON; undefined when it is not `{keys: [...]}`. */
export function asJwks(v: unknown): Jwks | undefined {
  if (!v || typeof v !== 'object' || !Array.isArray((v as { keys?: unknown }).keys)) return undefined;
  return v as Jwks;
}

const fail = (fault: SignatureFault, message: string): SignatureCheck => ({ valid: false, fault, message });

export function verifyArtifactSignature(canonical: string, sha256hex: string, signatureB64u: string, domain: string, jwks: Jwks): SignatureCheck {
  let kid: unknown;
  try {
    kid = (JSON.parse(canonical) as { signing_key_id?: unknown })?.signing_key_id;
  } catch {
    return fail('canonical_form_unreadable', 'canonical_form is not JSON');
  }
  if (typeof kid !== 'string' || kid === '') return fail('canonical_form_unreadable', 'canonical_form names no signing_key_id');
  const digest = createHash('sha256').update(Buffer.from(canonical, 'utf8')).digest();
  if (typeof sha256hex !== 'string' || digest.toString('hex') !== sha256hex) return fail('digest_mismatch', 'the recorded SHA-256 is not the digest of canonical_form');
  const jwk = jwks.keys.find((k) => k && k.kid === kid);
  if (!jwk) return fail('unknown_key', `the key set has no key "${kid}"`);
  const x = typeof jwk.x === 'string' ? decodeBase64url(jwk.x) : undefined;
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || !x || x.length !== 32) return fail('unusable_key', `key "${kid}" is not an Ed25519 public key`);
  const sig = decodeBase64url(signatureB64u);
  if (!sig || sig.length !== 64) return fail('signature_malformed', 'the signature is not 64 bytes of unpadded base64url');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string }, format: 'jwk' });
  const input = Buffer.concat([Buffer.from(domain, 'ascii'), Buffer.of(0), digest]);
  return verify(null, input, key, sig) ? { valid: true, kid } : fail('signature_invalid', `the signature does not verify under key "${kid}" in domain ${domain}`);
}
