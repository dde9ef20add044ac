/** Experiments and their trials in the control store (one code path for SQLite and PostgreSQL; docs/evaluations-experiments.md). */
import { sql } from 'kysely';
import type { ExperimentListFilter, ExperimentRecord, ExperimentStore, StoredOutcome, TrialRecord, TrialRole } from '../../domains/evaluations/experiments/store.js';
import type { EvaluatorRef } from '../../domains/evaluations/model.js';
import type { ControlDb } from './open.js';
import type { ExperimentsTable, ExperimentTrialsTable } from './schema.js';

/** Subject refs per `in (...)` read (well under both engines' bound-parameter limits). */
const CHUNK = 500;

const toExperiment = (r: ExperimentsTable): ExperimentRecord => ({
  orgId: r.org_id,
  projectId: r.project_id,
  experimentId: r.experiment_id,
  displayName: r.display_name,
  datasetId: r.dataset_id,
  datasetVersion: Number(r.dataset_version),
  evaluators: JSON.parse(r.evaluators) as EvaluatorRef[],
  createdAt: r.created_at,
  createdBy: r.created_by,
});

const toTrial = (r: ExperimentTrialsTable): TrialRecord => ({
  projectId: r.project_id,
  experimentId: r.experiment_id,
  trialId: r.trial_id,
  role: r.role as TrialRole,
  label: r.label,
  release: r.release,
  runs: r.runs === null ? null : (JSON.parse(r.runs) as Record<string, string>),
  createdAt: r.created_at,
  createdBy: r.created_by,
});

export class KyselyExperimentStore implements ExperimentStore {
  constructor(private readonly db: ControlDb) {}

  async create(r: ExperimentRecord): Promise<void> {
    await this.db
      .insertInto('experiments')
      .values({
        project_id: r.projectId,
        experiment_id: r.experimentId,
        org_id: r.orgId,
        display_name: r.displayName,
        dataset_id: r.datasetId,
        dataset_version: r.datasetVersion,
        evaluators: JSON.stringify(r.evaluators.map((e) => ({ evaluator_id: e.evaluator_id, version: e.version }))),
        trial_count: 0,
        created_at: r.createdAt,
        created_by: r.createdBy,
      })
      .execute();
  }

  async get(projectId: string, experimentId: string) {
    const r = await this.db.selectFrom('experiments').selectAll().where('project_id', '=', projectId).where('experiment_id', '=', experimentId).executeTakeFirst();
    return r && toExperiment(r);
  }

  async lock(projectId: string, experimentId: string) {
    // A no-op update takes the row's write lock (PostgreSQL); SQLite has one writer at a time.
    const r = await this.db
      .updateTable('experiments')
      .set({ trial_count: sql<number>`trial_count` })
      .where('project_id', '=', projectId)
      .where('experiment_id', '=', experimentId)
      .returningAll()
      .executeTakeFirst();
    return r && toExperiment(r);
  }

  async list(f: ExperimentListFilter, o: { after?: string; limit: number }) {
    let q = this.db.selectFrom('experiments').selectAll().where('project_id', '=', f.projectId);
    if (f.datasetId !== undefined) q = q.where('dataset_id', '=', f.datasetId);
    if (o.after !== undefined) q = q.where('experiment_id', '>', o.after);
    const rows = await q.orderBy('experiment_id', 'asc').limit(o.limit + 1).execute();
    return rows.map(toExperiment);
  }

  async addTrial(r: TrialRecord): Promise<void> {
    const bumped = await this.db
      .updateTable('experiments')
      .set({ trial_count: sql<number>`trial_count + 1` })
      .where('project_id', '=', r.projectId)
      .where('experiment_id', '=', r.experimentId)
      .returning('trial_count')
      .executeTakeFirstOrThrow();
    await this.db
      .insertInto('experiment_trials')
      .values({
        project_id: r.projectId,
        experiment_id: r.experimentId,
        trial_id: r.trialId,
        seq: Number(bumped.trial_count),
        role: r.role,
        label: r.label,
        release: r.release,
        runs: r.runs === null ? null : JSON.stringify(r.runs),
        created_at: r.createdAt,
        created_by: r.createdBy,
      })
      .execute();
  }

  async trials(projectId: string, experimentId: string) {
    const rows = await this.db
      .selectFrom('experiment_trials')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('experiment_id', '=', experimentId)
      .orderBy('seq', 'asc')
      .orderBy('trial_id', 'asc')
      .execute();
    return rows.map(toTrial);
  }

  async outcomes(projectId: string, evaluator: EvaluatorRef, subjectKind: string, subjectRefs: string[]): Promise<Map<string, StoredOutcome>> {
    const out = new Map<string, StoredOutcome>();
    const refs = [...new Set(subjectRefs)];
    for (let i = 0; i < refs.length; i += CHUNK) {
      const chunk = refs.slice(i, i + CHUNK);
      const unscored = await this.db
        .selectFrom('evaluation_unscored')
        .select(['subject_ref', 'outcome', 'reason'])
        .where('project_id', '=', projectId)
        .where('evaluator_id', '=', evaluator.evaluator_id)
        .where('evaluator_version', '=', evaluator.version)
        .where('subject_kind', '=', subjectKind)
        .where('subject_ref', 'in', chunk)
        .execute();
      for (const u of unscored) out.set(u.subject_ref, { state: u.outcome === 'withheld' ? 'withheld' : 'unmeasured', reason: u.reason });
      const scored = await this.db
        .selectFrom('evaluation_results')
        .select(['subject_ref', 'numeric_value', 'label', 'mode'])
        .where('project_id', '=', projectId)
        .where('evaluator_id', '=', evaluator.evaluator_id)
        .where('evaluator_version', '=', evaluator.version)
        .where('subject_kind', '=', subjectKind)
        .where('subject_ref', 'in', chunk)
        .execute();
      for (const s of scored)
        out.set(s.subject_ref, { state: 'scored', numericValue: s.numeric_value === null ? null : Number(s.numeric_value), label: s.label, mode: s.mode });
    }
    return out;
  }
}
