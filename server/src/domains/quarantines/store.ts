/** Storage port of containments and their per-credential outcomes (an approval's receipt entries and authority edge go through domains/receipts). */
import type { CredentialEffect, EnforcementState, QuarantineAction, QuarantineStatus, TargetKind } from './model.js';

export interface Actor {
  userId: string | null;
  apiKeyId: string | null;
}

export interface QuarantineRecord {
  id: string;
  orgId: string;
  projectId: string;
  status: QuarantineStatus;
  action: QuarantineAction;
  targetKind: TargetKind;
  target: string;
  reason: string;
  environment: string | null;
  requestId: string | null;
  requestedBy: Actor;
  requestedAt: string;
  approvedBy: Actor | null;
  approvedAt: string | null;
  liftedBy: Actor | null;
  liftedAt: string | null;
  liftReason: string | null;
  withdrawnBy: Actor | null;
  withdrawnAt: string | null;
  withdrawReason: string | null;
  unenforceableSightings: number;
}

/** A new containment as requested: nobody has approved, lifted or withdrawn it yet. */
export function newQuarantine(
  r: Pick<QuarantineRecord, 'id' | 'orgId' | 'projectId' | 'status' | 'action' | 'targetKind' | 'target' | 'reason' | 'environment' | 'requestId' | 'requestedBy' | 'requestedAt'>,
): QuarantineRecord {
  return {
    ...r,
    approvedBy: null,
    approvedAt: null,
    liftedBy: null,
    liftedAt: null,
    liftReason: null,
    withdrawnBy: null,
    withdrawnAt: null,
    withdrawReason: null,
    unenforceableSightings: 0,
  };
}

export interface CredentialOutcome {
  quarantineId: string;
  apiKeyId: string;
  effect: CredentialEffect;
  state: EnforcementState;
  detailCode: string | null;
  enforcedAt: string;
  releasedAt: string | null;
}

export interface QuarantineListQuery {
  orgId: string;
  /** A project-bound caller sees its project only. */
  projectId?: string;
  statuses?: QuarantineStatus[];
  after?: { requestedAt: string; id: string };
  limit: number;
}

export type Transition =
  | { to: 'active'; by: Actor; at: string }
  | { to: 'lifted'; by: Actor; at: string; reason: string }
  | { to: 'withdrawn'; by: Actor; at: string; reason: string };

export interface QuarantineStore {
  /**
   * Inserts a pending containment; `target_taken` when another open one holds the same agent (`agent`:
   * the key of what is contained, so a containment of an asset and one of its observation keys collide;
   * the target itself when absent), `request_id_taken` when the request id is.
   */
  insert(rec: QuarantineRecord, agent?: string): Promise<'inserted' | 'target_taken' | 'request_id_taken'>;
  find(orgId: string, id: string): Promise<QuarantineRecord | undefined>;
  findByRequestId(orgId: string, requestId: string): Promise<QuarantineRecord | undefined>;
  /** Newest first; up to `limit + 1` rows. */
  list(q: QuarantineListQuery): Promise<QuarantineRecord[]>;
  /** Moves `from` -> the transition's state; false when the containment was no longer in `from` (a concurrent move won). */
  transition(id: string, from: QuarantineStatus, t: Transition): Promise<boolean>;
  setUnenforceableSightings(id: string, n: number): Promise<void>;
  /** The project's open (pending or active) containments. */
  openOfProject(projectId: string): Promise<QuarantineRecord[]>;
  /** The project's active `kill` containments (the ingest path asks, so it is one indexed read). */
  activeKills(projectId: string): Promise<QuarantineRecord[]>;
  putOutcome(o: CredentialOutcome): Promise<void>;
  outcomes(quarantineIds: string[]): Promise<CredentialOutcome[]>;
  /** Releases this containment's holds; returns the keys released. */
  releaseHolds(quarantineId: string, at: string): Promise<string[]>;
  /** The other open (unreleased) freeze holds on these keys, by key. */
  otherHolds(apiKeyIds: string[], exceptQuarantineId: string): Promise<Set<string>>;
}
