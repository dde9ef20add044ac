/**
 * The model judge (`JudgeScorer` of ../ports.ts): scores a run, or a step by its parent run's content,
 * with an evaluator's rubric, asking a judge model (provider.ts) for the fixed result shape (reply.ts).
 *
 * The content-policy rules for judges, in the order they apply:
 * 1. The policy is consulted before anything is sent, at the `judge_transfer` boundary.
 * 2. The question asked is derived from what the evidence actually contains: a selector whose content
 *    the run did not record (nothing stored under that class) asks nothing about its class.
 * 3. A class actually present that the policy does not `allow` at `judge_transfer` (`deny`, or
 *    `allow_metadata`, which removes the bytes) refuses the whole evaluation: `withheld` with the class,
 *    the boundary and who decided (the policy, no policy yet, or a policy that could not be read). It is
 *    never sent without that content and never scored 0.
 * 4. When the credential behind the request may not read recorded content, that content is left out by
 *    the credential, not by the policy: the evaluation proceeds without it, the model is told which kinds
 *    were withheld, and the execution is PARTIAL with `withheld_by_credential:<classes>`.
 * 5. The read cell is never consulted here: only `judge_transfer` decides what the model may see.
 * 6. A run carrying none of the selected evidence is not sent (`unmeasured`, `no_selected_evidence`); a
 *    reply that is not the result shape is asked again and, when every attempt is unusable, recorded as
 *    `unmeasured` (`judge_reply_unusable`) with the spent tokens, never as a failing score.
 *
 * A session has no run content, summary or step sequence to show: `unmeasured` (`no_selected_evidence`).
 * No judge configured (SVC_JUDGE_BASE_URL unset), or no model named by the rubric nor SVC_JUDGE_MODEL:
 * 503 `judge_not_configured`, naming the variable.
 */
import { ApiError } from '../../../http/errors.js';
import type { JudgeSettings } from '../../../config.js';
import type { ContentClass } from '../../content/content-keys.js';
import type { Boundary } from '../../content-policy/model.js';
import type { Decided } from '../../content-policy/service.js';
import type { AgentRunsStore } from '../../agent-runs/store.js';
import type { ModelPrices } from '../../agent-runs/pricing-port.js';
import type { JudgeConfig, RunFacts, ScoreOutcome } from '../model.js';
import type { JudgeInput, JudgeScorer } from '../ports.js';
import { callJudge } from './calls.js';
import { boundEvidence, collectEvidence } from './evidence.js';
import { judgeExecution } from './execution.js';
import { judgeMessages } from './prompt.js';
import type { JudgeModel } from './provider.js';
import { weightedMean } from './reply.js';

export const NO_SELECTED_EVIDENCE = 'no_selected_evidence';
export const EVIDENCE_WITHHELD_BY_CREDENTIAL = 'evidence_withheld_by_credential';
export const JUDGE_REPLY_UNUSABLE = 'judge_reply_unusable';
export const EVIDENCE_TRUNCATED = 'evidence_truncated';
const BOUNDARY: Boundary = 'judge_transfer';

export interface JudgeDeps {
  /** The run's steps with their stored attributes (the agent-runs store). */
  steps: Pick<AgentRunsStore, 'steps'>;
  policy: { decide(projectId: string, contentClass: ContentClass, boundary: Boundary): Promise<Decided> };
  pricing: ModelPrices;
  /** Null when no judge endpoint is configured. */
  model: JudgeModel | null;
  settings: Pick<JudgeSettings, 'defaultModel' | 'provider' | 'maxAttempts'>;
  /** First backoff between calls (doubling); default 500 ms. */
  backoffMs?: number;
}

const notConfigured = (variable: string, what: string) =>
  new ApiError(503, 'judge_not_configured', `no judge model is configured: ${what}; set ${variable}`, { variable });

export class ModelJudge implements JudgeScorer {
  constructor(private readonly deps: JudgeDeps) {}

