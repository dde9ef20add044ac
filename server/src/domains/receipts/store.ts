/** Storage port of action receipts: entries (chain links), the folded receipts, chain heads and ingest request ids. */
import type { EffectClass, ReceiptAuthority } from './model.js';

/** One transition of an action, as stored (and linked into the project's chain). */
export interface EntryRecord {
  id: string;
  orgId: string;
  projectId: string;
  actionId: string;
  /** Position in the action, from 1. */
  seq: number;
  /** Stored as sent; values outside the enumeration exist only in rows written before the rules. */
  state: string;
  authority: ReceiptAuthority;
  requesterPrincipal: string | null;
  approverPrincipal: string | null;
  /** The credential that reported it (reported entries only). */
  reportedBy: string | null;
  effectClass: EffectClass;
  destructive: boolean;
  policyId: string | null;
  policyVersion: string | null;
  /** Client time, UTC with nine fractional digits. */
  occurredAt: string;
  recordedAt: string;
  subjectKind: string;
  subjectId: string;
  runId: string | null;
  traceId: string | null;
  spanId: string | null;
  tool: string | null;
  purpose: string | null;
  authorityEdgeId: string | null;
  /** The client's own id of the entry (idempotency per action). */
  entryId: string | null;
  chainId: string;
  /** Position in the project's chain, from 0. */
  chainSeq: number;
  prevEntrySha256: string;
  entrySha256: string;
  canonical: string;
}

/** What the fold of an action's entries says (fold.ts). */
export interface ReceiptFold {
  authority: ReceiptAuthority;
  finalState: string;
  remediation: string | null;
  requesterPrincipal: string | null;
  conflictingRequesterPrincipals: string[];
  effectClass: EffectClass;
  destructive: boolean;
  approverPrincipal: string | null;
  approvedAt: string | null;
  policyId: string | null;
  policyVersion: string | null;
  conflictingPolicies: string[];
  malformedPolicyRecords: string[];
  /** The newest client time of its entries (lists are ordered by it). */
  occurredAt: string;
  runId: string | null;
  entryCount: number;
}

/** The fold of an action, kept beside its entries so lists can filter by it. */
export interface ReceiptRecord extends ReceiptFold {
  orgId: string;
  projectId: string;
  actionId: string;
  chainId: string;
  normalizerVersion: number;
  /** Chain position of its newest entry. */
  lastChainSeq: number;
  updatedAt: string;
}

export interface ReceiptFilter {
  projectId: string;
  authorities?: string[];
  finalStates?: string[];
  normalizerVersions?: number[];
  chainId?: string;
  actionId?: string;
  runId?: string;
}

export interface ChainHead {
  size: number;
  lastEntrySha256: string;
}

export interface IngestRequestRecord {
  orgId: string;
  requestId: string;
  principal: string;
  /** The first answer, as sent (JSON). */
  response: string;
  createdAt: string;
}

export interface ReceiptStore {
  /** Opens the chain if needed and locks its head until the transaction ends (appends are serialized per chain). */
  lockChain(orgId: string, projectId: string, chainId: string, at: string): Promise<ChainHead>;
  setChainHead(projectId: string, chainId: string, head: ChainHead): Promise<void>;
  chainHead(projectId: string, chainId: string): Promise<ChainHead | undefined>;
  /** Chain entries with fromSeq <= chainSeq < toSeq, in chain order (at most `limit` when given). */
  chainEntries(projectId: string, chainId: string, fromSeq: number, toSeq: number, limit?: number): Promise<EntryRecord[]>;
  insertEntries(entries: EntryRecord[]): Promise<void>;
  /** Entries of these actions, by action then seq. */
  entriesOf(projectId: string, actionIds: string[]): Promise<EntryRecord[]>;
  putReceipt(r: ReceiptRecord): Promise<void>;
  findReceipt(projectId: string, actionId: string): Promise<ReceiptRecord | undefined>;
  /** Newest client time first (then action id); up to `limit + 1` rows after the position. */
  listReceipts(f: ReceiptFilter, opts: { after?: { occurredAt: string; actionId: string }; limit: number }): Promise<ReceiptRecord[]>;
  /** The receipt holding the newest chain entry among those matching. */
  latestInChain(f: ReceiptFilter): Promise<ReceiptRecord | undefined>;
  findRequest(orgId: string, requestId: string): Promise<IngestRequestRecord | undefined>;
  /** Records the request id and its answer; false when the id is taken already. */
  insertRequest(r: IngestRequestRecord): Promise<boolean>;
}
