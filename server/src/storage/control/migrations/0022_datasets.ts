/** Migration 0022_datasets (append only: never edit once shipped): datasets, their sealed versions, items and cases. */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One row per dataset: editable metadata and the latest sealed version (0: none yet). Sealing updates
    // this row first, which serializes sealers of one dataset on both engines.
    await db.schema
      .createTable('evaluation_datasets')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('dataset_id', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('latest_version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluation_datasets_pk', ['project_id', 'dataset_id'])
      .execute();
    // Every sealed version, never updated.
    await db.schema
      .createTable('evaluation_dataset_versions')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('dataset_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('item_count', 'integer', (c) => c.notNull())
      .addColumn('change', 'text', (c) => c.notNull())
      .addColumn('changed_count', 'integer', (c) => c.notNull())
      .addColumn('sealed_at', 'text', (c) => c.notNull())
      .addColumn('sealed_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluation_dataset_versions_pk', ['project_id', 'dataset_id', 'version'])
      .execute();
    // The items of each version (a version holds a case at most once), with the review that admitted it.
    await db.schema
      .createTable('evaluation_dataset_items')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('dataset_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('item_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('review_annotation_id', 'text', (c) => c.notNull())
      .addColumn('reviewer_id', 'text', (c) => c.notNull())
      .addColumn('reviewed_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluation_dataset_items_pk', ['project_id', 'dataset_id', 'version', 'item_id'])
      .execute();
    await db.schema
      .createIndex('evaluation_dataset_items_position')
      .on('evaluation_dataset_items')
      .columns(['project_id', 'dataset_id', 'version', 'position'])
      .unique()
      .execute();
    // Frozen cases, once per project by their content digest (shared by every version holding them).
    await db.schema
      .createTable('evaluation_dataset_cases')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('case_id', 'text', (c) => c.notNull())
      .addColumn('case_json', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluation_dataset_cases_pk', ['project_id', 'case_id'])
      .execute();
    await db.schema.createIndex('evaluation_dataset_items_case').on('evaluation_dataset_items').columns(['project_id', 'item_id']).execute();
  },
};
