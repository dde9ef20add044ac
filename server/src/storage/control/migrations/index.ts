/** One migration list, run by both dialects. Append only: never edit a migration that has shipped. */
import { Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

const migrations: Record<string, Migration> = {
  '0001_foundation': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('sampling_rate', 'double precision', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('deleted_at', 'text')
        .execute();
      await db.schema.createIndex('projects_org').on('projects').columns(['org_id', 'created_at']).execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('project_id', 'text')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addColumn('user_id', 'text')
        .addColumn('created_by_api_key_id', 'text')
        .addColumn('created_by_state', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_org').on('api_keys').columns(['org_id', 'created_at', 'id']).execute();
      await db.schema
        .createTable('audit_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text')
        .addColumn('occurred_at', 'text', (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('event_type', 'text')
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('result', 'text', (c) => c.notNull())
        .addColumn('tool_name', 'text')
        .addColumn('target_id', 'text')
        .addColumn('target_api_key_id', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_org_seq').on('audit_events').columns(['org_id', 'seq']).execute();
      await db.schema
        .createTable('svc_meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0002_people': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('memberships')
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('memberships_pk', ['org_id', 'user_id'])
        .execute();
      await db.schema.createIndex('memberships_user').on('memberships').column('user_id').execute();
      await db.schema
        .createTable('invitations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('accepted_at', 'text')
        .addColumn('accepted_user_id', 'text')
        .addColumn('revoked_at', 'text')
        .addColumn('created_by_user_id', 'text')
        .addColumn('created_by_api_key_id', 'text')
        .execute();
      await db.schema.createIndex('invitations_org').on('invitations').columns(['org_id', 'created_at', 'id']).execute();
      await db.schema
        .createTable('sign_ins')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('sign_ins_member').on('sign_ins').columns(['org_id', 'user_id']).execute();
      await db.schema
        .createTable('sign_in_credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('sign_in_id', 'text', (c) => c.notNull().references('sign_ins.id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sign_in_credentials_family').on('sign_in_credentials').column('sign_in_id').execute();
      // Audit records name the person behind a credential, so later rules can compare people.
      await db.schema.alterTable('audit_events').addColumn('actor_user_id', 'text').execute();
    },
  },
  '0003_oauth': {
    async up(db: Kysely<any>) {
      // oidc-provider's artifacts (tokens, codes, grants, interactions, clients, sessions), one row each.
      await db.schema
        .createTable('oauth_payloads')
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('grant_id', 'text')
        .addColumn('user_code', 'text')
        .addColumn('uid', 'text')
        .addColumn('expires_at', 'text')
        .addColumn('consumed_at', 'text')
        .addPrimaryKeyConstraint('oauth_payloads_pk', ['model', 'id'])
        .execute();
      await db.schema.createIndex('oauth_payloads_grant').on('oauth_payloads').column('grant_id').execute();
      await db.schema.createIndex('oauth_payloads_user_code').on('oauth_payloads').columns(['model', 'user_code']).execute();
      await db.schema.createIndex('oauth_payloads_uid').on('oauth_payloads').columns(['model', 'uid']).execute();
      await db.schema.createIndex('oauth_payloads_expiry').on('oauth_payloads').column('expires_at').execute();
      await db.schema
        .createTable('agent_approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text')
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('client_name', 'text', (c) => c.notNull())
        .addColumn('client_host', 'text')
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('grant_id', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('agent_approvals_org').on('agent_approvals').columns(['org_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('agent_approvals_person').on('agent_approvals').columns(['org_id', 'user_id', 'created_at']).execute();
      await db.schema.createIndex('agent_approvals_project').on('agent_approvals').column('project_id').execute();
      await db.schema
        .createTable('agent_budgets')
        .addColumn('connection_id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('requests_per_day', 'integer')
        .addColumn('write_actions_per_day', 'integer')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('updated_by_user_id', 'text')
        .execute();
      await db.schema
        .createTable('agent_usage')
        .addColumn('connection_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('requests', 'integer', (c) => c.notNull())
        .addColumn('write_actions', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_usage_pk', ['connection_id', 'day'])
        .execute();
    },
  },
  '0004_idempotency': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('idempotency_records')
        .addColumn('credential', 'text', (c) => c.notNull())
        .addColumn('idempotency_key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('headers', 'text')
        .addColumn('body', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_records_pk', ['credential', 'idempotency_key'])
        .execute();
      await db.schema.createIndex('idempotency_records_expiry').on('idempotency_records').column('expires_at').execute();
    },
  },
  '0005_llm_pricing': {
    async up(db: Kysely<any>) {
      // The model price table of a project; provider '' is the any-provider entry (so it can be in the key).
      await db.schema
        .createTable('llm_prices')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('input_micros_per_mtok', 'bigint', (c) => c.notNull())
        .addColumn('output_micros_per_mtok', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('updated_by_user_id', 'text')
        .addColumn('updated_by_api_key_id', 'text')
        .addPrimaryKeyConstraint('llm_prices_pk', ['project_id', 'model', 'provider'])
        .execute();
    },
  },
  '0006_idempotency_sealed': {
    async up(db: Kysely<any>) {
      // Replays are now stored sealed (AES-256-GCM under a key only the presenting credential can
      // derive). Records written before held answers in clear, a new key's secret among them: they
      // are dropped (they lived at most ten minutes anyway).
      await db.deleteFrom('idempotency_records').execute();
    },
  },
  '0007_jobs': {
    async up(db: Kysely<any>) {
      // The background job runner's queue (server/src/jobs/, docs/jobs.md).
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('dedup_key', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('run_at', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('every_seconds', 'integer')
        .addColumn('rerun_requested', 'integer', (c) => c.notNull())
        .addColumn('locked_by', 'text')
        .addColumn('locked_until', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      // At most one pending-or-running job per (kind, key); a null key never collides.
      await db.schema
        .createIndex('jobs_live_key')
        .on('jobs')
        .columns(['kind', 'dedup_key'])
        .unique()
        .where(sql<boolean>`status in ('pending', 'running')`)
        .execute();
      // The claim: due pending jobs by run_at, running ones by the end of their lease.
      await db.schema.createIndex('jobs_due').on('jobs').columns(['status', 'run_at']).execute();
      await db.schema.createIndex('jobs_lease').on('jobs').columns(['status', 'locked_until']).execute();
      await db.schema.createIndex('jobs_finished').on('jobs').columns(['status', 'finished_at']).execute();
    },
  },
  '0008_assets': {
    async up(db: Kysely<any>) {
      // The agent inventory: one row per asset, its current state; every write appends a version.
      await db.schema
        .createTable('assets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('origin', 'text', (c) => c.notNull())
        .addColumn('environment', 'text')
        .addColumn('approval_state', 'text', (c) => c.notNull())
        .addColumn('approver_principal', 'text')
        .addColumn('approval_reason', 'text')
        .addColumn('reviewed_at', 'text')
        .addColumn('risk_tier', 'text', (c) => c.notNull())
        .addColumn('data_classification', 'text', (c) => c.notNull())
        .addColumn('classified_by', 'text')
        .addColumn('classification_reason', 'text')
        .addColumn('classified_at', 'text')
        .addColumn('owner_team', 'text')
        .addColumn('owner_principal', 'text')
        .addColumn('ownership_set_by', 'text')
        .addColumn('ownership_set_at', 'text')
        .addColumn('quarantine_id', 'text')
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_by', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('assets_project').on('assets').columns(['project_id', 'created_at', 'id']).execute();
      // An observation key maps to at most one current asset per project (the primary key says so).
      await db.schema
        .createTable('asset_observation_keys')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('observation_key', 'text', (c) => c.notNull())
        .addColumn('asset_id', 'text', (c) => c.notNull())
        .addColumn('mapped_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('asset_observation_keys_pk', ['project_id', 'observation_key'])
        .execute();
      await db.schema.createIndex('asset_observation_keys_asset').on('asset_observation_keys').columns(['asset_id', 'observation_key']).execute();
      await db.schema
        .createTable('asset_versions')
        .addColumn('asset_id', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('change', 'text', (c) => c.notNull())
        .addColumn('actor', 'text')
        .addColumn('occurred_at', 'text', (c) => c.notNull())
        .addColumn('snapshot', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('asset_versions_pk', ['asset_id', 'version'])
        .execute();
      // Review signals; dedup_key is unique per project: a kind and subject have one signal, ever
      // (a repeat raise refreshes it, a resolved one is never reopened).
      await db.schema
        .createTable('review_signals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('dedup_key', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('severity', 'text', (c) => c.notNull())
        .addColumn('subject_ref', 'text', (c) => c.notNull())
        .addColumn('detail_code', 'text', (c) => c.notNull())
        .addColumn('asset_id', 'text')
        .addColumn('evidence_ref', 'text')
        .addColumn('opened_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .addColumn('acknowledged_by', 'text')
        .addColumn('acknowledged_at', 'text')
        .addColumn('resolved_by', 'text')
        .addColumn('resolved_at', 'text')
        .addColumn('resolution_code', 'text')
        .addColumn('resolution_reason', 'text')
        .execute();
      await db.schema.createIndex('review_signals_dedup').on('review_signals').columns(['project_id', 'dedup_key']).unique().execute();
      await db.schema.createIndex('review_signals_seen').on('review_signals').columns(['project_id', 'last_seen_at', 'id']).execute();
      await db.schema.createIndex('review_signals_asset').on('review_signals').columns(['asset_id']).execute();
      // Every open and clear of a signal, written in the transaction of the change; delivered later.
      await db.schema
        .createTable('notification_outbox')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('signal_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('severity', 'text', (c) => c.notNull())
        .addColumn('subject_ref', 'text', (c) => c.notNull())
        .addColumn('asset_id', 'text')
        .addColumn('occurred_at', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('delivered_at', 'text')
        .execute();
      await db.schema.createIndex('notification_outbox_project').on('notification_outbox').columns(['project_id', 'seq', 'id']).execute();
    },
  },
  '0009_quarantines': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('quarantines')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_kind', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('environment', 'text')
        .addColumn('request_id', 'text')
        .addColumn('open_target', 'text')
        .addColumn('requested_by_user_id', 'text')
        .addColumn('requested_by_api_key_id', 'text')
        .addColumn('requested_at', 'text', (c) => c.notNull())
        .addColumn('approved_by_user_id', 'text')
        .addColumn('approved_by_api_key_id', 'text')
        .addColumn('approved_at', 'text')
        .addColumn('lifted_by_user_id', 'text')
        .addColumn('lifted_by_api_key_id', 'text')
        .addColumn('lifted_at', 'text')
        .addColumn('lift_reason', 'text')
        .addColumn('withdrawn_by_user_id', 'text')
        .addColumn('withdrawn_by_api_key_id', 'text')
        .addColumn('withdrawn_at', 'text')
        .addColumn('withdraw_reason', 'text')
        .addColumn('unenforceable_sightings', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // A request id names one request in an organization; one open (pending or active) containment per
      // target in a project (NULLs are distinct in both engines' unique indexes).
      await db.schema.createIndex('quarantines_request').on('quarantines').columns(['org_id', 'request_id']).unique().execute();
      await db.schema.createIndex('quarantines_open_target').on('quarantines').columns(['project_id', 'open_target']).unique().execute();
      await db.schema.createIndex('quarantines_list').on('quarantines').columns(['org_id', 'requested_at']).execute();
      await db.schema
        .createTable('quarantine_credentials')
        .addColumn('quarantine_id', 'text', (c) => c.notNull())
        .addColumn('api_key_id', 'text', (c) => c.notNull())
        .addColumn('effect', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('detail_code', 'text')
        .addColumn('enforced_at', 'text', (c) => c.notNull())
        .addColumn('released_at', 'text')
        .addPrimaryKeyConstraint('quarantine_credentials_pk', ['quarantine_id', 'api_key_id'])
        .execute();
      // The hot path (every authenticated request reads whether its key is held): by key.
      await db.schema.createIndex('quarantine_credentials_key').on('quarantine_credentials').columns(['api_key_id', 'released_at']).execute();
      await db.schema
        .createTable('receipt_entries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('action_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('authority', 'text', (c) => c.notNull())
        .addColumn('requester_principal', 'text')
        .addColumn('approver_principal', 'text')
        .addColumn('effect_class', 'text', (c) => c.notNull())
        .addColumn('destructive', 'integer', (c) => c.notNull())
        .addColumn('policy_id', 'text')
        .addColumn('policy_version', 'text')
        .addColumn('occurred_at', 'text', (c) => c.notNull())
        .addColumn('recorded_at', 'text', (c) => c.notNull())
        .addColumn('subject_kind', 'text', (c) => c.notNull())
        .addColumn('subject_id', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('receipt_entries_action').on('receipt_entries').columns(['project_id', 'action_id', 'seq']).unique().execute();
      await db.schema
        .createTable('authority_edges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('principal', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('source_kind', 'text', (c) => c.notNull())
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('sighting_count', 'integer', (c) => c.notNull())
        .addColumn('last_exercised_at', 'text')
        .addColumn('revoked_at', 'text')
        .addColumn('revoked_by', 'text')
        .addColumn('revoke_reason', 'text')
        .execute();
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * `schema` (PostgreSQL): the schema the tables live in. Kysely's migrator looks for its own
 * bookkeeping tables across every schema unless told which one, so a second store in the same
 * database (a test's schema, another tenant) would make it skip creating them here.
 */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  const { error, results } = await new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw new Error(`control store migration failed: ${failed?.migrationName ?? ''} ${String(error)}`);
}
