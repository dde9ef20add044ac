/** Migration 0023_experiments (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // An experiment: one exact dataset version and the exact evaluator versions (JSON array) that score it.
    await db.schema
      .createTable('experiments')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('experiment_id', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('dataset_id', 'text', (c) => c.notNull())
      .addColumn('dataset_version', 'integer', (c) => c.notNull())
      .addColumn('evaluators', 'text', (c) => c.notNull())
      .addColumn('trial_count', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('experiments_pk', ['project_id', 'experiment_id'])
      .execute();
    await db.schema.createIndex('experiments_dataset').on('experiments').columns(['project_id', 'dataset_id', 'experiment_id']).execute();
    // A trial: one arm of an experiment; `runs` is the JSON object item id -> run id, null for the frozen cases.
    await db.schema
      .createTable('experiment_trials')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('experiment_id', 'text', (c) => c.notNull())
      .addColumn('trial_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('release', 'text')
      .addColumn('runs', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('experiment_trials_pk', ['project_id', 'experiment_id', 'trial_id'])
      .execute();
    await db.schema.createIndex('experiment_trials_seq').on('experiment_trials').columns(['project_id', 'experiment_id', 'seq']).unique().execute();
  },
};
