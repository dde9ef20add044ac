/** Control-store tables of evaluations (migrations 0016 onwards): evaluators and their versions, sampling rules and the budget, results. */

/**
 * Every evaluation table, by name. Each part adds its tables in its own block below (evaluators,
 * sampling and budget, results).
 */
export interface EvaluationTables {
  // -- evaluators (0016)
  evaluators: EvaluatorsTable;
  evaluator_versions: EvaluatorVersionsTable;
  sampling_rules: SamplingRulesTable;
  // -- sampling rules and budget (0017)
  evaluation_budgets: EvaluationBudgetsTable;
  evaluation_budget_days: EvaluationBudgetDaysTable;
  evaluation_sampling_cursors: EvaluationSamplingCursorsTable;
  evaluation_sampling_retries: EvaluationSamplingRetriesTable;
  // -- results (0018)
  evaluation_results: EvaluationResultsTable;
  evaluation_claims: EvaluationClaimsTable;
  evaluation_unscored: EvaluationUnscoredTable;
  // -- datasets (0022)
  evaluation_datasets: EvaluationDatasetsTable;
  evaluation_dataset_versions: EvaluationDatasetVersionsTable;
  evaluation_dataset_items: EvaluationDatasetItemsTable;
  evaluation_dataset_cases: EvaluationDatasetCasesTable;
  // -- human judgments (0019)
  evaluation_annotations: EvaluationAnnotationsTable;
  // -- release gates (0020)
  release_gates: ReleaseGatesTable;
  release_gate_decisions: ReleaseGateDecisionsTable;
  // -- calibration records (0021)
  evaluation_calibrations: EvaluationCalibrationsTable;
  // -- experiments (0023)
  experiments: ExperimentsTable;
  experiment_trials: ExperimentTrialsTable;
}

/** One result per evaluator version per subject (domains/evaluations/results). Added by 0018_evaluation_results. */
export interface EvaluationResultsTable {
  id: string;
  org_id: string;
  project_id: string;
  evaluator_id: string;
  /** 0 marks a legacy result. */
  evaluator_version: number;
  metric_name: string;
  mode: string;
  subject_kind: string;
  subject_ref: string;
  numeric_value: number | null;
  label: string | null;
  explanation: string | null;
  subject_release: string | null;
  /** '' except for legacy results. */
  legacy_source: string;
  occurred_at: string;
  evaluated_at: string;
  /** JSON of the execution record; null when written before it existed. */
  execution: string | null;
}

/** An evaluation under way (409 to a second asker until it ends or expires). Added by 0018_evaluation_results. */
export interface EvaluationClaimsTable {
  claim_key: string;
  token: string;
  expires_at: string;
}

/** A subject that could not be scored: `unmeasured` or `withheld`. Added by 0018_evaluation_results. */
export interface EvaluationUnscoredTable {
  id: string;
  org_id: string;
  project_id: string;
  evaluator_id: string;
  evaluator_version: number;
  subject_kind: string;
  subject_ref: string;
  mode: string;
  outcome: string;
  reason: string;
  /** JSON object (the withholding: content_class, boundary, decided_by). */
  details: string;
  attempts: number;
  first_at: string;
  last_at: string;
}

// ---- evaluators (0016)

/** One row per evaluator: the kind it keeps for life and its latest version (added by 0016_evaluators). */
export interface EvaluatorsTable {
  project_id: string;
  evaluator_id: string;
  org_id: string;
  kind: string;
  latest_version: number;
  created_at: string;
  created_by: string;
}

/** Every version of every evaluator, immutable; config_json exactly as sent (added by 0016_evaluators). */
export interface EvaluatorVersionsTable {
  project_id: string;
  evaluator_id: string;
  version: number;
  org_id: string;
  display_name: string;
  metric_name: string;
  kind: string;
  config_json: string;
  created_at: string;
  created_by: string;
}

