/** Evaluation results, claims and unscored subjects in the control store (one code path for SQLite and PostgreSQL; docs/evaluations.md). */
import { sql, type SelectQueryBuilder } from 'kysely';
import type {
  EvaluationKey,
  EvaluationResultStore,
  ResultFilter,
  ResultPosition,
  ResultRecord,
  UnscoredRecord,
} from '../../domains/evaluations/results/store.js';
import type { Execution } from '../../domains/evaluations/model.js';
import type { ControlDb } from './open.js';
import type { ControlDatabase, EvaluationResultsTable, EvaluationUnscoredTable } from './schema.js';
import { isUniqueViolation } from './unique.js';

function parseJson<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

const toResult = (r: EvaluationResultsTable): ResultRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  evaluatorId: r.evaluator_id,
  evaluatorVersion: Number(r.evaluator_version),
  metricName: r.metric_name,
  mode: r.mode,
  subjectKind: r.subject_kind,
  subjectRef: r.subject_ref,
  numericValue: r.numeric_value === null ? null : Number(r.numeric_value),
  label: r.label,
  explanation: r.explanation,
  subjectRelease: r.subject_release,
  legacySource: r.legacy_source,
  occurredAt: r.occurred_at,
  evaluatedAt: r.evaluated_at,
  execution: parseJson<Execution>(r.execution),
});

const toUnscored = (r: EvaluationUnscoredTable): UnscoredRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  evaluatorId: r.evaluator_id,
  evaluatorVersion: Number(r.evaluator_version),
  subjectKind: r.subject_kind,
  subjectRef: r.subject_ref,
  mode: r.mode,
  outcome: r.outcome as UnscoredRecord['outcome'],
  reason: r.reason,
  details: parseJson<Record<string, unknown>>(r.details) ?? {},
  attempts: Number(r.attempts),
  firstAt: r.first_at,
  lastAt: r.last_at,
});

function filtered<O>(q: SelectQueryBuilder<ControlDatabase, 'evaluation_results', O>, f: ResultFilter): SelectQueryBuilder<ControlDatabase, 'evaluation_results', O> {
  q = q.where('project_id', '=', f.projectId);
  if (f.metricName !== undefined) q = q.where('metric_name', '=', f.metricName);
  if (f.evaluatorId !== undefined) q = q.where('evaluator_id', '=', f.evaluatorId);
  if (f.subjectRefs !== undefined) q = q.where('subject_ref', 'in', f.subjectRefs);
  if (f.modes !== undefined) q = q.where('mode', 'in', f.modes);
  if (f.start !== undefined) q = q.where('occurred_at', '>=', f.start);
  if (f.end !== undefined) q = q.where('occurred_at', '<', f.end);
  return q;
}

const keyWhere = <Q extends SelectQueryBuilder<ControlDatabase, 'evaluation_results' | 'evaluation_unscored', object>>(q: Q, k: EvaluationKey): Q =>
  q
    .where('project_id', '=', k.projectId)
    .where('evaluator_id', '=', k.evaluatorId)
    .where('evaluator_version', '=', k.evaluatorVersion)
    .where('subject_kind', '=', k.subjectKind)
    .where('subject_ref', '=', k.subjectRef) as Q;

export class KyselyEvaluationResultStore implements EvaluationResultStore {
  constructor(private readonly db: ControlDb) {}

  async find(k: EvaluationKey): Promise<ResultRecord | undefined> {
    const r = await keyWhere(this.db.selectFrom('evaluation_results').selectAll(), k).executeTakeFirst();
    return r && toResult(r);
  }

