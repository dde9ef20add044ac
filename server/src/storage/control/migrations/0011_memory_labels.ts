/** Migration 0011_memory_labels (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One row per labelled item: the write lock of its revisions (a label write upserts it first, which
    // serializes writers of one item on both engines), its last revision and the signal episode.
    await db.schema
      .createTable('memory_items')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('item_key', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('trusted_revision', 'integer', (c) => c.notNull())
      .addColumn('labeled_at', 'text')
      .addPrimaryKeyConstraint('memory_items_pk', ['project_id', 'item_key'])
      .execute();
    // Every revision of every label, never updated nor deleted (history is never replaced).
    await db.schema
      .createTable('memory_labels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('item_key', 'text', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('labeled_by', 'text', (c) => c.notNull())
      .addColumn('labeled_at', 'text', (c) => c.notNull())
      .addColumn('signal_opened', 'integer', (c) => c.notNull())
      .addColumn('signal_resolved', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('memory_labels_item').on('memory_labels').columns(['project_id', 'item_key', 'revision']).unique().execute();
    await db.schema.createIndex('memory_labels_list').on('memory_labels').columns(['project_id', 'labeled_at', 'id']).execute();
  },
};
