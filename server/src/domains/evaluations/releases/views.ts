/** Records -> response shapes of the release series and release gates. */
import type { DecisionRecord, GateRecord, ReleaseAggregate } from './store.js';
import type { Series } from './series.js';
import { DECISION_HISTORY, type GateWithHistory } from './gates.js';

const aggregate = (a: ReleaseAggregate) => ({ sample_count: a.sampleCount, mean: a.mean, first_observed_at: a.firstObservedAt, last_observed_at: a.lastObservedAt });

export function seriesView(s: Series) {
  return {
    evaluator: { evaluator_id: s.evaluatorId, version: s.evaluatorVersion },
    metric_name: s.metricName,
    ordering_strategy: s.strategy,
    points: s.points.map((p) => ({ release: p.release, ...aggregate(p), delta_mean: p.deltaMean })),
    unreleased_present: s.unreleased !== null,
    unreleased: s.unreleased && aggregate(s.unreleased),
    excluded_counts: s.excluded,
    truncated: s.truncated,
  };
}

export function gateView(g: GateRecord) {
  return {
    gate_id: g.gateId,
    project_id: g.projectId,
    display_name: g.displayName,
    evaluator: { evaluator_id: g.evaluatorId, version: g.evaluatorVersion },
    metric_name: g.metricName,
    release: g.release,
    baseline_release: g.baselineRelease,
    min_samples: g.minSamples,
    min_mean: g.minMean,
    max_mean: g.maxMean,
    max_mean_drop: g.maxMeanDrop,
    max_mean_rise: g.maxMeanRise,
    created_at: g.createdAt,
    created_by: g.createdBy,
  };
}

export function decisionView(d: DecisionRecord) {
  return {
    decision_id: d.decisionId,
    gate_id: d.gateId,
    idempotency_key: d.idempotencyKey,
    decided_at: d.decidedAt,
    decided_by: d.decidedBy,
    outcome: d.outcome,
    reading: d.reading,
    reasons: d.reasons,
    evidence: d.evidence,
  };
}

export function gateWithHistoryView(h: GateWithHistory) {
  return {
    ...gateView(h.gate),
    decisions: h.decisions.map(decisionView),
    decision_count: h.decisionCount,
    decisions_truncated: h.decisionCount > DECISION_HISTORY,
  };
}
