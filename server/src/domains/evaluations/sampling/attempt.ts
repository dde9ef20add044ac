/**
 * One sampled evaluation and what the sampling job does with its answer (docs/evaluations-sampling.md
 * "Retries"): a scored run is done; an unmeasured one (or one whose evaluation failed) is tried again
 * later with backoff and then given up; a withheld one is recorded and never retried; a spent budget stops
 * the rule for this tick; an aborted tick leaves the run to the next one.
 */
import { ApiError } from '../../../http/errors.js';
import type { EvaluationRunner } from '../ports.js';
import type { SamplingRuleRecord } from '../ports.js';
import type { SamplingRetry, SamplingStore } from './store.js';

/** Retries: the first after 10 minutes, each later one twice as long after, at most 5 tries in all. */
export const RETRY_POLICY = { firstDelaySeconds: 600, maxTries: 5 } as const;

/** The wait after try `n` (1-based) measured nothing: 10 min, 20 min, 40 min, 80 min. */
export const retryDelaySeconds = (n: number) => RETRY_POLICY.firstDelaySeconds * 2 ** (n - 1);

export type AttemptResult = 'scored' | 'unmeasured' | 'withheld' | 'failed' | 'budget' | 'aborted';

export interface Attempt {
  result: AttemptResult;
  /** What was missing, who withheld what, or how it failed. */
  reason: string;
}

const MAX_REASON = 1000;
const oneLine = (s: string) => s.replace(/\s+/g, ' ').slice(0, MAX_REASON);

/** Runs one evaluation of a run for a rule and classifies the answer. */
export async function attempt(runner: EvaluationRunner, rule: SamplingRuleRecord, traceId: string, signal?: AbortSignal): Promise<Attempt> {
  try {
    const a = await runner.evaluate({
      orgId: rule.orgId,
      projectId: rule.projectId,
      evaluator: rule.evaluator,
      subjectKind: 'SUBJECT_KIND_AGENT_RUN',
      subjectRef: traceId,
      trigger: { sampling: 'SAMPLED', samplingRuleId: rule.ruleId, samplingRate: rule.samplingRate },
    });
    if (a.outcome === 'scored') return { result: 'scored', reason: '' };
    if (a.outcome === 'unmeasured') return { result: 'unmeasured', reason: oneLine(a.reason) };
    return { result: 'withheld', reason: oneLine(`withheld: ${a.contentClass} at ${a.boundary} (decided by ${a.decidedBy})`) };
  } catch (e) {
    if (e instanceof ApiError && e.status === 429 && (e.code === 'budget_exhausted' || e.code === 'budget_not_set')) return { result: 'budget', reason: oneLine(e.message) };
    if (signal?.aborted) return { result: 'aborted', reason: 'the tick was stopped' };
    return { result: 'failed', reason: oneLine(`failed: ${e instanceof ApiError ? `${e.status} ${e.code}: ` : ''}${e instanceof Error ? e.message : String(e)}`) };
  }
}

/** The retry record after try `tries` came to `a` (undefined: nothing to keep, the run is done). */
export function retryAfter(rule: SamplingRuleRecord, run: { traceId: string; startUs: number }, tries: number, a: Attempt, now: Date): SamplingRetry | undefined {
  if (a.result === 'scored') return undefined;
  const base = { ruleId: rule.ruleId, traceId: run.traceId, orgId: rule.orgId, projectId: rule.projectId, startUs: run.startUs, attempts: tries, reason: a.reason, updatedAt: now.toISOString() };
  if (a.result === 'withheld') return { ...base, state: 'withheld', nextAt: now.toISOString() };
  const givenUp = tries >= RETRY_POLICY.maxTries;
  return { ...base, state: givenUp ? 'given_up' : 'waiting', nextAt: new Date(now.getTime() + (givenUp ? 0 : retryDelaySeconds(tries) * 1000)).toISOString() };
}

/** Records the first try's outcome of a scanned run (nothing for a scored one). */
export async function recordFirst(store: SamplingStore, rule: SamplingRuleRecord, run: { traceId: string; startUs: number }, a: Attempt, now: Date): Promise<void> {
  const r = retryAfter(rule, run, 1, a, now);
  if (r) await store.putRetry(r);
}
