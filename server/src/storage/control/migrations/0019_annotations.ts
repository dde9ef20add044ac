/** Migration 0019_annotations (append only: never edit once shipped). Human judgments of agent runs. */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One judgment per person per (run, metric): judging again replaces the row (with a new id).
    await db.schema
      .createTable('evaluation_annotations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('metric_name', 'text', (c) => c.notNull())
      .addColumn('numeric_value', 'double precision')
      .addColumn('label', 'text')
      .addColumn('comment', 'text', (c) => c.notNull())
      .addColumn('author_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('evaluation_annotations_author')
      .on('evaluation_annotations')
      .columns(['project_id', 'run_id', 'metric_name', 'author_id'])
      .unique()
      .execute();
    await db.schema.createIndex('evaluation_annotations_page').on('evaluation_annotations').columns(['project_id', 'created_at', 'id']).execute();
  },
};
