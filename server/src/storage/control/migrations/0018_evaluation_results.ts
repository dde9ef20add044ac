/** Migration 0018_evaluation_results (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One result per evaluator version per subject (history: a new version adds a row, never replaces one).
    await db.schema
      .createTable('evaluation_results')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_version', 'integer', (c) => c.notNull())
      .addColumn('metric_name', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('subject_kind', 'text', (c) => c.notNull())
      .addColumn('subject_ref', 'text', (c) => c.notNull())
      .addColumn('numeric_value', 'double precision')
      .addColumn('label', 'text')
      .addColumn('explanation', 'text')
      .addColumn('subject_release', 'text')
      .addColumn('legacy_source', 'text', (c) => c.notNull())
      .addColumn('occurred_at', 'text', (c) => c.notNull())
      .addColumn('evaluated_at', 'text', (c) => c.notNull())
      // The execution record as JSON; null for a result written before the record existed.
      .addColumn('execution', 'text')
      .execute();
    await db.schema
      .createIndex('evaluation_results_subject_version')
      .on('evaluation_results')
      .columns(['project_id', 'evaluator_id', 'evaluator_version', 'subject_kind', 'subject_ref'])
      .unique()
      .execute();
    await db.schema.createIndex('evaluation_results_page').on('evaluation_results').columns(['project_id', 'evaluated_at', 'id']).execute();
    await db.schema.createIndex('evaluation_results_ref').on('evaluation_results').columns(['project_id', 'subject_ref', 'evaluated_at', 'id']).execute();
    // An evaluation under way: one per (project, evaluator version, subject); a second asker gets 409 until it ends or expires.
    await db.schema
      .createTable('evaluation_claims')
      .addColumn('claim_key', 'text', (c) => c.primaryKey())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    // What could not be scored: unmeasured (retried later) or withheld by the content policy (not retried in a loop).
    await db.schema
      .createTable('evaluation_unscored')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_version', 'integer', (c) => c.notNull())
      .addColumn('subject_kind', 'text', (c) => c.notNull())
      .addColumn('subject_ref', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('details', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('first_at', 'text', (c) => c.notNull())
      .addColumn('last_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('evaluation_unscored_subject_version')
      .on('evaluation_unscored')
      .columns(['project_id', 'evaluator_id', 'evaluator_version', 'subject_kind', 'subject_ref'])
      .unique()
      .execute();
    await db.schema.createIndex('evaluation_unscored_page').on('evaluation_unscored').columns(['project_id', 'last_at', 'id']).execute();
  },
};
