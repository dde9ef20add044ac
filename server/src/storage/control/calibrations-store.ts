/** Calibration records in the control store (one code path for SQLite and PostgreSQL; docs/evaluations-calibration.md). */
import type { CalibrationFilter, CalibrationPosition, CalibrationStore } from '../../domains/evaluations/calibration/store.js';
import type { CalibrationRecord, CalibrationState, CalibrationStatistic, Exclusions, ValueKind } from '../../domains/evaluations/calibration/model.js';
import type { ControlDb } from './open.js';
import type { EvaluationCalibrationsTable } from './schema.js';
import { isUniqueViolation } from './unique.js';

const strings = (text: string): string[] => JSON.parse(text) as string[];
const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

const toRecord = (r: EvaluationCalibrationsTable): CalibrationRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  evaluatorId: r.evaluator_id,
  evaluatorVersion: Number(r.evaluator_version),
  metricName: r.metric_name,
  state: r.state as CalibrationState,
  statistic: r.statistic as CalibrationStatistic | null,
  valueKind: r.value_kind as ValueKind | null,
  agreement: num(r.agreement),
  agreementRate: num(r.agreement_rate),
  pairCount: Number(r.pair_count),
  excludedCount: Number(r.excluded_count),
  excluded: JSON.parse(r.excluded) as Exclusions,
  runsWithoutJudgment: Number(r.runs_without_judgment),
  minLabels: Number(r.min_labels),
  subjectRefs: strings(r.subject_refs),
  judgmentIds: strings(r.judgment_ids),
  resultIds: strings(r.result_ids),
  inputDigest: r.input_digest,
  createdAt: r.created_at,
  createdBy: r.created_by,
});

export class KyselyCalibrationStore implements CalibrationStore {
  constructor(private readonly db: ControlDb) {}

  async insert(r: CalibrationRecord): Promise<boolean> {
    try {
      await this.db
        .insertInto('evaluation_calibrations')
        .values({
          id: r.id,
          org_id: r.orgId,
          project_id: r.projectId,
          evaluator_id: r.evaluatorId,
          evaluator_version: r.evaluatorVersion,
          metric_name: r.metricName,
          state: r.state,
          statistic: r.statistic,
          value_kind: r.valueKind,
          agreement: r.agreement,
          agreement_rate: r.agreementRate,
          pair_count: r.pairCount,
          excluded_count: r.excludedCount,
          excluded: JSON.stringify(r.excluded),
          runs_without_judgment: r.runsWithoutJudgment,
          min_labels: r.minLabels,
          subject_refs: JSON.stringify(r.subjectRefs),
          judgment_ids: JSON.stringify(r.judgmentIds),
          result_ids: JSON.stringify(r.resultIds),
          input_digest: r.inputDigest,
          created_at: r.createdAt,
          created_by: r.createdBy,
        })
        .execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async byDigest(projectId: string, evaluatorId: string, inputDigest: string): Promise<CalibrationRecord | undefined> {
    const r = await this.db
      .selectFrom('evaluation_calibrations')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('evaluator_id', '=', evaluatorId)
      .where('input_digest', '=', inputDigest)
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async list(f: CalibrationFilter, o: { after?: CalibrationPosition; limit: number }): Promise<CalibrationRecord[]> {
    let q = this.db.selectFrom('evaluation_calibrations').selectAll().where('project_id', '=', f.projectId).where('evaluator_id', '=', f.evaluatorId);
    if (f.evaluatorVersion !== undefined) q = q.where('evaluator_version', '=', f.evaluatorVersion);
    if (f.states !== undefined) q = q.where('state', 'in', f.states);
    const after = o.after;
    if (after) q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(o.limit).execute();
    return rows.map(toRecord);
  }
}
