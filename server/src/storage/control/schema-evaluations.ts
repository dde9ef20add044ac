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
  // -- results (0018)
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
