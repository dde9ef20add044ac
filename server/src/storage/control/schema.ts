/** Table types of the control store, shared by the SQLite and PostgreSQL dialects. Times are ISO-8601 text. */
import type { EvaluationTables } from './schema-evaluations.js';
import type { GovernanceTables } from './schema-governance.js';

export type * from './schema-evaluations.js';
export type * from './schema-governance.js';
export type * from './schema-content.js';

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ProjectsTable {
  id: string;
  org_id: string;
  name: string;
  sampling_rate: number;
  created_at: string;
  deleted_at: string | null;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  project_id: string | null;
  name: string;
  key_hash: string;
  key_prefix: string;
  scopes: string; // JSON array
  status: string; // active | revoked
  expires_at: string;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
  user_id: string | null;
  created_by_api_key_id: string | null;
  created_by_state: string;
}

export interface AuditEventsTable {
  id: string;
  seq: number;
  org_id: string;
  project_id: string | null;
  occurred_at: string;
  actor_kind: string;
  actor_id: string | null;
  /** The person behind the actor, when there is one (added by 0002_people). */
  actor_user_id: string | null;
  event_type: string | null;
  resource: string;
  action: string;
  result: string;
  tool_name: string | null;
  target_id: string | null;
  target_api_key_id: string | null;
  metadata: string; // JSON object
}

export interface UsersTable {
  id: string;
  email: string; // lower-cased, unique
  name: string;
  password_hash: string;
  created_at: string;
}

export interface MembershipsTable {
  org_id: string;
  user_id: string;
  role: string; // owner | admin | member
  created_at: string;
}

export interface InvitationsTable {
  id: string;
  org_id: string;
  email: string;
  role: string;
  token_hash: string;
  status: string; // pending | accepted | revoked
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_user_id: string | null;
  revoked_at: string | null;
  created_by_user_id: string | null;
  created_by_api_key_id: string | null;
}

export interface SignInsTable {
  id: string;
  user_id: string;
  org_id: string;
  created_at: string;
  revoked_at: string | null;
}

export interface SignInCredentialsTable {
  id: string;
  sign_in_id: string;
  kind: string; // access | refresh
  token_hash: string;
  status: string; // active | rotated | revoked
  created_at: string;
  expires_at: string;
}

export interface MetaTable {
  key: string;
  value: string;
}

/** oidc-provider artifacts (added by 0003_oauth); `payload` is the JSON the library hands the adapter. */
export interface OAuthPayloadsTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: string | null;
  consumed_at: string | null;
}

export interface AgentApprovalsTable {
  id: string;
  org_id: string;
  user_id: string;
  project_id: string | null;
  client_id: string;
  client_name: string;
  client_host: string | null;
  scopes: string; // JSON array
  status: string; // active | revoked
  grant_id: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface AgentBudgetsTable {
  connection_id: string;
  org_id: string;
  requests_per_day: number | null;
  write_actions_per_day: number | null;
  updated_at: string;
  updated_by_user_id: string | null;
}

export interface AgentUsageTable {
  connection_id: string;
  day: string; // YYYY-MM-DD, UTC
  requests: number;
  write_actions: number;
}

export interface IdempotencyRecordsTable {
  credential: string;
  idempotency_key: string;
  fingerprint: string;
  state: string; // pending | done
  status: number | null;
  headers: string | null; // JSON object
  body: string | null;
  created_at: string;
  expires_at: string;
}

/** Model prices of a project (added by 0005_llm_pricing); provider '' is the any-provider entry. */
export interface LlmPricesTable {
  project_id: string;
  org_id: string;
  model: string;
  provider: string;
  /** Whole micro-dollars per million tokens. */
  input_micros_per_mtok: number;
  output_micros_per_mtok: number;
  updated_at: string;
  updated_by_user_id: string | null;
  updated_by_api_key_id: string | null;
}

/** Background jobs (added by 0007_jobs); see server/src/jobs/types.ts for the meaning of each column. */
export interface JobsTable {
  id: string;
  kind: string;
  dedup_key: string | null;
  payload: string; // JSON
  status: string; // pending | running | done | failed
  run_at: string;
  attempts: number;
  max_attempts: number;
  every_seconds: number | null;
  rerun_requested: number; // 0 | 1
  locked_by: string | null;
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** The governance tables (containment, inventory, content policy, memory, receipts, signing): schema-governance.ts. */
export interface ControlDatabase extends GovernanceTables, EvaluationTables {
  organizations: OrganizationsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  audit_events: AuditEventsTable;
  svc_meta: MetaTable;
  users: UsersTable;
  memberships: MembershipsTable;
  invitations: InvitationsTable;
  sign_ins: SignInsTable;
  sign_in_credentials: SignInCredentialsTable;
  oauth_payloads: OAuthPayloadsTable;
  agent_approvals: AgentApprovalsTable;
  agent_budgets: AgentBudgetsTable;
  agent_usage: AgentUsageTable;
  idempotency_records: IdempotencyRecordsTable;
  llm_prices: LlmPricesTable;
  jobs: JobsTable;
  /** 0024: telemetry retention windows per project and signal (docs/retention.md). */
  telemetry_retention: TelemetryRetentionTable;
}

export interface TelemetryRetentionTable {
  project_id: string;
  /** SIGNAL_METRICS | SIGNAL_SPANS | SIGNAL_LOGS */
  signal: string;
  org_id: string;
  retention_days: number;
  updated_by_user_id: string | null;
  updated_by_api_key_id: string | null;
  updated_at: string;
}
