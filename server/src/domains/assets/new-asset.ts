import type { AssetRecord } from './store.js';

/** A new asset (version 1): unreviewed, unassessed, unclassified, unowned, not quarantined, unless told otherwise. */
export function newAsset(a: Pick<AssetRecord, 'id' | 'orgId' | 'projectId' | 'name' | 'origin' | 'createdAt'> & Partial<AssetRecord>): AssetRecord {
  return {
    description: null,
    environment: null,
    approvalState: 'APPROVAL_STATE_UNREVIEWED',
    approverPrincipal: null,
    approvalReason: null,
    reviewedAt: null,
    riskTier: 'RISK_TIER_UNASSESSED',
    dataClassification: 'DATA_CLASSIFICATION_UNCLASSIFIED',
    classifiedBy: null,
    classificationReason: null,
    classifiedAt: null,
    ownerTeam: null,
    ownerPrincipal: null,
    ownershipSetBy: null,
    ownershipSetAt: null,
    quarantineId: null,
    version: 1,
    createdBy: null,
    updatedAt: a.createdAt,
    observationKeys: [],
    ...a,
  };
}
