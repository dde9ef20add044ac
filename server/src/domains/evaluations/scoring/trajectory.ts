/**
 * The reference-trajectory evaluator (docs/evaluations-scoring.md "Trajectories"). Free: no model is called.
 *
 * The run's sequence is its step sequence (every step but the root, oldest first; a step subject's
 * sequence is that one step), each step read by `step_key`: its canonical operation, or its tool name
 * (steps that call no tool are skipped; a tool call that names no tool makes the trajectory unmeasured).
 *
 * - `ordered_subsequence`: the longest in-order match of the reference in the sequence (their longest
 *   common subsequence) divided by the reference's length; extra steps do not lower it. Label `k/n`.
 * - `exact`: 1 (`match`) when the sequence is the reference, else 0 (`no_match`).
 *
 * A subject with no steps (a run that is only its root) carries nothing to compare: unmeasured. A
 * subject with steps none of which match the reference scores a real 0.
 */
import { invalidRequest } from '../../../http/errors.js';
import { FREE_EXECUTION, type ScoreOutcome, type SubjectFacts, type TrajectoryConfig } from '../model.js';
import { checkFamily, subjectKindOf } from './family.js';
import { subjectSteps, toolNames, type Read } from './values.js';

const SHOWN = 20;
/** A sequence for the explanation: its first 20 keys, saying how many more there are. */
const shown = (xs: string[]) => `[${xs.slice(0, SHOWN).join(', ')}${xs.length > SHOWN ? `, ... and ${xs.length - SHOWN} more` : ''}]`;

/** Length of the longest common subsequence of `a` and `b` (one row of the table at a time). */
export function longestCommonSubsequence(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  let prev = new Array<number>(b.length + 1).fill(0);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

/** The subject's sequence of step keys, or why it cannot be compared. */
export function sequenceOf(config: TrajectoryConfig, facts: Exclude<SubjectFacts, { kind: 'session' }>): Read<string[]> {
  const steps = subjectSteps(facts);
  if (steps.length === 0) return { unmeasured: 'the trajectory is unmeasured: the run has no steps besides its root' };
  if (config.step_key === 'canonical_operation') return { value: steps.map((s) => s.canonicalOperation) };
  return toolNames('the trajectory of tool names', steps);
}

/** Scores the subject's step sequence against the reference (400 for a session, which has no steps). */
export function scoreTrajectory(config: TrajectoryConfig, facts: SubjectFacts): ScoreOutcome {
  checkFamily({ kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', config }, subjectKindOf(facts));
  if (config.reference.length === 0) throw invalidRequest('a reference trajectory names at least one step', { reason: 'empty_reference' });
  const seq = sequenceOf(config, facts as Exclude<SubjectFacts, { kind: 'session' }>);
  if ('unmeasured' in seq) return { outcome: 'unmeasured', reason: seq.unmeasured };
  const ref = config.reference;
  if (config.match === 'exact') {
    const same = seq.value.length === ref.length && seq.value.every((k, i) => k === ref[i]);
    return {
      outcome: 'scored',
      numericValue: same ? 1 : 0,
      label: same ? 'match' : 'no_match',
      explanation: same ? `the ${seq.value.length} steps are the reference` : `the sequence ${shown(seq.value)} is not the reference ${shown(ref)}`,
      execution: FREE_EXECUTION,
    };
  }
  const matched = longestCommonSubsequence(ref, seq.value);
  return {
    outcome: 'scored',
    numericValue: matched / ref.length,
    label: `${matched}/${ref.length}`,
    explanation: `${matched} of the ${ref.length} reference steps appear in order among the ${seq.value.length} steps`,
    execution: FREE_EXECUTION,
  };
}
