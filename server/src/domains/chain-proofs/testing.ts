/**
 * Test fakes of the two ports the chain proofs build on: an in-memory receipt chain (entries linked as the
 * chain source describes them, with a verify that recomputes every digest and link) and an Ed25519 signer
 * over node:crypto with its JWK Set. Tests only.
 */
import { generateKeyPairSync, sign as edSign, type KeyObject } from 'node:crypto';
import { canonicalJson, sha256, signingInput } from '../signing/byte-contract.js';
import type { ArtifactSigner, SignatureResult } from '../signing/signer.js';
import { ACTIONS_CHAIN_ID, type ChainEntry, type ChainVerification, type ReceiptChainSource } from '../receipts/chain-source.js';

const hex = (s: string) => sha256(s).toString('hex');

export class FakeChain implements ReceiptChainSource {
  readonly chains = new Map<string, ChainEntry[]>();

  /** Appends n entries to the project's `actions` chain (opening it). */
  append(projectId: string, n: number, authority: ChainEntry['authority'] = 'RECEIPT_AUTHORITY_MEDIATED'): ChainEntry[] {
    const chain = this.chains.get(projectId) ?? [];
    this.chains.set(projectId, chain);
    for (let i = 0; i < n; i++) {
      const seq = chain.length;
      const prev = chain.at(-1)?.entrySha256 ?? '';
      const canonical = canonicalJson({ action_id: `act-${seq}`, authority, prev_entry_sha256: prev, seq, state: 'RECEIPT_STATE_EXECUTED' });
      chain.push({ seq, canonical, entrySha256: hex(canonical), prevEntrySha256: prev, authority });
    }
    return chain;
  }

  /** Replaces entry `seq` with other content, relinking everything after it (a rewrite that still verifies). */
  rewrite(projectId: string, seq: number): void {
    const chain = this.chains.get(projectId)!;
    const rest = chain.splice(seq);
    for (const e of rest) {
      const prev = chain.at(-1)?.entrySha256 ?? '';
      const body = { ...JSON.parse(e.canonical), prev_entry_sha256: prev, ...(e.seq === seq ? { state: 'RECEIPT_STATE_DENIED' } : {}) };
      const canonical = canonicalJson(body);
      chain.push({ ...e, canonical, entrySha256: hex(canonical), prevEntrySha256: prev });
    }
  }

  async size(projectId: string, chainId: string) {
    return chainId === ACTIONS_CHAIN_ID && this.chains.has(projectId) ? this.chains.get(projectId)!.length : null;
  }

  async entries(projectId: string, chainId: string, fromSeq: number, toSeq: number) {
    if (chainId !== ACTIONS_CHAIN_ID) return [];
    return (this.chains.get(projectId) ?? []).filter((e) => e.seq >= fromSeq && e.seq < toSeq).map((e) => ({ ...e }));
  }

  async verify(projectId: string, chainId: string): Promise<ChainVerification | null> {
    if (chainId !== ACTIONS_CHAIN_ID || !this.chains.has(projectId)) return null;
    const chain = this.chains.get(projectId)!;
    let prev = '';
    let fault: { seq: number; detail: string } | null = null;
    for (const [i, e] of chain.entries()) {
      const detail = e.seq !== i ? 'sequence_gap' : hex(e.canonical) !== e.entrySha256 ? 'digest_mismatch' : e.prevEntrySha256 !== prev ? 'broken_link' : '';
      if (detail) {
        fault = { seq: i, detail };
        break;
      }
      prev = e.entrySha256;
    }
    const mediated = chain.filter((e) => e.authority === 'RECEIPT_AUTHORITY_MEDIATED').length;
    return {
      valid: fault === null,
      entry_count: chain.length,
      mediated_entry_count: mediated,
      reported_entry_count: chain.length - mediated,
      first_invalid_seq: fault?.seq ?? null,
      last_entry_sha256: chain.at(-1)?.entrySha256 ?? '',
      detail: fault?.detail ?? '',
    };
  }
}

/** An Ed25519 signer with one key (`kid`), and its JWK Set as the service publishes it. */
export class TestSigner implements ArtifactSigner {
  private readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;

  constructor(readonly kid = 'test-key-1') {
    const pair = generateKeyPairSync('ed25519');
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  async currentKeyId() {
    return this.kid;
  }

  async sign(domain: string, canonical: string, kid: string): Promise<SignatureResult> {
    if (kid !== this.kid) throw new Error(`not the current key: ${kid}`);
    const digest = sha256(canonical);
    return { kid, sha256: digest.toString('hex'), signature: edSign(null, signingInput(domain, digest), this.privateKey).toString('base64url') };
  }

  jwks() {
    const { x } = this.publicKey.export({ format: 'jwk' }) as { x: string };
    return { keys: [{ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: this.kid, x }] };
  }
}
