/** One migration list, run by both dialects. Append only: never edit a migration that has shipped. */
import { Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { migration as m0007 } from './0007_jobs.js';
import { migration as m0008 } from './0008_assets.js';
import { migration as m0009 } from './0009_quarantines.js';
import { migration as m0010 } from './0010_content_policies.js';
import { migration as m0011 } from './0011_memory_labels.js';
import { migration as m0012 } from './0012_receipts.js';
import { migration as m0013 } from './0013_signing.js';
import { migration as m0014 } from './0014_chain_artifacts.js';
import { migration as m0015 } from './0015_content_erasures.js';
import { migration as m0016 } from './0016_evaluators.js';
import { migration as m0017 } from './0017_evaluation_budget.js';
import { migration as m0018 } from './0018_evaluation_results.js';
import { migration as m0019 } from './0019_annotations.js';
import { migration as m0020 } from './0020_release_gates.js';
import { migration as m0021 } from './0021_calibrations.js';
import { migration as m0022 } from './0022_datasets.js';
import { migration as m0023 } from './0023_experiments.js';
import { migration as m0024 } from './0024_telemetry_retention.js';

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
  '0007_jobs': m0007,
  '0008_assets': m0008,
  '0009_quarantines': m0009,
  '0010_content_policies': m0010,
  '0011_memory_labels': m0011,
  '0012_receipts': m0012,
  '0013_signing': m0013,
  '0014_chain_artifacts': m0014,
  '0015_content_erasures': m0015,
  '0016_evaluators': m0016,
  '0017_evaluation_budget': m0017,
  '0018_evaluation_results': m0018,
  '0019_annotations': m0019,
  '0020_release_gates': m0020,
  '0021_calibrations': m0021,
  '0022_datasets': m0022,
  '0023_experiments': m0023,
  '0024_telemetry_retention': m0024,
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
