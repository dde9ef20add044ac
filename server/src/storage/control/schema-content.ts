/** Control-store tables of recorded content: content policies, their retention and refusals, memory items and labels, content erasures (part of GovernanceTables, schema-governance.ts). */

/** A project's content policy (domains/content-policy). Added by 0010_content_policies. */
export interface ContentPoliciesTable {
  project_id: string;
  org_id: string;
  /** The grid as JSON: {class: {boundary: decision}}. */
  grid: string;
  version: number;
  updated_by_user_id: string | null;
  updated_by_api_key_id: string | null;
  updated_at: string;
}

export interface ContentRetentionTable {
  project_id: string;
  content_class: string;
  org_id: string;
  retention_days: number;
  updated_by_user_id: string | null;
  updated_by_api_key_id: string | null;
  updated_at: string;
}

export interface ContentPolicyRefusalsTable {
  project_id: string;
  minute: string;
  cell_key: string;
  content_class: string;
  boundary: string;
  decider: string;
  decision: string;
  count: number | string | bigint;
}

/** The write lock and head of a labelled memory item (added by 0011_memory_labels). */
export interface MemoryItemsTable {
  project_id: string;
  item_key: string;
  org_id: string;
  revision: number;
  /** Revision of the newest `trusted` label; 0 when none. */
  trusted_revision: number;
  labeled_at: string | null;
}

/** Every revision of a memory item's label (added by 0011_memory_labels). */
export interface MemoryLabelsTable {
  id: string;
  org_id: string;
  project_id: string;
  item_key: string;
  revision: number;
  label: string;
  reason: string;
  labeled_by: string;
  labeled_at: string;
  signal_opened: number;
  signal_resolved: number;
}

/** Erasures of recorded content (added by 0015_content_erasures). */
export interface ContentErasuresTable {
  id: string;
  org_id: string;
  project_id: string;
  kind: string; // subject | retention
  subject_kind: string | null;
  subject_id: string | null;
  /** JSON array of content classes. */
  content_classes: string;
  before_at: string | null;
  reason: string | null;
  requested_by: string;
  request_id: string | null;
  status: string; // running | completed | failed
  /** JSON {spans, span_events, logs, attributes}; NULL until done. */
  counts: string | null;
  detail_code: string | null;
  created_at: string;
  completed_at: string | null;
}
