/** Control-store tables of agent governance (migrations 0009 to 0015): containment, the agent inventory and review signals, (content policies, erasures and memory labels in schema-content.ts), action receipts and their chain, signing and signed artifacts. */

import type {
  ContentPoliciesTable,
  ContentRetentionTable,
  ContentPolicyRefusalsTable,
  MemoryItemsTable,
  MemoryLabelsTable,
  ContentErasuresTable,
} from './schema-content.js';

/** A containment (domains/quarantines). Added by 0009_quarantines. */
export interface QuarantinesTable {
  id: string;
  org_id: string;
  project_id: string;
  status: string; // pending | active | lifted | withdrawn
  action: string; // freeze_writes | revoke_credentials | kill
  target_kind: string; // asset_id | observation_key | api_key_id
  target: string;
  reason: string;
  environment: string | null;
  request_id: string | null;
  /** Set while pending or active: one open containment per (project, target). */
  open_target: string | null;
  requested_by_user_id: string | null;
  requested_by_api_key_id: string | null;
  requested_at: string;
  approved_by_user_id: string | null;
  approved_by_api_key_id: string | null;
  approved_at: string | null;
  lifted_by_user_id: string | null;
  lifted_by_api_key_id: string | null;
  lifted_at: string | null;
  lift_reason: string | null;
  withdrawn_by_user_id: string | null;
  withdrawn_by_api_key_id: string | null;
  withdrawn_at: string | null;
  withdraw_reason: string | null;
  unenforceable_sightings: number;
}

/** One credential a containment reached, with its enforcement outcome; a freeze is a hold until released. */
export interface QuarantineCredentialsTable {
  quarantine_id: string;
  api_key_id: string;
  /** freeze (a hold the last lift releases) | revoke (for good). */
  effect: string;
  /** verified | failed | unknown */
  state: string;
  detail_code: string | null;
  enforced_at: string;
  released_at: string | null;
}

/** Receipt entries (transitions of an action), written by mediated actions such as containment approval. */
export interface ReceiptEntriesTable {
  id: string;
  org_id: string;
  project_id: string;
  action_id: string;
  seq: number;
  state: string;
  authority: string;
  requester_principal: string | null;
  approver_principal: string | null;
  effect_class: string;
  destructive: number; // 0 | 1
  policy_id: string | null;
  policy_version: string | null;
  occurred_at: string;
  recorded_at: string;
  subject_kind: string;
  subject_id: string;
  // Added by 0012_receipts: the chain link and what reported entries carry.
  chain_id: string;
  /** Position in the project's chain, from 0 (unique per project and chain). */
  chain_seq: number;
  prev_entry_sha256: string;
  entry_sha256: string;
  /** The RFC 8785 bytes the digest is of. */
  canonical: string;
  reported_by: string | null;
  run_id: string | null;
  trace_id: string | null;
  span_id: string | null;
  tool: string | null;
  purpose: string | null;
  authority_edge_id: string | null;
  /** The client's id of the entry: unique per (project, action). */
  entry_id: string | null;
}

/** Delegations of authority (a principal, through a tool, for a purpose). */
export interface AuthorityEdgesTable {
  id: string;
  org_id: string;
  project_id: string;
  principal: string;
  tool: string;
  purpose: string;
  source_kind: string;
  source_id: string;
  created_at: string;
  sighting_count: number;
  last_exercised_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  revoke_reason: string | null;
}

