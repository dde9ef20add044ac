/** Control-store tables of evaluations (migrations 0016 onwards): evaluators and their versions, sampling rules and the budget, results. */

/**
 * Every evaluation table, by name. Each part adds its tables in its own block below (evaluators,
 * sampling and budget, results).
 */
export interface EvaluationTables {
  // -- evaluators (0016)
  // -- sampling rules and budget (0017)
  evaluation_budgets: EvaluationBudgetsTable;
  evaluation_budget_days: EvaluationBudgetDaysTable;
  evaluation_sampling_cursors: EvaluationSamplingCursorsTable;
  evaluation_sampling_retries: EvaluationSamplingRetriesTable;
  // -- results (0018)
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
