/**
 * The model-less scorers (docs/evaluations-scoring.md): deterministic assertions and measurements, and
 * reference trajectories. The model judge (judge/) scores `EVALUATOR_KIND_LLM_JUDGE`.
 */
import type { EvaluatorConfig, ScoreOutcome, SubjectFacts } from '../model.js';
import { scoreDeterministic } from './deterministic.js';
import { checkFamily } from './family.js';
import { scoreTrajectory } from './trajectory.js';

export { AgentFactsReader, type RunReleaseReader } from './facts.js';
export { checkFamily, subjectKindOf } from './family.js';
export { scoreDeterministic } from './deterministic.js';
export { scoreTrajectory } from './trajectory.js';

/** Scores a deterministic or trajectory evaluator on the subject's facts (a judge evaluator is not model-less). */
export function scoreModelless(parsed: EvaluatorConfig, facts: SubjectFacts): ScoreOutcome {
  if (parsed.kind === 'EVALUATOR_KIND_DETERMINISTIC') return scoreDeterministic(parsed.config, facts);
  if (parsed.kind === 'EVALUATOR_KIND_REFERENCE_TRAJECTORY') return scoreTrajectory(parsed.config, facts);
  throw new Error('an LLM judge evaluator is scored by the judge, not by scoreModelless');
}

/** The runner's model-less scoring seam (`ModellessScoring` of the runner): the family rule and the scorers. */
export const modellessScoring = { checkFamily, score: scoreModelless };
