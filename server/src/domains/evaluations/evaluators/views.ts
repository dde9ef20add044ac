/** Records -> response shapes of the evaluator and sampling-rule routes. */
import type { EvaluatorVersionRecord } from '../model.js';
import { isActive } from './sampling-rules.js';
import type { EvaluatorWithLatest } from './service.js';
import type { StoredSamplingRule } from './store.js';

export function versionView(r: EvaluatorVersionRecord) {
  return {
    project_id: r.projectId,
    evaluator_id: r.evaluatorId,
    version: r.version,
    display_name: r.displayName,
    metric_name: r.metricName,
    kind: r.kind,
    config_json: r.configJson,
    created_at: r.createdAt,
    created_by: r.createdBy,
  };
}

export function evaluatorSummaryView({ head, latest }: EvaluatorWithLatest) {
  return {
    project_id: head.projectId,
    evaluator_id: head.evaluatorId,
    kind: head.kind,
    created_at: head.createdAt,
    created_by: head.createdBy,
    latest_version: head.latestVersion,
    latest: versionView(latest),
  };
}

/** With every version number: versions are 1..latest and none is ever removed. */
export function evaluatorView(e: EvaluatorWithLatest) {
  return { ...evaluatorSummaryView(e), versions: Array.from({ length: e.head.latestVersion }, (_, i) => i + 1) };
}

export function ruleView(r: StoredSamplingRule) {
  return {
    rule_id: r.ruleId,
    project_id: r.projectId,
    evaluator: { evaluator_id: r.evaluator.evaluator_id, version: r.evaluator.version },
    subject_kind: r.subjectKind,
    sampling_rate: r.samplingRate,
    per_tick_limit: r.perTickLimit,
    enabled: r.enabled,
    active: isActive(r),
    created_at: r.createdAt,
    created_by: r.createdBy,
    updated_at: r.updatedAt,
    updated_by: r.updatedBy,
  };
}
