/** Migration 0020_release_gates (append only: never edit once shipped). */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // A release gate: caller-owned id, bound to one exact evaluator version; never changed once written.
    await db.schema
      .createTable('release_gates')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('gate_id', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('evaluator_id', 'text', (c) => c.notNull())
      .addColumn('evaluator_version', 'integer', (c) => c.notNull())
      .addColumn('metric_name', 'text', (c) => c.notNull())
      .addColumn('release', 'text', (c) => c.notNull())
      .addColumn('baseline_release', 'text')
      .addColumn('min_samples', 'integer', (c) => c.notNull())
      .addColumn('min_mean', 'double precision')
      .addColumn('max_mean', 'double precision')
      .addColumn('max_mean_drop', 'double precision')
      .addColumn('max_mean_rise', 'double precision')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('release_gates_pk', ['project_id', 'gate_id'])
      .execute();
    await db.schema.createIndex('release_gates_release').on('release_gates').columns(['project_id', 'release', 'gate_id']).execute();
    // Every decision of a gate, appended; the same idempotency key is one decision (unique), seq orders them.
    await db.schema
      .createTable('release_gate_decisions')
      .addColumn('decision_id', 'text', (c) => c.primaryKey())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('gate_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'text', (c) => c.notNull())
      .addColumn('decided_by', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('reading', 'text', (c) => c.notNull())
      // JSON: the reasons and the evidence snapshot, exactly as answered.
      .addColumn('reasons', 'text', (c) => c.notNull())
      .addColumn('evidence', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('release_gate_decisions_key')
      .on('release_gate_decisions')
      .columns(['project_id', 'gate_id', 'idempotency_key'])
      .unique()
      .execute();
    await db.schema.createIndex('release_gate_decisions_seq').on('release_gate_decisions').columns(['project_id', 'gate_id', 'seq']).unique().execute();
    // The release series and gate evidence group one evaluator version's results by release; legacy ones are found by metric.
    await db.schema
      .createIndex('evaluation_results_release')
      .on('evaluation_results')
      .columns(['project_id', 'evaluator_id', 'evaluator_version', 'subject_release'])
      .execute();
    await db.schema.createIndex('evaluation_results_metric_release').on('evaluation_results').columns(['project_id', 'metric_name', 'subject_release']).execute();
  },
};
