/**
 * Checkpoints, signed tree heads, Merkle proofs and the export of a receipt chain (docs/receipt-chains.md).
 *
 * Nothing signed comes from the client: the chain is read from the chain source, verified first (an
 * invalid chain is never signed), and signed with the current key. Proofs are computed from stored leaf
 * hashes: the cache is filled from the chain as it grows (each new entry's digest and link checked
 * against the stored last one), so a proof reads 32-byte hashes instead of rehashing canonical bytes. A
 * proof still makes one O(n) pass over the stored hashes of the tree; that is the present cost.
 */
import { ApiError, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { ProjectRecord } from '../projects/store.js';
import type { ChainEntry, ChainVerification, ReceiptChainSource } from '../receipts/chain-source.js';
import { nanoTimestamp, sha256 } from '../signing/byte-contract.js';
import type { ArtifactSigner } from '../signing/signer.js';
import { ARTIFACT, canonicalForm, checkpointMembers, treeHeadMembers, type ArtifactScope } from './artifacts.js';
import { consistencyProof, inclusionPath, leafHash, treeRoot } from './merkle.js';
import type { ArtifactKind, ChainArtifactRecord, LeafRecord } from './store.js';

export const READ_SCOPE = 'agents:read';
/** Entries read from the chain source per step while filling the leaf-hash cache. */
const FILL_PAGE = 1000;
export const ENTRY_LIMIT = { default: 500, max: 1000 };
export const ARTIFACT_LIMIT = { default: 100, max: 200 };

/** Why a chain is not signed or proved: 409 with `details.reason` (and what the verification found). */
export type ChainFault = 'chain_invalid' | 'chain_empty' | 'chain_truncated' | 'chain_rewritten';

function chainConflict(reason: ChainFault, message: string, details: Record<string, unknown> = {}) {
  return new ApiError(409, 'conflict', message, { reason, ...details });
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

export interface InclusionProof {
  chain_id: string;
  seq: number;
  tree_size: number;
  entry_sha256: string;
  leaf_hash: string;
  audit_path: string[];
  root_sha256: string;
}

export interface ConsistencyProof {
  chain_id: string;
  first: number;
  second: number;
  first_root_sha256: string;
  second_root_sha256: string;
  proof: string[];
}

export interface EntriesPage {
  chain_id: string;
  entry_count: number;
  entries: ChainEntry[];
  next_from_seq: number | null;
}

export class ChainProofService {
  constructor(
    private readonly control: ControlStore,
    private readonly source: ReceiptChainSource,
    private readonly signer: ArtifactSigner,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Signs a checkpoint at the chain's last entry (42 entries: seq 41). */
  async checkpoint(p: Principal, project: ProjectRecord, chainId: string): Promise<ChainArtifactRecord> {
    const v = await this.verified(project.id, chainId);
    await this.fill(project.id, chainId, v.entry_count, v.entry_count);
    const seq = v.entry_count - 1;
    return this.sign(p, project, chainId, 'checkpoint', seq, (common) => checkpointMembers({ ...common, seq, entrySha256: v.last_entry_sha256 }));
  }

  /** Signs the RFC 6962 tree head (size, root) over the whole chain. */
  async treeHead(p: Principal, project: ProjectRecord, chainId: string): Promise<ChainArtifactRecord> {
    const v = await this.verified(project.id, chainId);
    const hashes = await this.fill(project.id, chainId, v.entry_count, v.entry_count);
    const rootSha256 = hex(treeRoot(hashes));
    const treeSize = v.entry_count;
    return this.sign(p, project, chainId, 'tree_head', treeSize, (common) => treeHeadMembers({ ...common, treeSize, rootSha256 }));
  }

  async get(project: ProjectRecord, chainId: string, kind: ArtifactKind, id: string): Promise<ChainArtifactRecord> {
    const r = await this.control.chainArtifacts.find(project.id, chainId, kind, id);
    if (!r) throw notFound(kind === 'checkpoint' ? 'checkpoint' : 'tree head');
    return r;
  }

  /** Newest first; `limit + 1` rows for the page builder. A never-opened chain is 404. */
  async list(project: ProjectRecord, chainId: string, kind: ArtifactKind, limit: number, after?: { createdAt: string; id: string }) {
    await this.size(project.id, chainId);
    return this.control.chainArtifacts.list({ projectId: project.id, chainId, kind, limit, after });
  }

  /** The audit path of entry `seq` in the tree of the first `treeSize` entries (seq < treeSize <= chain size). */
  async inclusion(project: ProjectRecord, chainId: string, seq: number, treeSize: number): Promise<InclusionProof> {
    const size = await this.size(project.id, chainId);
    checkSize('tree_size', treeSize, size);
    if (seq >= treeSize) throw badSize(`seq must be below tree_size (${treeSize})`);
    const hashes = await this.fill(project.id, chainId, size, treeSize);
    const [entry] = await this.source.entries(project.id, chainId, seq, seq + 1);
    return {
      chain_id: chainId,
      seq,
      tree_size: treeSize,
      entry_sha256: entry?.entrySha256 ?? '',
      leaf_hash: hex(hashes[seq]),
      audit_path: inclusionPath(seq, hashes).map(hex),
      root_sha256: hex(treeRoot(hashes)),
    };
  }

  /** The RFC 6962 consistency proof between the trees of the first `first` and `second` entries (1 <= first <= second <= chain size). */
  async consistency(project: ProjectRecord, chainId: string, first: number, second: number): Promise<ConsistencyProof> {
    const size = await this.size(project.id, chainId);
    checkSize('second', second, size);
    if (first < 1) throw badSize('first must be at least 1');
    if (first > second) throw badSize(`first must not be above second (${second})`);
    const hashes = await this.fill(project.id, chainId, size, second);
    return {
      chain_id: chainId,
      first,
      second,
      first_root_sha256: hex(treeRoot(hashes.slice(0, first))),
      second_root_sha256: hex(treeRoot(hashes)),
      proof: consistencyProof(first, hashes).map(hex),
    };
  }

  /** A page of entries with their canonical bytes, from `fromSeq` (at most the chain's size). */
  async entries(project: ProjectRecord, chainId: string, fromSeq: number, limit: number): Promise<EntriesPage> {
    const size = await this.size(project.id, chainId);
    if (fromSeq > size) throw badSize(`from_seq is beyond the end of the chain (${size} entries)`);
    const to = Math.min(size, fromSeq + limit);
    const entries = await this.source.entries(project.id, chainId, fromSeq, to);
    return { chain_id: chainId, entry_count: size, entries, next_from_seq: to < size ? to : null };
  }

  private async size(projectId: string, chainId: string): Promise<number> {
    const n = await this.source.size(projectId, chainId);
    if (n === null) throw notFound('receipt chain');
    return n;
  }

  /** The chain's verification; 404 never opened, 409 invalid or empty. */
  private async verified(projectId: string, chainId: string): Promise<ChainVerification> {
    const v = await this.source.verify(projectId, chainId);
    if (v === null) throw notFound('receipt chain');
    if (!v.valid)
      throw chainConflict('chain_invalid', `the chain does not verify (${v.detail || 'invalid'} at seq ${v.first_invalid_seq}); it is not signed`, {
        detail: v.detail,
        first_invalid_seq: v.first_invalid_seq,
      });
    if (v.entry_count === 0) throw chainConflict('chain_empty', 'the chain has no entries yet');
    return v;
  }

  /**
   * Brings the leaf-hash cache up to `need` entries of a chain of `size` and returns the first `need`
   * leaf hashes. Stored leaves beyond the chain's size mean entries were removed from its end; a stored
   * last digest the chain no longer has means it was rewritten: both are 409, and nothing is proved.
   */
  private async fill(projectId: string, chainId: string, size: number, need: number): Promise<Buffer[]> {
    const store = this.control.chainArtifacts;
    const { count, last } = await store.lastLeaf(projectId, chainId);
    if (count > size)
      throw chainConflict('chain_truncated', `the chain has ${size} entries but ${count} were seen before: entries were removed from its end`, {
        entry_count: size,
        entries_seen: count,
      });
    let prev = last;
    if (last) {
      const [e] = await this.source.entries(projectId, chainId, last.seq, last.seq + 1);
      if (!e || e.entrySha256 !== last.entrySha256)
        throw chainConflict('chain_rewritten', `entry ${last.seq} is not the entry seen before: the chain was rewritten`, { seq: last.seq });
    }
    for (let from = count; from < need; from += FILL_PAGE) {
      const batch = await this.source.entries(projectId, chainId, from, Math.min(need, from + FILL_PAGE));
      const leaves: LeafRecord[] = [];
      for (const [i, e] of batch.entries()) {
        const fault = linkFault(e, from + i, prev);
        if (fault) throw chainConflict('chain_invalid', `the chain does not verify (${fault} at seq ${from + i})`, { detail: fault, first_invalid_seq: from + i });
        prev = { seq: e.seq, entrySha256: e.entrySha256, leafHash: hex(leafHash(e.canonical)) };
        leaves.push(prev);
      }
      if (batch.length !== Math.min(need, from + FILL_PAGE) - from)
        throw chainConflict('chain_invalid', `the chain does not verify (sequence_gap at seq ${from + batch.length})`, {
          detail: 'sequence_gap',
          first_invalid_seq: from + batch.length,
        });
      await store.appendLeaves(projectId, chainId, leaves);
    }
    return (await store.leafHashes(projectId, chainId, need)).map((h) => Buffer.from(h, 'hex'));
  }

  private async sign(
    p: Principal,
    project: ProjectRecord,
    chainId: string,
    kind: ArtifactKind,
    position: number,
    members: (common: { chainId: string; generatedAt: string; scope: ArtifactScope; kid: string }) => Parameters<typeof canonicalForm>[0],
  ): Promise<ChainArtifactRecord> {
    const now = this.clock.now();
    const kid = await this.signer.currentKeyId();
    const scope: ArtifactScope = { environment: '', org_id: project.orgId, project_id: project.id };
    const canonical = canonicalForm(members({ chainId, generatedAt: nanoTimestamp(now), scope, kid }));
    const signed = await this.signer.sign(ARTIFACT[kind].domain, canonical, kid);
    const record: ChainArtifactRecord = {
      id: this.ids.uuid(),
      orgId: project.orgId,
      projectId: project.id,
      chainId,
      kind,
      position,
      canonicalForm: canonical,
      sha256: signed.sha256,
      signature: signed.signature,
      signingKeyId: signed.kid,
      generatedAt: nanoTimestamp(now),
      createdAt: now.toISOString(),
      createdBy: { userId: p.userId, apiKeyId: p.keyId },
    };
    await this.control.chainArtifacts.insert(record);
    return record;
  }
}

/** A new entry's own digest, its sequence number and its link to the previous one (null when they hold). */
function linkFault(e: ChainEntry, seq: number, prev: LeafRecord | undefined): string | null {
  if (e.seq !== seq) return 'sequence_gap';
  if (sha256(e.canonical).toString('hex') !== e.entrySha256) return 'digest_mismatch';
  if (e.prevEntrySha256 !== (prev?.entrySha256 ?? '')) return 'broken_link';
  return null;
}

const badSize = (message: string) => new ApiError(400, 'invalid_request', message);

function checkSize(field: string, n: number, size: number) {
  if (n < 1) throw badSize(`${field} must be at least 1`);
  if (n > size) throw badSize(`${field} is above the chain's size (${size} entries)`);
}
