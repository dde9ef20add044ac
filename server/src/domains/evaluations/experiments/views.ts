/** Stored experiments and trials, and the service's answers -> API objects (docs/evaluations-experiments.md). */
import type { ArmCounts } from './comparison.js';
import type { ExperimentService } from './service.js';
import type { ExperimentRecord, TrialRecord } from './store.js';

export function experimentView(e: ExperimentRecord) {
  return {
    project_id: e.projectId,
    experiment_id: e.experimentId,
    display_name: e.displayName,
    dataset: { dataset_id: e.datasetId, version: e.datasetVersion },
    evaluators: e.evaluators.map((r) => ({ evaluator_id: r.evaluator_id, version: r.version })),
    created_at: e.createdAt,
    created_by: e.createdBy,
  };
}

function trialFields(t: TrialRecord, mappedItems: number) {
  return {
    trial_id: t.trialId,
    role: t.role,
    label: t.label,
    ...(t.release !== null ? { release: t.release } : {}),
    subjects: t.runs === null ? ('FROZEN_CASES' as const) : ('RUNS' as const),
    mapped_items: mappedItems,
    created_at: t.createdAt,
    created_by: t.createdBy,
  };
}

export function trialView(t: TrialRecord, created: boolean) {
  return { ...trialFields(t, t.runs === null ? 0 : Object.keys(t.runs).length), ...(t.runs !== null ? { runs: t.runs } : {}), created };
}

type Detail = Awaited<ReturnType<ExperimentService<unknown>['detail']>>;
type Comparison = Awaited<ReturnType<ExperimentService<unknown>['comparison']>>;

export function experimentDetailView(d: Detail) {
  return {
    ...experimentView(d.experiment),
    items: d.items,
    trials: d.trials.map((t) => ({ ...trialFields(t.trial, t.mappedItems), status: t.status, counts: t.counts })),
  };
}

const counts = (c: ArmCounts) => ({ ...c });

export function comparisonView(c: Comparison) {
  return {
    experiment_id: c.experiment.experimentId,
    dataset: { dataset_id: c.experiment.datasetId, version: c.experiment.datasetVersion },
    items: c.items,
    baseline_trial_id: c.baseline?.trialId ?? null,
    complete: c.complete,
    pending: c.pending,
    metrics: c.metrics.map((m) => ({
      evaluator: m.evaluator,
      metric_name: m.metricName,
      trials: m.arms.map((a) => ({
        trial_id: a.trial.trialId,
        role: a.trial.role,
        label: a.trial.label,
        ...(a.trial.release !== null ? { release: a.trial.release } : {}),
        counts: counts(a.summary.counts),
        ...(a.summary.mean !== undefined ? { mean: a.summary.mean } : {}),
        labels: a.summary.labels,
      })),
      versus_baseline: m.candidates.map((v) => ({ trial_id: v.trial.trialId, label: v.trial.label, ...v.delta })),
    })),
  };
}
