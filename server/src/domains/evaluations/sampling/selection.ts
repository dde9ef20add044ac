/**
 * Which runs a sampling rule selects (docs/evaluations-sampling.md "Selection"). The decision is a stable
 * hash of the run alone: the first 52 bits of SHA-256(run id), as a fraction in [0, 1), compared with the
 * rule's rate. So the same run always gets the same answer, a higher rate selects a superset of what a
 * lower one does, 0 selects nothing and 1 everything. The rule is deliberately not hashed in: two rules
 * of one project at the same rate pick the same runs, so their scores can be compared run for run.
 */
import { createHash } from 'node:crypto';

/** The run's fixed position in [0, 1). */
export function runFraction(runId: string): number {
  const h = createHash('sha256').update(runId, 'utf8').digest();
  // 52 bits: exactly representable in a double, so the fraction is exact and strictly below 1.
  return (h.readUIntBE(0, 6) * 16 + (h[6] >> 4)) / 2 ** 52;
}

/** Whether a rule of this rate selects the run (`_ruleId` is not part of the decision; see above). */
export function selects(_ruleId: string, runId: string, rate: number): boolean {
  if (!(rate > 0)) return false;
  if (rate >= 1) return true;
  return runFraction(runId) < rate;
}