/** The agent inventory (added by 0008_assets). */
export interface AssetsTable {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  description: string | null;
  origin: string;
  environment: string | null;
  approval_state: string;
  approver_principal: string | null;
  approval_reason: string | null;
  reviewed_at: string | null;
  risk_tier: string;
  data_classification: string;
  classified_by: string | null;
  classification_reason: string | null;
  classified_at: string | null;
  owner_team: string | null;
  owner_principal: string | null;
  ownership_set_by: string | null;
  ownership_set_at: string | null;
  quarantine_id: string | null;
  version: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface AssetObservationKeysTable {
  project_id: string;
  observation_key: string;
  asset_id: string;
  mapped_at: string;
}

export interface AssetVersionsTable {
  asset_id: string;
  version: number;
  project_id: string;
  change: string;
  actor: string | null;
  occurred_at: string;
  /** JSON text of the asset record after the change. */
  snapshot: string;
}

export interface ReviewSignalsTable {
  id: string;
  org_id: string;
  project_id: string;
  dedup_key: string;
  kind: string;
  status: string;
  severity: string;
  subject_ref: string;
  detail_code: string;
  asset_id: string | null;
  evidence_ref: string | null;
  opened_at: string;
  last_seen_at: string;
  acknowledged_by: string | null;
  acknowledged_at: string | null;
  resolved_by: string | null;
  resolved_at: string | null;
  resolution_code: string | null;
  resolution_reason: string | null;
}

export interface NotificationOutboxTable {
  id: string;
  /** Write order: microseconds since the epoch, made strictly increasing per process (like audit_events.seq). */
  seq: number;
  org_id: string;
  project_id: string;
  source: string;
  event: string;
  signal_id: string;
  kind: string;
  severity: string;
  subject_ref: string;
  asset_id: string | null;
  occurred_at: string;
  payload: string;
  delivered_at: string | null;
}

// ---- Action receipts, the receipt chain and authority edges (added by 0012_receipts)

/** The head of a project's chain; its row lock serializes appends. */
export interface ReceiptChainsTable {
  project_id: string;
  chain_id: string;
  org_id: string;
  size: number;
  last_entry_sha256: string;
  opened_at: string;
}

/** The fold of each action (kept so lists filter by it). */
export interface ActionReceiptsTable {
  org_id: string;
  project_id: string;
  action_id: string;
  chain_id: string;
  authority: string;
  final_state: string;
  remediation: string | null;
  requester_principal: string | null;
  conflicting_requester_principals: string; // JSON array
  effect_class: string;
  destructive: number; // 0 | 1
  approver_principal: string | null;
  approved_at: string | null;
  policy_id: string | null;
  policy_version: string | null;
  conflicting_policies: string; // JSON array
  malformed_policy_records: string; // JSON array
  normalizer_version: number;
  occurred_at: string;
  run_id: string | null;
  entry_count: number;
  last_chain_seq: number;
  updated_at: string;
}

/** Request ids of reported-receipt batches and the first answer. */
export interface ReceiptIngestRequestsTable {
  org_id: string;
  request_id: string;
  principal: string;
  response: string;
  created_at: string;
}

// ---- 0013_signing: artifact signing keys, bills of materials, deployments, configuration snapshots

export interface SigningKeysTable {
  kid: string;
  /** Unpadded base64url of the raw 32-byte Ed25519 public key. */
  public_x: string;
  /** The private key, sealed (AES-256-GCM under a key derived from the key-hash secret). */
  private_sealed: string;
  /** 'current' on the one current key; NULL once retired. */
  current_slot: string | null;
  created_at: string;
  created_by: string | null;
  retired_at: string | null;
  retired_by: string | null;
}

export interface AbomManifestsTable {
  id: string;
  org_id: string;
  project_id: string;
  asset_id: string;
  canonical_form: string;
  manifest_sha256: string;
  signature: string;
  signing_key_id: string;
  created_at: string;
  created_by: string | null;
}

export interface DeploymentsTable {
  id: string;
  org_id: string;
  project_id: string;
  asset_id: string;
  manifest_id: string;
  environment: string;
  release: string | null;
  config_state: string;
  current_snapshot_id: string | null;
  last_match_snapshot_id: string | null;
  created_at: string;
  created_by: string | null;
  updated_at: string;
}

export interface ConfigSnapshotsTable {
  id: string;
  org_id: string;
  project_id: string;
  deployment_id: string;
  /** JSON text of the registered components. */
  components: string;
  config_sha256: string;
  matches: number;
  /** JSON text of the first difference from the attesting manifest; NULL when it matches. */
  drift: string | null;
  registered_at: string;
  registered_by: string | null;
}

/** Signed receipt-chain checkpoints and tree heads (added by 0014_chain_artifacts). */
export interface ChainArtifactsTable {
  id: string;
  org_id: string;
  project_id: string;
  chain_id: string;
  kind: string; // checkpoint | tree_head
  position: number | string; // bigint: seq of a checkpoint, size of a tree head
  canonical_form: string;
  sha256: string;
  signature: string;
  signing_key_id: string;
  generated_at: string;
  created_at: string;
  created_by_user_id: string | null;
  created_by_api_key_id: string | null;
}

/** The RFC 6962 leaf hash of each receipt-chain entry, hex (added by 0014_chain_artifacts). */
export interface ChainLeafHashesTable {
  project_id: string;
  chain_id: string;
  seq: number | string; // bigint
  entry_sha256: string;
  leaf_hash: string;
}

// Interface merging: the tables of 0014 join the control database's table map.

/** Every governance table by name (part of ControlDatabase). */
export interface GovernanceTables {
  quarantines: QuarantinesTable;
  quarantine_credentials: QuarantineCredentialsTable;
  receipt_entries: ReceiptEntriesTable;
  authority_edges: AuthorityEdgesTable;
  assets: AssetsTable;
  asset_observation_keys: AssetObservationKeysTable;
  asset_versions: AssetVersionsTable;
  review_signals: ReviewSignalsTable;
  notification_outbox: NotificationOutboxTable;
  content_policies: ContentPoliciesTable;
  content_retention: ContentRetentionTable;
  content_policy_refusals: ContentPolicyRefusalsTable;
  memory_items: MemoryItemsTable;
  memory_labels: MemoryLabelsTable;
  signing_keys: SigningKeysTable;
  abom_manifests: AbomManifestsTable;
  deployments: DeploymentsTable;
  config_snapshots: ConfigSnapshotsTable;
  receipt_chains: ReceiptChainsTable;
  action_receipts: ActionReceiptsTable;
  receipt_ingest_requests: ReceiptIngestRequestsTable;
  chain_artifacts: ChainArtifactsTable;
  chain_leaf_hashes: ChainLeafHashesTable;
  content_erasures: ContentErasuresTable;
}