/** Sampling rules, upserted by (project, rule id); they cite an exact evaluator version (added by 0016_evaluators). */
export interface SamplingRulesTable {
  project_id: string;
  rule_id: string;
  org_id: string;
  evaluator_id: string;
  evaluator_version: number;
  subject_kind: string;
  sampling_rate: number;
  per_tick_limit: number;
  enabled: number; // 0 | 1
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

// -- sampling rules and budget (0017)

/** The organization's evaluation budget (absent: the default, see sampling/budget.ts). */
export interface EvaluationBudgetsTable {
  org_id: string;
  /** Billionths of a US dollar of charged judge cost per UTC day. */
  daily_limit_nano_usd: number | string;
  /** Evaluations of any kind per UTC day; null: no count cap. */
  daily_evaluation_limit: number | string | null;
  updated_at: string;
  updated_by: string;
  version: number;
}

/** What an organization spent on one UTC day (`day` is YYYY-MM-DD). */
export interface EvaluationBudgetDaysTable {
  org_id: string;
  day: string;
  spent_nano_usd: number | string;
  evaluations: number | string;
}

/** A sampling rule's position in its project's runs (ordered by start, then trace id). */
export interface EvaluationSamplingCursorsTable {
  rule_id: string;
  org_id: string;
  project_id: string;
  after_start_us: number | string;
  after_trace_id: string;
  pending_start_us: number | string | null;
  pending_trace_id: string | null;
  /** Set when a tick found the rule inactive; cleared when it resumes. */
  paused_at: string | null;
  version: number;
  updated_at: string;
}

/** A sampled run to evaluate again (`waiting`), or given up (`given_up`). */
export interface EvaluationSamplingRetriesTable {
  rule_id: string;
  trace_id: string;
  org_id: string;
  project_id: string;
  start_us: number | string;
  state: string;
  attempts: number;
  next_at: string;
  reason: string;
  updated_at: string;
}

// ---- datasets (0022)

/** One row per dataset: editable metadata and the latest sealed version, 0 when none (added by 0022_datasets). */
export interface EvaluationDatasetsTable {
  project_id: string;
  dataset_id: string;
  org_id: string;
  display_name: string;
  description: string;
  latest_version: number;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

/** Every sealed dataset version, never updated (added by 0022_datasets). */
export interface EvaluationDatasetVersionsTable {
  project_id: string;
  dataset_id: string;
  version: number;
  item_count: number;
  /** promotion | removal */
  change: string;
  changed_count: number;
  sealed_at: string;
  sealed_by: string;
}

/** The items of each version; item_id is the case id (added by 0022_datasets). */
export interface EvaluationDatasetItemsTable {
  project_id: string;
  dataset_id: string;
  version: number;
  item_id: string;
  position: number;
  review_annotation_id: string;
  reviewer_id: string;
  reviewed_at: string;
}

/** Frozen cases by content digest, once per project (added by 0022_datasets). */
export interface EvaluationDatasetCasesTable {
  project_id: string;
  case_id: string;
  case_json: string;
}

// ---- human judgments (0019)

/** One person's judgment of one run for one metric (domains/evaluations/annotations). Added by 0019_annotations. */
export interface EvaluationAnnotationsTable {
  id: string;
  org_id: string;
  project_id: string;
  run_id: string;
  /** Lower-cased and trimmed. */
  metric_name: string;
  numeric_value: number | null;
  label: string | null;
  comment: string;
  /** A user id: judgments are always a person's. */
  author_id: string;
  created_at: string;
}

// -- release gates (0020)

/** A release gate bound to one exact evaluator version; never changed once written (added by 0020_release_gates). */
export interface ReleaseGatesTable {
  project_id: string;
  gate_id: string;
  org_id: string;
  display_name: string;
  evaluator_id: string;
  evaluator_version: number;
  /** The metric of the bound version (legacy results of it are recognized, and refused, by metric). */
  metric_name: string;
  release: string;
  /** Null: the release just before `release` in the release series. */
  baseline_release: string | null;
  min_samples: number;
  min_mean: number | null;
  max_mean: number | null;
  max_mean_drop: number | null;
  max_mean_rise: number | null;
  created_at: string;
  created_by: string;
}

/** One decision of a gate; (project, gate, idempotency_key) is unique (added by 0020_release_gates). */
export interface ReleaseGateDecisionsTable {
  decision_id: string;
  project_id: string;
  gate_id: string;
  /** 1, 2, ... per gate: the order decisions were appended. */
  seq: number;
  idempotency_key: string;
  decided_at: string;
  decided_by: string;
  outcome: string;
  reading: string;
  /** JSON array of {code, message}. */
  reasons: string;
  /** JSON object: the evidence snapshot. */
  evidence: string;
}

// -- calibration records (0021)

/** Calibration records, immutable; unique per (project, evaluator, input digest). Added by 0021_calibrations. */
export interface EvaluationCalibrationsTable {
  id: string;
  org_id: string;
  project_id: string;
  evaluator_id: string;
  evaluator_version: number;
  metric_name: string;
  state: string;
  statistic: string | null;
  value_kind: string | null;
  agreement: number | null;
  agreement_rate: number | null;
  pair_count: number;
  excluded_count: number;
  /** JSON object: counts by exclusion reason. */
  excluded: string;
  runs_without_judgment: number;
  min_labels: number;
  /** JSON arrays of strings. */
  subject_refs: string;
  judgment_ids: string;
  result_ids: string;
  input_digest: string;
  created_at: string;
  created_by: string;
}

// -- experiments (0023)

/** An experiment over one exact dataset version (domains/evaluations/experiments). Added by 0023_experiments. */
export interface ExperimentsTable {
  project_id: string;
  experiment_id: string;
  org_id: string;
  display_name: string;
  dataset_id: string;
  dataset_version: number;
  /** JSON array of {evaluator_id, version}, in the order given. */
  evaluators: string;
  /** Trials written so far (the next trial's seq). */
  trial_count: number;
  created_at: string;
  created_by: string;
}

/** One arm of an experiment. Added by 0023_experiments. */
export interface ExperimentTrialsTable {
  project_id: string;
  experiment_id: string;
  trial_id: string;
  /** Creation order within the experiment, from 1. */
  seq: number;
  role: string;
  label: string;
  release: string | null;
  /** JSON object item id -> run id; null: the frozen cases themselves. */
  runs: string | null;
  created_at: string;
  created_by: string;
}
