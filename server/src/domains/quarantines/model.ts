/**
 * Containment (quarantine) of an agent: states, actions and targets (docs/governance-quarantines.md).
 * A containment is requested by one person and approved by another; approval resolves the target to
 * the exact set of API keys that sent its telemetry and acts on them.
 */
export const QUARANTINE_STATUSES = ['pending', 'active', 'lifted', 'withdrawn'] as const;
export type QuarantineStatus = (typeof QUARANTINE_STATUSES)[number];

export const QUARANTINE_ACTIONS = ['freeze_writes', 'revoke_credentials', 'kill'] as const;
export type QuarantineAction = (typeof QUARANTINE_ACTIONS)[number];
export const DEFAULT_ACTION: QuarantineAction = 'freeze_writes';

export const TARGET_KINDS = ['asset_id', 'observation_key', 'api_key_id'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** Per-credential enforcement states: `unknown` where the effect cannot be verified. */
export const ENFORCEMENT_STATES = ['verified', 'failed', 'unknown'] as const;
export type EnforcementState = (typeof ENFORCEMENT_STATES)[number];

/** A freeze holds a key until the last containment holding it is lifted; a revocation is for good. */
export type CredentialEffect = 'freeze' | 'revoke';
export const effectOf = (action: QuarantineAction): CredentialEffect => (action === 'freeze_writes' ? 'freeze' : 'revoke');

/** Reasons (request, lift, withdraw) are at most this long. */
export const MAX_REASON = 1024;
export const MAX_REQUEST_ID = 200;
export const MAX_TARGET = 512;

/** The receipt policy of a containment approval (a mediated action). */
export const CONTAINMENT_POLICY = { id: 'agents:containment_approval', version: 'v1' } as const;
