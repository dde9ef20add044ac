/** Migration 0009_quarantines (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
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
};
