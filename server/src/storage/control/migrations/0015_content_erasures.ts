/** Migration 0015_content_erasures (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // One row per erasure of recorded content: a subject's on demand, or a retention window's (scheduled).
    await db.schema
      .createTable('content_erasures')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject_kind', 'text')
      .addColumn('subject_id', 'text')
      .addColumn('content_classes', 'text', (c) => c.notNull())
      .addColumn('before_at', 'text')
      .addColumn('reason', 'text')
      .addColumn('requested_by', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('counts', 'text')
      .addColumn('detail_code', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'text')
      .execute();
    await db.schema.createIndex('content_erasures_list').on('content_erasures').columns(['project_id', 'created_at', 'id']).execute();
    // A request id names one erasure request in an organization (NULLs are distinct in both engines).
    await db.schema.createIndex('content_erasures_request').on('content_erasures').columns(['org_id', 'request_id']).unique().execute();
  },
};
