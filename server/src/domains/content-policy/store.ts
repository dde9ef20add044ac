/** Records of content policies, retention windows and the refusal audit, and their store (adapter: storage/control/content-policies-store.ts). */
import type { Boundary, ContentClass, Decider, Decision, Grid } from './model.js';

/** Who changed a policy: taken from the credential. */
export interface Actor {
  userId: string | null;
  apiKeyId: string | null;
}

export interface PolicyRecord {
  projectId: string;
  orgId: string;
  grid: Grid;
  /** 1 on the first write, +1 on every change. */
  version: number;
  updatedBy: Actor;
  updatedAt: string;
}

/** A project of the policy list: its stored policy, or none (answered as the fully denied grid). */
export interface ListedPolicy {
  projectId: string;
  policy: PolicyRecord | null;
}

export interface RetentionWindow {
  contentClass: ContentClass;
  retentionDays: number;
  updatedBy: Actor;
  updatedAt: string;
}

/** One aggregated row of the refusal audit: how many values were refused in one minute. */
export interface RefusalCount {
  projectId: string;
  /** The minute, RFC 3339 UTC (`2026-01-01T12:34:00.000Z`). */
  minute: string;
  contentClass: ContentClass;
  boundary: Boundary;
  decider: Decider;
  /** What was refused: `deny` (nothing given) or `allow_metadata` (the bytes). */
  decision: Exclude<Decision, 'allow'>;
  count: number;
}

export interface RefusalQuery {
  projectId: string;
  contentClass?: ContentClass;
  boundary?: Boundary;
  /** Closed minute bounds (RFC 3339, as stored). */
  from?: string;
  to?: string;
  /** Newest first by (minute, key); continue after this one. */
  after?: { minute: string; key: string };
  limit: number;
}

/** Conditional replace: `expectedVersion` undefined writes unconditionally. */
export type PutResult = { ok: true; record: PolicyRecord } | { ok: false; currentVersion: number };

export interface ContentPolicyStore {
  find(projectId: string): Promise<PolicyRecord | undefined>;
  /**
   * Replaces the grid of the project, version + 1 (1 when there was none). With `expectedVersion`
   * (0: no policy yet) the write happens only at that version, atomically.
   */
  put(input: { projectId: string; orgId: string; grid: Grid; by: Actor; at: string; expectedVersion?: number }): Promise<PutResult>;
  /** Live projects of the organization (only `onlyProjectId` when given), newest-changed first, then project id (desc); projects without a policy last. */
  list(orgId: string, opts: { onlyProjectId?: string; after?: { updatedAt: string; projectId: string }; limit: number }): Promise<ListedPolicy[]>;
  retention(projectId: string): Promise<RetentionWindow[]>;
  /** Replaces every window of the project. */
  putRetention(projectId: string, orgId: string, windows: { contentClass: ContentClass; retentionDays: number }[], by: Actor, at: string): Promise<void>;
  /** Adds counts to the audit (summing rows of the same minute, class, boundary, decider and decision). */
  addRefusals(rows: RefusalCount[]): Promise<void>;
  refusals(q: RefusalQuery): Promise<RefusalCount[]>;
  /** A deleted project's policy, windows and audit go with it. */
  forgetProject(projectId: string): Promise<void>;
}

/** The key of a refusal row within its minute, for ordering and cursors. */
export const refusalKey = (r: Pick<RefusalCount, 'contentClass' | 'boundary' | 'decider' | 'decision'>) => `${r.contentClass}|${r.boundary}|${r.decider}|${r.decision}`;
