/** Migration 0010_content_policies (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One policy per project: the whole grid as JSON text, replaced on every write.
    await db.schema
      .createTable('content_policies')
      .addColumn('project_id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('grid', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('updated_by_user_id', 'text')
      .addColumn('updated_by_api_key_id', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('content_policies_list').on('content_policies').columns(['org_id', 'updated_at', 'project_id']).execute();
    await db.schema
      .createTable('content_retention')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('content_class', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('retention_days', 'integer', (c) => c.notNull())
      .addColumn('updated_by_user_id', 'text')
      .addColumn('updated_by_api_key_id', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('content_retention_pk', ['project_id', 'content_class'])
      .execute();
    // The refusal audit, aggregated: one row per project, minute and cell of refusal (never one per value).
    await db.schema
      .createTable('content_policy_refusals')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('minute', 'text', (c) => c.notNull())
      .addColumn('cell_key', 'text', (c) => c.notNull())
      .addColumn('content_class', 'text', (c) => c.notNull())
      .addColumn('boundary', 'text', (c) => c.notNull())
      .addColumn('decider', 'text', (c) => c.notNull())
      .addColumn('decision', 'text', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('content_policy_refusals_pk', ['project_id', 'minute', 'cell_key'])
      .execute();
  },
};
