/** Migration 0016_evaluators (append only: never edit once shipped): evaluators, their versions, sampling rules. */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One row per evaluator: its kind (fixed for life) and the latest version number. Appending a version
    // updates this row first, which serializes appenders of one evaluator on both engines.
    await db.schema
      .createTable('evaluators')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_id', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('latest_version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluators_pk', ['project_id', 'evaluator_id'])
      .execute();
    // Every version of every evaluator, never updated nor deleted; config_json is kept exactly as sent.
    await db.schema
      .createTable('evaluator_versions')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('metric_name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('config_json', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluator_versions_pk', ['project_id', 'evaluator_id', 'version'])
      .execute();
    // Sampling rules: the upsert key is (project, rule id); the rule cites an exact evaluator version.
    await db.schema
      .createTable('sampling_rules')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('rule_id', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_version', 'integer', (c) => c.notNull())
      .addColumn('subject_kind', 'text', (c) => c.notNull())
      .addColumn('sampling_rate', 'double precision', (c) => c.notNull())
      .addColumn('per_tick_limit', 'integer', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('sampling_rules_pk', ['project_id', 'rule_id'])
      .execute();
    await db.schema.createIndex('sampling_rules_active').on('sampling_rules').columns(['enabled', 'project_id']).execute();
  },
};
