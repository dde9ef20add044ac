/** Migration 0017_evaluation_budget (append only: never edit once shipped): the evaluation budget and the sampling job's state. */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One budget per organization; absent means the default (no judge spend, no count cap).
    await db.schema
      .createTable('evaluation_budgets')
      .addColumn('org_id', 'text', (c) => c.primaryKey())
      .addColumn('daily_limit_nano_usd', 'bigint', (c) => c.notNull())
      .addColumn('daily_evaluation_limit', 'bigint')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('updated_by', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    // What each organization spent per UTC day: one row per day, incremented in place (never read-modify-write).
    await db.schema
      .createTable('evaluation_budget_days')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('spent_nano_usd', 'bigint', (c) => c.notNull())
      .addColumn('evaluations', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluation_budget_days_pk', ['org_id', 'day'])
      .execute();
    // Where each sampling rule is in its project's runs: the last run passed (start, trace id), the run being
    // evaluated (claimed before the evaluation, cleared after), and a version every advance compares and sets.
    await db.schema
      .createTable('evaluation_sampling_cursors')
      .addColumn('rule_id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('after_start_us', 'bigint', (c) => c.notNull())
      .addColumn('after_trace_id', 'text', (c) => c.notNull())
      .addColumn('pending_start_us', 'bigint')
      .addColumn('pending_trace_id', 'text')
      .addColumn('paused_at', 'text')
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // Sampled runs that could not be measured yet (or whose evaluation failed): evaluated again with backoff, then given up.
    await db.schema
      .createTable('evaluation_sampling_retries')
      .addColumn('rule_id', 'text', (c) => c.notNull())
      .addColumn('trace_id', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('start_us', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_at', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('evaluation_sampling_retries_pk', ['rule_id', 'trace_id'])
      .execute();
    await db.schema.createIndex('evaluation_sampling_retries_due').on('evaluation_sampling_retries').columns(['rule_id', 'state', 'next_at']).execute();
  },
};
