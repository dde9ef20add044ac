/**
 * The receipt chain as the signing part reads it (checkpoints, signed tree heads, Merkle proofs).
 * Every action-receipt entry of a project, mediated or reported, is appended to the project's chain
 * `actions` in platform order: `seq` counts from 0, each entry's canonical bytes name the previous
 * entry's digest, and `entry_sha256` is the SHA-256 (hex) of the canonical bytes.
 */
export const ACTIONS_CHAIN_ID = 'actions';

export interface ChainEntry {
  seq: number;
  /** The exact bytes hashed (RFC 8785 JSON, UTF-8), including `prev_entry_sha256`. */
  canonical: string;
  /** SHA-256 of `canonical`, lowercase hex. */
  entrySha256: string;
  /** The previous entry's `entrySha256` ('' for seq 0). */
  prevEntrySha256: string;
  authority: 'RECEIPT_AUTHORITY_MEDIATED' | 'RECEIPT_AUTHORITY_REPORTED';
}

/** The answer of `GET /receipt-chains/{chainId}/verify` (field names as served). */
export interface ChainVerification {
  valid: boolean;
  entry_count: number;
  mediated_entry_count: number;
  reported_entry_count: number;
  /** The first entry whose link or digest does not hold; null when valid. */
  first_invalid_seq: number | null;
  /** The digest of the last entry ('' for an empty chain). */
  last_entry_sha256: string;
  /** Short lowercase fault code ('' when valid), e.g. `digest_mismatch`, `broken_link`, `sequence_gap`. */
  detail: string;
}

export interface ReceiptChainSource {
  /** Number of entries; null when the chain was never opened (the project never recorded a receipt). */
  size(projectId: string, chainId: string): Promise<number | null>;
  /** Entries with fromSeq <= seq < toSeq, in seq order. */
  entries(projectId: string, chainId: string, fromSeq: number, toSeq: number): Promise<ChainEntry[]>;
  /** Recomputes every link and digest; null when the chain was never opened. */
  verify(projectId: string, chainId: string): Promise<ChainVerification | null>;
}
