/**
 * Storage port of the agent inventory (assets, their observation keys and versions), review signals and
 * the notification outbox (docs/governance.md). Times are ISO 8601 text (UTC, milliseconds).
 */

export const APPROVAL_STATES = ['APPROVAL_STATE_UNREVIEWED', 'APPROVAL_STATE_APPROVED', 'APPROVAL_STATE_REJECTED'] as const;
export const RISK_TIERS = ['RISK_TIER_UNASSESSED', 'RISK_TIER_LOW', 'RISK_TIER_MEDIUM', 'RISK_TIER_HIGH', 'RISK_TIER_CRITICAL'] as const;
export const DATA_CLASSIFICATIONS = [
  'DATA_CLASSIFICATION_UNCLASSIFIED',
  'DATA_CLASSIFICATION_PUBLIC',
  'DATA_CLASSIFICATION_INTERNAL',
  'DATA_CLASSIFICATION_CONFIDENTIAL',
  'DATA_CLASSIFICATION_RESTRICTED',
] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];
export type RiskTier = (typeof RISK_TIERS)[number];
export type DataClassification = (typeof DATA_CLASSIFICATIONS)[number];

/** declared: created by `POST /assets`; discovered: created from a sighting nobody declared (a shadow asset). */
export type AssetOrigin = 'declared' | 'discovered';

export interface AssetRecord {
  id: string;
  orgId: string;
  projectId: string;
  name: string;
  description: string | null;
  origin: AssetOrigin;
  /**
   * Stored null and never written: where an asset was seen is read from the sightings of its keys at each
   * read (AssetService.withEnvironments), so it is never stale.
   */
  environment: string | null;
  approvalState: ApprovalState;
  approverPrincipal: string | null;
  approvalReason: string | null;
  reviewedAt: string | null;
  riskTier: RiskTier;
  dataClassification: DataClassification;
  classifiedBy: string | null;
  classificationReason: string | null;
  classifiedAt: string | null;
  ownerTeam: string | null;
  ownerPrincipal: string | null;
  ownershipSetBy: string | null;
  ownershipSetAt: string | null;
  /** The active quarantine holding the asset, set by the quarantine part (never by a review). */
  quarantineId: string | null;
  /** Increases by one on every write; the versions read returns each. */
  version: number;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** Its observation keys, in code point order. */
  observationKeys: string[];
}

export type AssetChange = 'declared' | 'discovered' | 'review' | 'classification' | 'ownership' | 'quarantine';

export interface AssetVersionRecord {
  assetId: string;
  version: number;
  projectId: string;
  change: AssetChange;
  actor: string | null;
  occurredAt: string;
  snapshot: AssetRecord;
}

export interface AssetFilter {
  projectId: string;
  origin?: AssetOrigin;
  riskTiers?: string[];
  approvalStates?: string[];
  dataClassifications?: string[];
  ownerTeam?: string;
  /** true: neither owner team nor owner principal. */
  unowned?: boolean;
}

/** Assets are listed newest first by (created_at desc, id desc). */
export interface AssetPosition {
  createdAt: string;
  id: string;
}

