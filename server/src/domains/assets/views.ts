/** Records -> response shapes of the asset, attribution, review-signal and outbox routes. */
import { identityView } from '../agent-runs/views.js';
import type { AssetRead, Attribution, SeenIn } from './service.js';
import type { AssetVersionRecord, OutboxRecord, SignalRecord } from './store.js';

export function assetView(a: AssetRead) {
  return {
    id: a.id,
    project_id: a.projectId,
    name: a.name,
    description: a.description,
    origin: a.origin,
    shadow: a.origin === 'discovered',
    observation_keys: a.observationKeys,
    environment: a.environment,
    environments: a.environments,
    environments_truncated: a.environmentsTruncated,
    approval_state: a.approvalState,
    approver_principal: a.approverPrincipal,
    approval_reason: a.approvalReason,
    reviewed_at: a.reviewedAt,
    risk_tier: a.riskTier,
    data_classification: a.dataClassification,
    classified_by: a.classifiedBy,
    classification_reason: a.classificationReason,
    classified_at: a.classifiedAt,
    owner_team: a.ownerTeam,
    owner_principal: a.ownerPrincipal,
    ownership_set_by: a.ownershipSetBy,
    ownership_set_at: a.ownershipSetAt,
    quarantined: a.quarantineId !== null,
    quarantine_id: a.quarantineId,
    version: a.version,
    created_by: a.createdBy,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

/** `seen`: where the asset is seen now (a snapshot does not keep it). */
export function versionView(v: AssetVersionRecord, seen: SeenIn) {
  return { version: v.version, change: v.change, actor: v.actor, occurred_at: v.occurredAt, asset: assetView({ ...v.snapshot, ...seen }) };
}

export function attributionView(a: Attribution) {
  return {
    availability: a.availability,
    ...(a.unavailableReason ? { unavailable_reason: a.unavailableReason as 'telemetry_unreadable' } : {}),
    mappings: a.mappings.map((m) => {
      if (m.sightings === undefined) return { observation_key: m.observationKey, asset_id: m.assetId };
      const { availability: _answered, ...seen } = identityView(m.observationKey, m.sightings);
      return { ...seen, asset_id: m.assetId };
    }),
  };
}

export function signalView(s: SignalRecord) {
  return {
    id: s.id,
    project_id: s.projectId,
    kind: s.kind,
    status: s.status,
    severity: s.severity,
    subject_ref: s.subjectRef,
    detail_code: s.detailCode,
    asset_id: s.assetId,
    evidence_ref: s.evidenceRef,
    opened_at: s.openedAt,
    last_seen_at: s.lastSeenAt,
    acknowledged_by: s.acknowledgedBy,
    acknowledged_at: s.acknowledgedAt,
    resolved_by: s.resolvedBy,
    resolved_at: s.resolvedAt,
    resolution_code: s.resolutionCode,
    resolution_reason: s.resolutionReason,
  };
}

export function outboxView(o: OutboxRecord) {
  return {
    id: o.id,
    source: o.source,
    event: o.event,
    signal_id: o.signalId,
    kind: o.kind,
    severity: o.severity,
    subject_ref: o.subjectRef,
    asset_id: o.assetId,
    occurred_at: o.occurredAt,
    delivered_at: o.deliveredAt,
    signal: signalView(o.payload),
  };
}
