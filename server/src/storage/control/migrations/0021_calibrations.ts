/** Migration 0021_calibrations (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // Calibration records: how far a model judge agrees with people's judgments. Immutable; one per
    // (project, evaluator, digest of the inputs), so a recompute over unchanged inputs finds the record.
    await db.schema
      .createTable('evaluation_calibrations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_version', 'integer', (c) => c.notNull())
      .addColumn('metric_name', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('statistic', 'text')
      .addColumn('value_kind', 'text')
      .addColumn('agreement', 'double precision')
      .addColumn('agreement_rate', 'double precision')
      .addColumn('pair_count', 'integer', (c) => c.notNull())
      .addColumn('excluded_count', 'integer', (c) => c.notNull())
      // JSON objects and arrays as text: the exclusion counts by reason, the runs named, the ids paired.
      .addColumn('excluded', 'text', (c) => c.notNull())
      .addColumn('runs_without_judgment', 'integer', (c) => c.notNull())
      .addColumn('min_labels', 'integer', (c) => c.notNull())
      .addColumn('subject_refs', 'text', (c) => c.notNull())
      .addColumn('judgment_ids', 'text', (c) => c.notNull())
      .addColumn('result_ids', 'text', (c) => c.notNull())
      .addColumn('input_digest', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('evaluation_calibrations_digest')
      .on('evaluation_calibrations')
      .columns(['project_id', 'evaluator_id', 'input_digest'])
      .unique()
      .execute();
    await db.schema
      .createIndex('evaluation_calibrations_page')
      .on('evaluation_calibrations')
      .columns(['project_id', 'evaluator_id', 'created_at', 'id'])
      .execute();
  },
};
