/**
 * The service's artifact signing keys (docs/signatures.md).
 *
 * Ed25519 keys made with node:crypto. The public part is kept in clear in the control store and
 * published at `/.well-known/svc-signing-keys.json`; the private part is kept in the same row, sealed
 * with AES-256-GCM under a key derived (HKDF-SHA256) from the key-hash secret, so a copy of the database
 * alone cannot sign, and every API node sharing the database and the secret signs with the same key.
 * The `kid` is the RFC 7638 JWK thumbprint. The first key is made when the first artifact is signed;
 * a rotation makes a new current key and retires the old one, which stays published for good.
 */
import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { permissionDenied, unavailable } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { principalRef } from '../assets/signals.js';
import { INITIALIZED } from '../organizations/bootstrap.js';
import type { Role } from '../people/roles.js';
import { sha256, signingInput } from './byte-contract.js';
import type { ArtifactSigner, SignatureResult } from './signer.js';
import type { SigningKeyRecord } from './store.js';

/** A published key of the JWK Set. */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  alg: 'EdDSA';
  use: 'sig';
  kid: string;
  x: string;
}

const SEAL_INFO = 'svc signing-key seal v1';

/** The sealing key of private signing keys, derived from the key-hash secret. */
export function sealingKey(keyHashSecret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', keyHashSecret, Buffer.alloc(0), SEAL_INFO, 32));
}

/** RFC 7638 thumbprint of an Ed25519 public key: SHA-256 of `{"crv":"Ed25519","kty":"OKP","x":...}`, base64url. */
export function jwkThumbprint(x: string): string {
  return sha256(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).toString('base64url');
}

/** A key object from a raw 32-byte Ed25519 seed (the RFC 8032 "secret key"). */
export function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(seed).toString('base64url'), x: rawPublic(seed) }, format: 'jwk' });
}

function rawPublic(seed: Uint8Array): string {
  // node derives the public key from the private one when only `d` is known: go through PKCS#8.
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seed)]);
  const pub = createPublicKey(createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }));
  return pub.export({ format: 'jwk' }).x as string;
}

/** The raw public key of a private key, unpadded base64url. */
export function publicX(key: KeyObject): string {
  return createPublicKey(key).export({ format: 'jwk' }).x as string;
}

/** Ed25519 signature of `message` (raw bytes, no prehash), unpadded base64url. */
export function ed25519Sign(key: KeyObject, message: Uint8Array): string {
  return sign(null, message, key).toString('base64url');
}

export function ed25519Verify(x: string, message: Uint8Array, signature: string): boolean {
  const sig = Buffer.from(signature, 'base64url');
  if (sig.length !== 64 || sig.toString('base64url') !== signature) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    return verify(null, message, key, sig);
  } catch {
    return false;
  }
}

function seal(key: Buffer, kid: string, seed: Buffer): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(kid, 'utf8'));
  const ct = Buffer.concat([c.update(seed), c.final()]);
  return ['v1', iv.toString('base64url'), ct.toString('base64url'), c.getAuthTag().toString('base64url')].join('.');
}

function unseal(key: Buffer, kid: string, sealed: string): Buffer {
  const [v, iv, ct, tag] = sealed.split('.');
  if (v !== 'v1' || !iv || !ct || !tag) throw new Error('unknown sealing format');
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(kid, 'utf8'));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]);
}

export const jwkOf = (k: Pick<SigningKeyRecord, 'kid' | 'x'>): PublicJwk => ({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: k.kid, x: k.x });

export class KeyRotatedError extends Error {}

export class SigningKeyService implements ArtifactSigner {
  /** Unsealed private keys by kid (a key never changes once made). */
  private readonly unsealed = new Map<string, KeyObject>();

  constructor(
    private readonly control: ControlStore,
    private readonly clock: Clock,
    private readonly sealKey: Buffer,
    private readonly roleOf: (p: Principal) => Promise<Role>,
  ) {}

