/** Storage port of the artifact signing keys (docs/signatures.md). */

export interface SigningKeyRecord {
  /** RFC 7638 JWK thumbprint of the public key (base64url). */
  kid: string;
  /** Unpadded base64url of the raw 32-byte Ed25519 public key. */
  x: string;
  /** The private key, sealed (keys.ts). */
  sealed: string;
  current: boolean;
  createdAt: string;
  /** Who made it: a principal reference, or `platform` for the first key. */
  createdBy: string | null;
  retiredAt: string | null;
  retiredBy: string | null;
}

export interface SigningKeyStore {
  current(): Promise<SigningKeyRecord | undefined>;
  find(kid: string): Promise<SigningKeyRecord | undefined>;
  /** Every key, current and retired, oldest first. */
  all(): Promise<SigningKeyRecord[]>;
  /**
   * Makes `next` the current key, retiring `retire.kid` (which must still be current). False when another
   * rotation got there first (the retired key was no longer current, or another current key exists).
   */
  rotate(next: SigningKeyRecord, retire: { kid: string; at: string; by: string } | null): Promise<boolean>;
}
