/** Migration 0024_telemetry_retention (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One row per project and signal that has a window (docs/retention.md); a signal without a row is kept.
    await db.schema
      .createTable('telemetry_retention')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('signal', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('retention_days', 'integer', (c) => c.notNull())
      .addColumn('updated_by_user_id', 'text')
      .addColumn('updated_by_api_key_id', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('telemetry_retention_pk', ['project_id', 'signal'])
      .execute();
  },
};
