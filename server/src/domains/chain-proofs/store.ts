/** Storage port of signed receipt-chain artifacts (checkpoints, tree heads) and of the chain's Merkle leaf hashes. */

export const ARTIFACT_KINDS = ['checkpoint', 'tree_head'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

export interface ChainArtifactRecord {
  id: string;
  orgId: string;
  projectId: string;
  chainId: string;
  kind: ArtifactKind;
  /** The covered entry's seq (checkpoint) or the tree size (tree head). */
  position: number;
  /** The exact signed bytes (RFC 8785 JSON). */
  canonicalForm: string;
  /** SHA-256 of the canonical form, lowercase hex. */
  sha256: string;
  /** Unpadded base64url Ed25519 signature. */
  signature: string;
  signingKeyId: string;
  generatedAt: string;
  createdAt: string;
  createdBy: { userId: string | null; apiKeyId: string | null };
}

export interface LeafRecord {
  seq: number;
  entrySha256: string;
  /** RFC 6962 leaf hash of the entry's canonical bytes, lowercase hex. */
  leafHash: string;
}

export interface ArtifactListQuery {
  projectId: string;
  chainId: string;
  kind: ArtifactKind;
  after?: { createdAt: string; id: string };
  limit: number;
}

export interface ChainArtifactStore {
  insert(r: ChainArtifactRecord): Promise<void>;
  /** One artifact of this project, chain and kind (another project's is undefined, as a missing one). */
  find(projectId: string, chainId: string, kind: ArtifactKind, id: string): Promise<ChainArtifactRecord | undefined>;
  /** Newest first (created_at, then id, descending); up to `limit + 1` rows. */
  list(q: ArtifactListQuery): Promise<ChainArtifactRecord[]>;
  /** The number of stored leaf hashes, and the last one. */
  lastLeaf(projectId: string, chainId: string): Promise<{ count: number; last: LeafRecord | undefined }>;
  /** Stores leaf hashes; a seq already stored is left as it is (concurrent fillers agree). */
  appendLeaves(projectId: string, chainId: string, leaves: LeafRecord[]): Promise<void>;
  /** The leaf hashes (hex) of seq 0 .. toSeq-1, in order. */
  leafHashes(projectId: string, chainId: string, toSeq: number): Promise<string[]>;
}
