/** Migration 0013_signing: artifact signing keys, signed bills of materials, deployments and their configuration snapshots (append only). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // The service's Ed25519 keys: the public part in clear (published), the private part sealed under a key
    // derived from the key-hash secret. `current_slot` is 'current' on exactly one row (NULLs are distinct in
    // a unique index in both engines), so two rotations at once cannot leave two current keys.
    await db.schema
      .createTable('signing_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('public_x', 'text', (c) => c.notNull())
      .addColumn('private_sealed', 'text', (c) => c.notNull())
      .addColumn('current_slot', 'text', (c) => c.unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('retired_at', 'text')
      .addColumn('retired_by', 'text')
      .execute();
    // A manifest is its canonical form: every member is read from it; the other columns find it.
    await db.schema
      .createTable('abom_manifests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('asset_id', 'text', (c) => c.notNull())
      .addColumn('canonical_form', 'text', (c) => c.notNull())
      .addColumn('manifest_sha256', 'text', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('signing_key_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .execute();
    await db.schema.createIndex('abom_manifests_asset').on('abom_manifests').columns(['project_id', 'asset_id', 'created_at']).execute();
    await db.schema
      .createTable('deployments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('asset_id', 'text', (c) => c.notNull())
      .addColumn('manifest_id', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('release', 'text')
      .addColumn('config_state', 'text', (c) => c.notNull())
      .addColumn('current_snapshot_id', 'text')
      .addColumn('last_match_snapshot_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('deployments_list').on('deployments').columns(['project_id', 'created_at', 'id']).execute();
    await db.schema
      .createTable('config_snapshots')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('deployment_id', 'text', (c) => c.notNull())
      .addColumn('components', 'text', (c) => c.notNull())
      .addColumn('config_sha256', 'text', (c) => c.notNull())
      .addColumn('matches', 'integer', (c) => c.notNull())
      .addColumn('drift', 'text')
      .addColumn('registered_at', 'text', (c) => c.notNull())
      .addColumn('registered_by', 'text')
      .execute();
    await db.schema.createIndex('config_snapshots_deployment').on('config_snapshots').columns(['deployment_id', 'registered_at', 'id']).execute();
  },
};
