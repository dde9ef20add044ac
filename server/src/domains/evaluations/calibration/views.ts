/** Calibration records -> response shapes: fields that were not computed are absent, never null or 0. */
import type { CalibrationRecord } from './model.js';

export function calibrationView(r: CalibrationRecord) {
  return {
    calibration_id: r.id,
    project_id: r.projectId,
    evaluator: { evaluator_id: r.evaluatorId, version: r.evaluatorVersion },
    metric_name: r.metricName,
    state: r.state,
    ...(r.statistic !== null ? { statistic: r.statistic } : {}),
    ...(r.valueKind !== null ? { value_kind: r.valueKind } : {}),
    ...(r.state === 'CALIBRATED' && r.agreement !== null ? { agreement: r.agreement } : {}),
    ...(r.agreementRate !== null ? { agreement_rate: r.agreementRate } : {}),
    pair_count: r.pairCount,
    excluded_count: r.excludedCount,
    excluded: r.excluded,
    runs_without_judgment: r.runsWithoutJudgment,
    min_labels: r.minLabels,
    subject_refs: r.subjectRefs,
    judgment_ids: r.judgmentIds,
    result_ids: r.resultIds,
    created_at: r.createdAt,
    created_by: r.createdBy,
  };
}
