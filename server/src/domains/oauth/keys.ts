/**
 * The authorization server's signing keys and cookie keys. They are generated on the first start
 * and kept in the control store (svc_meta), so a restart or a second API node uses the same keys:
 * tokens, ID tokens and signed cookies issued before stay valid.
 */
import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { OrganizationStore } from '../organizations/store.js';

export const OAUTH_KEYS_META = 'oauth_keys';

export interface OAuthKeys {
  /** Private JWKs; the library publishes only their public parts at /oauth/jwks. */
  jwks: { keys: JWK[] };
  /** Keygrip keys signing the library's cookies; the first signs, all verify. */
  cookieKeys: string[];
}

async function signingKey(alg: 'ES256'): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}

async function generate(): Promise<OAuthKeys> {
  // One ES256 key: fast to make and small; clients are told to expect it (clientDefaults in provider.ts).
  return { jwks: { keys: [await signingKey('ES256')] }, cookieKeys: [randomBytes(32).toString('base64url')] };
}

export async function loadOrCreateKeys(meta: Pick<OrganizationStore, 'getMeta' | 'setMeta'>): Promise<OAuthKeys> {
  const stored = await meta.getMeta(OAUTH_KEYS_META);
  if (stored) return JSON.parse(stored) as OAuthKeys;
  const fresh = await generate();
  try {
    await meta.setMeta(OAUTH_KEYS_META, JSON.stringify(fresh));
    return fresh;
  } catch (e) {
    // Another node stored its keys first (the key is unique): use those.
    const theirs = await meta.getMeta(OAUTH_KEYS_META);
    if (theirs) return JSON.parse(theirs) as OAuthKeys;
    throw e;
  }
}
