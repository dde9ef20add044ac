/** Records of content erasures and their store (adapter: storage/control/content-erasures-store.ts). */
import type { ContentClass } from '../content/content-keys.js';

export type ErasureSubjectKind = 'session_key' | 'trace_id' | 'enduser_id';

export interface EraseScope {
  projectId: string;
  classes: readonly ContentClass[];
  /** Only rows that started (spans), happened (events) or were stamped (logs) before this instant. */
  beforeUs?: number;
  subject?: { kind: ErasureSubjectKind; id: string };
}

export interface EraseCounts {
  /** Rows rewritten. */
  spans: number;
  spanEvents: number;
  logs: number;
  /** Attributes removed in all. */
  attributes: number;
  /** Log bodies removed (their rows are counted in `logs` too). */
  bodies: number;
}

/** Erasure of recorded content in the telemetry store (each engine has its own). */
export interface TelemetryContentEraser {
  /** Whether any row in scope may hold content of the classes (a cheap test; true may be a false positive). */
  mayHaveContent(scope: EraseScope): Promise<boolean>;
  erase(scope: EraseScope): Promise<EraseCounts>;
}

export const ERASURE_SUBJECT_KINDS = ['session_key', 'trace_id', 'enduser_id'] as const satisfies readonly ErasureSubjectKind[];

export interface ErasureCounts {
  spans: number;
  spanEvents: number;
  logs: number;
  attributes: number;
  /** Log bodies removed; absent in erasures recorded before bodies were erased (none were). */
  bodies?: number;
}

export interface ErasureRecord {
  /** Also the action id of its receipt. */
  id: string;
  orgId: string;
  projectId: string;
  kind: 'subject' | 'retention';
  subjectKind: ErasureSubjectKind | null;
  subjectId: string | null;
  contentClasses: ContentClass[];
  /** Retention: content older than this instant was erased. */
  beforeAt: string | null;
  reason: string | null;
  /** Bounded principal reference (`user:…`, `api_key:…`, `platform:content_retention`). */
  requestedBy: string;
  requestId: string | null;
  status: 'running' | 'completed' | 'failed';
  counts: ErasureCounts | null;
  detailCode: string | null;
  createdAt: string;
  completedAt: string | null;
}

export interface ErasureStore {
  /** False when the request id is taken in the organization. */
  insert(r: ErasureRecord): Promise<boolean>;
  finish(id: string, f: { status: 'completed' | 'failed'; counts: ErasureCounts | null; detailCode: string | null; completedAt: string }): Promise<void>;
  find(id: string): Promise<ErasureRecord | undefined>;
  findByRequest(orgId: string, requestId: string): Promise<ErasureRecord | undefined>;
  /** Newest first by (created_at, id). */
  list(projectId: string, opts: { kind?: ErasureRecord['kind']; after?: { createdAt: string; id: string }; limit: number }): Promise<ErasureRecord[]>;
}