export const SIGNAL_KINDS = [
  'REVIEW_SIGNAL_KIND_SHADOW_ASSET',
  'REVIEW_SIGNAL_KIND_ABOM_DRIFT',
  'REVIEW_SIGNAL_KIND_CONFIG_UNREGISTERED',
  'REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL',
  'REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM',
  'REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET',
  'REVIEW_SIGNAL_KIND_UNOWNED_ASSET',
  'REVIEW_SIGNAL_KIND_REVOKED_AUTHORITY_EXERCISED',
] as const;
export const SIGNAL_STATUSES = ['REVIEW_SIGNAL_STATUS_OPEN', 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED', 'REVIEW_SIGNAL_STATUS_RESOLVED', 'REVIEW_SIGNAL_STATUS_DISMISSED'] as const;
export const SIGNAL_SEVERITIES = ['REVIEW_SIGNAL_SEVERITY_LOW', 'REVIEW_SIGNAL_SEVERITY_MEDIUM', 'REVIEW_SIGNAL_SEVERITY_HIGH', 'REVIEW_SIGNAL_SEVERITY_CRITICAL'] as const;
export type SignalKind = (typeof SIGNAL_KINDS)[number];
export type SignalStatus = (typeof SIGNAL_STATUSES)[number];
export type SignalSeverity = (typeof SIGNAL_SEVERITIES)[number];
/** Statuses in which a signal is still active (a raise refreshes it; an auto-clear resolves it). */
export const ACTIVE_STATUSES: SignalStatus[] = ['REVIEW_SIGNAL_STATUS_OPEN', 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED'];

export interface SignalRecord {
  id: string;
  orgId: string;
  projectId: string;
  /** `<kind>:<subject_ref>`: one signal per project and dedup key, ever. */
  dedupKey: string;
  kind: SignalKind;
  status: SignalStatus;
  severity: SignalSeverity;
  subjectRef: string;
  detailCode: string;
  assetId: string | null;
  evidenceRef: string | null;
  openedAt: string;
  lastSeenAt: string;
  acknowledgedBy: string | null;
  acknowledgedAt: string | null;
  /** Who closed it (resolved or dismissed): a principal, or `system` for an auto-clear. */
  resolvedBy: string | null;
  resolvedAt: string | null;
  /** Short lowercase code of why it closed (`reviewed`, `owner_set`, `dismissed`). */
  resolutionCode: string | null;
  resolutionReason: string | null;
}

export interface SignalFilter {
  projectId: string;
  statuses?: string[];
  kinds?: string[];
  severities?: string[];
  assetId?: string;
}

/** Signals are listed newest first by (last_seen_at desc, id desc). */
export interface SignalPosition {
  lastSeenAt: string;
  id: string;
}

export type OutboxEvent = 'opened' | 'resolved' | 'dismissed';

export interface OutboxRecord {
  id: string;
  /** Write order (strictly increasing per process; the time of the write in microseconds at least). */
  seq: number;
  orgId: string;
  projectId: string;
  /** What produced it; `review_signals` for now. */
  source: 'review_signals';
  event: OutboxEvent;
  signalId: string;
  kind: SignalKind;
  severity: SignalSeverity;
  subjectRef: string;
  assetId: string | null;
  occurredAt: string;
  /** The signal as it was after the change. */
  payload: SignalRecord;
  deliveredAt: string | null;
}

export interface AssetStore {
  insert(a: AssetRecord): Promise<void>;
  /**
   * Writes every column but id, org, project and created_at when the stored version is still
   * `expectedVersion` (the caller bumped `version`); false when another write got there first. (Origin
   * and created_by change once: when a declaration adopts a discovered asset.)
   */
  update(a: AssetRecord, expectedVersion: number): Promise<boolean>;
  find(id: string): Promise<AssetRecord | undefined>;
  /** Up to `limit + 1` assets after the position, newest first. */
  list(filter: AssetFilter, opts: { after?: AssetPosition; limit: number }): Promise<AssetRecord[]>;
  /** Maps each key to the asset; false (and nothing written) when one of them is already mapped in the project. */
  mapKeys(projectId: string, assetId: string, keys: string[], at: string): Promise<boolean>;
  /** The asset each of these keys maps to in the project (keys that map to none are absent). */
  assetsOfKeys(projectId: string, keys: string[]): Promise<Map<string, string>>;
  appendVersion(v: AssetVersionRecord): Promise<void>;
  /** Versions oldest first, after `afterVersion`; up to `limit + 1`. */
  versions(assetId: string, opts: { afterVersion?: number; limit: number }): Promise<AssetVersionRecord[]>;
  /** Live projects of every organization (discovery walks them). */
  liveProjects(): Promise<{ id: string; orgId: string }[]>;
  /** Assets created at or before `createdBefore` that are unreviewed, or have no owner, across every project. */
  pastWindow(createdBefore: string, opts: { afterId?: string; limit: number }): Promise<AssetRecord[]>;
}

export interface SignalStore {
  /** Inserts the signal unless its (project, dedup key) exists; true when inserted. */
  insertIfNew(s: SignalRecord): Promise<boolean>;
  findByDedup(projectId: string, dedupKey: string): Promise<SignalRecord | undefined>;
  find(id: string): Promise<SignalRecord | undefined>;
  /** Moves `last_seen_at` forward (never back) of an active signal. */
  touch(id: string, lastSeenAt: string): Promise<void>;
  /** Active signals of these kinds about the asset. */
  activeOfAsset(assetId: string, kinds: readonly SignalKind[]): Promise<SignalRecord[]>;
  /** Writes status and the acknowledge/resolve columns when the signal is still in one of `from`; false otherwise. */
  transition(s: SignalRecord, from: readonly SignalStatus[]): Promise<boolean>;
  list(filter: SignalFilter, opts: { after?: SignalPosition; limit: number }): Promise<SignalRecord[]>;
  /** Active (open or acknowledged) signals per asset and severity, for these assets. */
  activeCounts(projectId: string, assetIds: string[]): Promise<{ assetId: string; severity: string; n: number }[]>;
}

export interface OutboxStore {
  append(r: OutboxRecord): Promise<void>;
  /** Every entry of the project (delivered or not), in write order (seq, id), after the position; up to `limit + 1`. */
  list(projectId: string, opts: { after?: { seq: number; id: string }; limit: number }): Promise<OutboxRecord[]>;
}
