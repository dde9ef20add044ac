/** Control-store tables of evaluations (migrations 0016 onwards): evaluators and their versions, sampling rules and the budget, results. */

/**
 * Every evaluation table, by name. Each part adds its tables in its own block below (evaluators,
 * sampling and budget, results).
 */
export interface EvaluationTables {
  // -- evaluators (0016)
  // -- sampling rules and budget (0017)
  // -- results (0018)
}
