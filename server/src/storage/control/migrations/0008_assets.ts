/** Migration 0008_assets (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
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
};
