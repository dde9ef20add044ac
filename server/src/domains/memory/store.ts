/**
 * Storage ports of memory labels (docs/memory.md): the label revisions in the control store, and the read
 * of recorded memory operations in the telemetry store. Times of labels are ISO 8601 text (UTC,
 * milliseconds); times of recorded operations are microseconds since the Unix epoch.
 */
import { MEMORY_TRUST_LABELS } from '../agent-runs/model.js';

export { MEMORY_TRUST_LABELS };
export type MemoryTrustLabel = (typeof MEMORY_TRUST_LABELS)[number];
export const MEMORY_LABEL_STATES = ['MEMORY_LABEL_STATE_LABELED', 'MEMORY_LABEL_STATE_UNLABELED'] as const;
export type MemoryLabelState = (typeof MEMORY_LABEL_STATES)[number];

/** One revision of an item's label. Revisions of an item are 1, 2, ... and never change once written. */
export interface MemoryLabelRecord {
  id: string;
  orgId: string;
  projectId: string;
  itemKey: string;
  revision: number;
  label: MemoryTrustLabel;
  reason: string;
  /** `user:<id>` or `api_key:<id>`, from the credential. */
  labeledBy: string;
  /** Strictly increases with the revision within one item. */
  labeledAt: string;
  /** This write opened a POISONED_MEMORY_ITEM review signal. */
  signalOpened: boolean;
  /** This write resolved one. */
  signalResolved: boolean;
}

/** What a label write needs to know of the item's history, taken under the item's write lock. */
export interface MemoryItemClaim {
  /** The revision this write takes (1 for the first label of the item). */
  revision: number;
  /** `labeled_at` of the previous revision (null for the first). */
  previousLabeledAt: string | null;
  /** Revision of the newest `trusted` label before this one; 0 when none. Names the signal episode. */
  trustedRevision: number;
}

export interface MemoryLabelFilter {
  projectId: string;
  itemKey?: string;
  /** OR within. */
  labels?: string[];
}

/** Labels are listed newest first by (labeled_at desc, id desc). */
export interface MemoryLabelPosition {
  labeledAt: string;
  id: string;
}

export interface MemoryLabelStore {
  /**
   * Takes the next revision of the item, creating its head row on the first label. Two writers of the same
   * item are serialized here (the head row is locked until the transaction ends), so concurrent writes
   * land as distinct, consecutive revisions. Call inside a transaction.
   */
  claim(orgId: string, projectId: string, itemKey: string): Promise<MemoryItemClaim>;
  /** Appends the revision and moves the head (its `labeled_at`, and its trusted revision for a `trusted` label). */
  append(r: MemoryLabelRecord): Promise<void>;
  /** The highest revision of the item; undefined when nobody labelled it. */
  current(projectId: string, itemKey: string): Promise<MemoryLabelRecord | undefined>;
  /** Every revision of the item, oldest first. */
  history(projectId: string, itemKey: string): Promise<MemoryLabelRecord[]>;
  /** Up to `limit + 1` revisions after the position, newest first. */
  list(filter: MemoryLabelFilter, opts: { after?: MemoryLabelPosition; limit: number }): Promise<MemoryLabelRecord[]>;
}

/** One recorded memory operation on the item (a memory step that declared the item's id). */
export interface MemoryOperationRow {
  traceId: string;
  spanId: string;
  startUs: number;
  canonicalOperation: string;
  /** `gen_ai.data_source.id` of the step. */
  store: string | null;
  provenance: string | null;
  declaredTrustLabel: string | null;
  /** Of the step's run (the root's, else the first span of the trace that has one). */
  sessionKey: string | null;
  turnId: string | null;
  /** Whether the trace is an agent run (it has a root); false leaves `run_id` empty. */
  inRun: boolean;
  /** The agent of the step: its own observation key, else the run root's. */
  observationKey: string | null;
}

export interface MemoryOperations {
  /** The first `limit + 1` operations, oldest first by (start, trace id, span id). */
  rows: MemoryOperationRow[];
  /** Distinct non-empty session keys over every operation of the item, not only the rows returned. */
  distinctSessions: number;
}

/** The read of recorded memory operations (storage/telemetry/duckdb/memory-query.ts). Throws when the store cannot be read. */
export interface MemoryOperationsReader {
  /** `notBeforeUs` (retention, docs/retention.md): operations whose step started before it are left out. */
  operations(projectId: string, itemKey: string, limit: number, notBeforeUs?: number): Promise<MemoryOperations>;
  /**
   * The agent (observation key) that recorded the item: of its earliest write operation (create, update,
   * upsert), else of its earliest operation of any kind; null when no operation names an agent.
   */
  recordingAgent(projectId: string, itemKey: string, notBeforeUs?: number): Promise<string | null>;
}