  private modelOf(config: JudgeConfig): { judge: JudgeModel; model: string } {
    if (!this.deps.model) throw notConfigured('SVC_JUDGE_BASE_URL', 'the judge endpoint is not set');
    const model = config.model ?? this.deps.settings.defaultModel;
    if (!model) throw notConfigured('SVC_JUDGE_MODEL', 'the evaluator names no model and there is no default');
    return { judge: this.deps.model, model };
  }

  async score(input: JudgeInput): Promise<ScoreOutcome> {
    const run: RunFacts | null = input.facts.kind === 'run' ? input.facts : input.facts.kind === 'step' ? input.facts.run : null;
    if (!run) return { outcome: 'unmeasured', reason: NO_SELECTED_EVIDENCE };
    const { judge, model } = this.modelOf(input.config);
    input.signal.throwIfAborted();

    // Rule 2: only what the run actually carries (content classes included) is part of the question.
    const wantsContent = input.config.evidence.some((s) => s === 'model_transcript' || s === 'tool_calls');
    const steps = wantsContent ? await this.deps.steps.steps(input.projectId, run.runId) : [];
    const carried = collectEvidence(run, steps, input.config.evidence).filter((s) => s.items.length > 0);

    // Rule 4: a credential that may not read content leaves it out (not a policy decision).
    const byCredential = input.credentialMayReadContent ? [] : carried.flatMap((s) => (s.contentClass ? [s.contentClass] : []));
    const sendable = carried.filter((s) => !(s.contentClass && byCredential.includes(s.contentClass)));

    // Rules 1, 3, 5: every class about to be sent is put to the judge_transfer cell first; anything but allow refuses all.
    for (const s of sendable) {
      if (!s.contentClass) continue;
      const d = await this.deps.policy.decide(input.projectId, s.contentClass, BOUNDARY);
      if (d.decision !== 'allow') return { outcome: 'withheld', withheld: { content_class: s.contentClass, boundary: BOUNDARY, decided_by: d.decided_by } };
    }

    // Rule 6: nothing to show, nothing sent.
    if (sendable.length === 0) return { outcome: 'unmeasured', reason: byCredential.length > 0 ? EVIDENCE_WITHHELD_BY_CREDENTIAL : NO_SELECTED_EVIDENCE };

    const bounded = boundEvidence(sendable, input.config.max_evidence_chars);
    const failureClasses = [
      ...(byCredential.length > 0 ? [`withheld_by_credential:${byCredential.join(',')}`] : []),
      ...(bounded.truncated ? [EVIDENCE_TRUNCATED] : []),
      ...sendable.filter((s) => s.markers > 0).map((s) => `withheld_at_store:${s.contentClass}`),
    ];
    const calls = await callJudge(judge, {
      model,
      messages: judgeMessages(input.config, bounded.sections, byCredential),
      criteria: input.config.criteria,
      maxAttempts: this.deps.settings.maxAttempts,
      backoffMs: this.deps.backoffMs ?? 500,
      signal: input.signal,
    });
    const execution = (jobStatus: 'COMPLETED' | 'PARTIAL' | 'FAILED', classes: string[]) =>
      judgeExecution({
        pricing: this.deps.pricing,
        projectId: input.projectId,
        provider: this.deps.settings.provider ?? null,
        askedModel: model,
        answered: calls.answered,
        jobStatus,
        failureClasses: classes,
      });
    if (!calls.usable) return { outcome: 'unmeasured', reason: JUDGE_REPLY_UNUSABLE, execution: await execution('FAILED', [JUDGE_REPLY_UNUSABLE, ...failureClasses]) };
    return {
      outcome: 'scored',
      numericValue: weightedMean(input.config.criteria, calls.reply.scores),
      label: calls.reply.label,
      explanation: calls.reply.reasoning,
      execution: await execution(failureClasses.length > 0 ? 'PARTIAL' : 'COMPLETED', failureClasses),
    };
  }
}
