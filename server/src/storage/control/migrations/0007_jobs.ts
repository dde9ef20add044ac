/** Migration 0007_jobs (append only: never edit once shipped). */
import { sql, type Kysely, type Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // The background job runner's queue (server/src/jobs/, docs/jobs.md).
    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('dedup_key', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('run_at', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('every_seconds', 'integer')
      .addColumn('rerun_requested', 'integer', (c) => c.notNull())
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'text')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    // At most one pending-or-running job per (kind, key); a null key never collides.
    await db.schema
      .createIndex('jobs_live_key')
      .on('jobs')
      .columns(['kind', 'dedup_key'])
      .unique()
      .where(sql<boolean>`status in ('pending', 'running')`)
      .execute();
    // The claim: due pending jobs by run_at, running ones by the end of their lease.
    await db.schema.createIndex('jobs_due').on('jobs').columns(['status', 'run_at']).execute();
    await db.schema.createIndex('jobs_lease').on('jobs').columns(['status', 'locked_until']).execute();
    await db.schema.createIndex('jobs_finished').on('jobs').columns(['status', 'finished_at']).execute();
  },
};
