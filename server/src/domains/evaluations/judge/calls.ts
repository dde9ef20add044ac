/**
 * The calls of one judge evaluation, whatever the provider: at most `maxAttempts` calls in all. A call
 * that brings no reply and may succeed again (timeout, transport failure, 429, 5xx) and a reply that is
 * not the result shape (reply.ts) are each followed by a new call after a short backoff (doubling from
 * `backoffMs`, at most 5 s; a provider's Retry-After up to 10 s). Every answered call is kept, usable or
 * not, because its tokens were spent.
 *
 * How it ends: the first usable reply; or, when the attempts run out, `unusable` if the last call
 * answered (every reply was unusable) and a 503 `unavailable` if it brought no reply; a call the provider
 * refuses for good (a 4xx other than 408 and 429) is a 503 at once. An abort of the caller's signal (the
 * evaluation's time budget) ends everything with the signal's reason, during a call or a backoff.
 */
import { unavailable } from '../../../http/errors.js';
import { JudgeCallError, type JudgeCompletion, type JudgeMessage, type JudgeModel } from './provider.js';
import { parseReply, type ParsedReply } from './reply.js';
import type { JudgeCriterion } from '../model.js';

const MAX_BACKOFF_MS = 5000;
const MAX_RETRY_AFTER_MS = 10_000;

export interface CallPlan {
  model: string;
  messages: JudgeMessage[];
  criteria: readonly JudgeCriterion[];
  maxAttempts: number;
  backoffMs: number;
  signal: AbortSignal;
}

export type CallsResult =
  | { usable: true; reply: Extract<ParsedReply, { ok: true }>; answered: JudgeCompletion[] }
  | { usable: false; problem: string; answered: JudgeCompletion[] };

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export async function callJudge(model: JudgeModel, plan: CallPlan): Promise<CallsResult> {
  const answered: JudgeCompletion[] = [];
  let last: { kind: 'unusable'; problem: string } | { kind: 'failed'; error: JudgeCallError } | undefined;
  for (let attempt = 1; attempt <= plan.maxAttempts; attempt++) {
    if (attempt > 1) {
      const retryAfter = last?.kind === 'failed' && last.error.retryAfterSeconds !== undefined ? Math.min(last.error.retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS) : 0;
      await sleep(Math.max(retryAfter, Math.min(plan.backoffMs * 2 ** (attempt - 2), MAX_BACKOFF_MS)), plan.signal);
    }
    plan.signal.throwIfAborted();
    let reply: JudgeCompletion;
    try {
      reply = await model.complete({ model: plan.model, messages: plan.messages, signal: plan.signal });
    } catch (e) {
      if (plan.signal.aborted) throw plan.signal.reason;
      if (!(e instanceof JudgeCallError)) throw e;
      if (!e.retryable) throw unavailable(`the judge model refused the call: ${e.message}`, 60, e);
      last = { kind: 'failed', error: e };
      continue;
    }
    answered.push(reply);
    const parsed = parseReply(reply.content, plan.criteria);
    if (parsed.ok) return { usable: true, reply: parsed, answered };
    last = { kind: 'unusable', problem: parsed.problem };
  }
  if (last?.kind === 'unusable') return { usable: false, problem: last.problem, answered };
  const error = last?.kind === 'failed' ? last.error : undefined;
  throw unavailable(`the judge model could not be reached after ${plan.maxAttempts} attempt(s): ${error?.message ?? 'no attempt made'}`, 30, error);
}