  async insert(r: ResultRecord): Promise<boolean> {
    try {
      await this.db
        .insertInto('evaluation_results')
        .values({
          id: r.id,
          org_id: r.orgId,
          project_id: r.projectId,
          evaluator_id: r.evaluatorId,
          evaluator_version: r.evaluatorVersion,
          metric_name: r.metricName,
          mode: r.mode,
          subject_kind: r.subjectKind,
          subject_ref: r.subjectRef,
          numeric_value: r.numericValue,
          label: r.label,
          explanation: r.explanation,
          subject_release: r.subjectRelease,
          legacy_source: r.legacySource,
          occurred_at: r.occurredAt,
          evaluated_at: r.evaluatedAt,
          execution: r.execution === null ? null : JSON.stringify(r.execution),
        })
        .execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async page(f: ResultFilter, o: { after?: ResultPosition; limit: number }): Promise<ResultRecord[]> {
    let q = filtered(this.db.selectFrom('evaluation_results').selectAll(), f);
    const after = o.after;
    if (after) q = q.where((eb) => eb.or([eb('evaluated_at', '<', after.evaluatedAt), eb.and([eb('evaluated_at', '=', after.evaluatedAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('evaluated_at', 'desc').orderBy('id', 'desc').limit(o.limit).execute();
    return rows.map(toResult);
  }

  async perSubject(f: ResultFilter & { subjectRefs: string[] }, perSubject: number): Promise<ResultRecord[]> {
    const ranked = filtered(
      this.db
        .selectFrom('evaluation_results')
        .selectAll()
        .select(sql<number>`row_number() over (partition by subject_ref order by evaluated_at desc, id desc)`.as('rn')),
      f,
    );
    const rows = await this.db
      .selectFrom(ranked.as('r'))
      .selectAll()
      .where('rn', '<=', perSubject)
      .orderBy('subject_ref')
      .orderBy('evaluated_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => toResult(r as EvaluationResultsTable));
  }

  async claim(claimKey: string, token: string, now: string, expiresAt: string): Promise<boolean> {
    // Insert, or take over an expired claim; a live claim of another token is left as it is.
    const r = await this.db
      .insertInto('evaluation_claims')
      .values({ claim_key: claimKey, token, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column('claim_key')
          .doUpdateSet({ token, expires_at: expiresAt })
          .where('evaluation_claims.expires_at', '<=', now),
      )
      .returning('token')
      .executeTakeFirst();
    return r?.token === token;
  }

  async release(claimKey: string, token: string): Promise<void> {
    await this.db.deleteFrom('evaluation_claims').where('claim_key', '=', claimKey).where('token', '=', token).execute();
  }

  async recordUnscored(r: UnscoredRecord): Promise<UnscoredRecord> {
    const row = await this.db
      .insertInto('evaluation_unscored')
      .values({
        id: r.id,
        org_id: r.orgId,
        project_id: r.projectId,
        evaluator_id: r.evaluatorId,
        evaluator_version: r.evaluatorVersion,
        subject_kind: r.subjectKind,
        subject_ref: r.subjectRef,
        mode: r.mode,
        outcome: r.outcome,
        reason: r.reason,
        details: JSON.stringify(r.details),
        attempts: 1,
        first_at: r.firstAt,
        last_at: r.lastAt,
      })
      .onConflict((oc) =>
        oc.columns(['project_id', 'evaluator_id', 'evaluator_version', 'subject_kind', 'subject_ref']).doUpdateSet({
          mode: r.mode,
          outcome: r.outcome,
          reason: r.reason,
          details: JSON.stringify(r.details),
          attempts: sql<number>`evaluation_unscored.attempts + 1`,
          last_at: r.lastAt,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return toUnscored(row);
  }

  async clearUnscored(k: EvaluationKey): Promise<void> {
    await this.db
      .deleteFrom('evaluation_unscored')
      .where('project_id', '=', k.projectId)
      .where('evaluator_id', '=', k.evaluatorId)
      .where('evaluator_version', '=', k.evaluatorVersion)
      .where('subject_kind', '=', k.subjectKind)
      .where('subject_ref', '=', k.subjectRef)
      .execute();
  }

  async unscored(
    f: { projectId: string; evaluatorId?: string; subjectRefs?: string[]; outcomes?: string[] },
    o: { after?: { lastAt: string; id: string }; limit: number },
  ): Promise<UnscoredRecord[]> {
    let q = this.db.selectFrom('evaluation_unscored').selectAll().where('project_id', '=', f.projectId);
    if (f.evaluatorId !== undefined) q = q.where('evaluator_id', '=', f.evaluatorId);
    if (f.subjectRefs !== undefined) q = q.where('subject_ref', 'in', f.subjectRefs);
    if (f.outcomes !== undefined) q = q.where('outcome', 'in', f.outcomes);
    const after = o.after;
    if (after) q = q.where((eb) => eb.or([eb('last_at', '<', after.lastAt), eb.and([eb('last_at', '=', after.lastAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('last_at', 'desc').orderBy('id', 'desc').limit(o.limit).execute();
    return rows.map(toUnscored);
  }
}