  private newKey(by: string): SigningKeyRecord {
    const { privateKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const x = jwk.x as string;
    const kid = jwkThumbprint(x);
    this.unsealed.set(kid, privateKey);
    return { kid, x, sealed: seal(this.sealKey, kid, Buffer.from(jwk.d as string, 'base64url')), current: true, createdAt: this.clock.now().toISOString(), createdBy: by, retiredAt: null, retiredBy: null };
  }

  /** The current key, made on first use (of two nodes making it at once, one wins and both use it). */
  async current(): Promise<SigningKeyRecord> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await this.control.signingKeys.current();
      if (found) return found;
      const fresh = this.newKey('platform');
      if (await this.control.signingKeys.rotate(fresh, null)) return fresh;
    }
    throw unavailable('the signing key could not be created; retry');
  }

  async currentKeyId(): Promise<string> {
    return (await this.current()).kid;
  }

  private privateKey(k: SigningKeyRecord): KeyObject {
    const cached = this.unsealed.get(k.kid);
    if (cached) return cached;
    let seed: Buffer;
    try {
      seed = unseal(this.sealKey, k.kid, k.sealed);
    } catch {
      // The key-hash secret changed since the key was made: nothing can sign with it any more.
      throw unavailable('the current signing key cannot be unsealed (the key-hash secret changed?): rotate the signing key (POST /signing-keys/rotate)', 60);
    }
    const key = privateKeyFromSeed(seed);
    if (publicX(key) !== k.x) throw unavailable('the current signing key does not match its published public key: rotate the signing key', 60);
    this.unsealed.set(k.kid, key);
    return key;
  }

  /** Signs canonical bytes under `domain` with the current key `kid`; KeyRotatedError when `kid` is no longer current. */
  async sign(domain: string, canonical: string, kid: string): Promise<SignatureResult> {
    const k = await this.current();
    if (k.kid !== kid) throw new KeyRotatedError(`signing key ${kid} is no longer current`);
    const digest = sha256(canonical);
    return { kid, sha256: digest.toString('hex'), signature: ed25519Sign(this.privateKey(k), signingInput(domain, digest)) };
  }

  /** Checks an Ed25519 signature over `ASCII(domain) || 0x00 || digest` with the published key `kid`. */
  async verify(domain: string, digest: Uint8Array, signature: string, kid: string): Promise<boolean> {
    const k = await this.control.signingKeys.find(kid);
    return k !== undefined && ed25519Verify(k.x, signingInput(domain, digest), signature);
  }

  /** The JWK Set: every key, current and retired, oldest first (retired keys stay published). */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    await this.current();
    return { keys: (await this.control.signingKeys.all()).map(jwkOf) };
  }

  async list(): Promise<SigningKeyRecord[]> {
    await this.current();
    return this.control.signingKeys.all();
  }

  /**
   * An owner or admin of the service's own organization (the one made at first start) only: the key signs
   * for every organization of the service. A new current key; the old one is retired and stays published.
   */
  async rotate(caller: Principal): Promise<{ current: SigningKeyRecord; retired: SigningKeyRecord }> {
    const init = await this.control.organizations.getMeta(INITIALIZED);
    const home = init ? (JSON.parse(init) as { org_id?: string }).org_id : undefined;
    if (caller.orgId !== home) throw permissionDenied("the signing key belongs to the service: only the owners and admins of the service's first organization rotate it");
    const role = await this.roleOf(caller);
    if (role !== 'owner' && role !== 'admin') throw permissionDenied('rotating the signing key needs the owner or admin role');
    const by = principalRef(caller);
    for (let attempt = 0; attempt < 3; attempt++) {
      const old = await this.current();
      const at = this.clock.now().toISOString();
      const fresh = this.newKey(by);
      // A lost race rolls back (the retire and the insert are one change).
      const done = await this.control
        .transaction(async (tx) => {
          if (!(await tx.signingKeys.rotate(fresh, { kid: old.kid, at, by }))) throw new KeyRotatedError('lost a concurrent rotation');
          return true;
        })
        .catch((e) => {
          if (e instanceof KeyRotatedError) return false;
          throw e;
        });
      if (done) return { current: fresh, retired: { ...old, current: false, retiredAt: at, retiredBy: by } };
      this.unsealed.delete(fresh.kid);
    }
    throw unavailable('the signing key is being rotated by someone else; retry');
  }
}
