/**
 * What a signed artifact needs from the signing keys (docs/signatures.md): the current key id, and an
 * Ed25519 signature over `ASCII(domain) || 0x00 || SHA-256(canonical bytes)`.
 */
export interface SignatureResult {
  /** The signing key id (`kid` of the published JWK Set). */
  kid: string;
  /** Unpadded base64url of the 64-byte Ed25519 signature. */
  signature: string;
  /** Lowercase hex SHA-256 of the canonical bytes. */
  sha256: string;
}

export interface ArtifactSigner {
  /** The key id to put inside the canonical bytes of the next artifact (the current signing key). */
  currentKeyId(): Promise<string>;
  /** Signs canonical bytes under a signing domain with the key `kid` (which must be the current key). */
  sign(domain: string, canonical: string, kid: string): Promise<SignatureResult>;
}

export const SIGNATURE_ALG = 'EdDSA';
