/**
 * The seams between the parts of the evaluation area (docs/evaluations.md): evaluators (evaluators/),
 * subject facts and the model-less scorers (scoring/), the model judge (judge/), sampling and the budget
 * (sampling/), and the one runner that evaluates a subject and stores its result (service.ts).
 */
import type { Principal } from '../../http/principal.js';
import type { EvaluatorRef, EvaluatorVersionRecord, EvaluatorConfig, JudgeConfig, RunFacts, ScoreOutcome, ScoredExecution, SessionFacts, StepSubjectFacts, SubjectFacts, SubjectKind, EvaluatorKind } from './model.js';

/** Evaluator versions, by exact reference (evaluators/service.ts). */
export interface EvaluatorVersions {
  /** The version and its parsed configuration; 404 (`evaluator version`) when the project has no such version. */
  version(projectId: string, ref: EvaluatorRef): Promise<{ record: EvaluatorVersionRecord; parsed: EvaluatorConfig }>;
}

/** The facts of a subject, read from telemetry (scoring/facts.ts); 404 when the project has no such subject. */
export interface SubjectFactsReader {
  run(projectId: string, runId: string): Promise<RunFacts>;
  step(projectId: string, runId: string, spanId: string): Promise<StepSubjectFacts>;
  session(projectId: string, sessionKey: string): Promise<SessionFacts>;
}

/** What the judge is given for one evaluation. */
export interface JudgeInput {
  orgId: string;
  projectId: string;
  config: JudgeConfig;
  /** For a step, the parent run's content is judged (the score is filed under the step). */
  facts: SubjectFacts;
  /**
   * False when the credential behind an on-demand request may not read recorded content (it lacks
   * `agents:content:read`): content is then removed by the credential, not by the policy, so the
   * evaluation proceeds and the model is told which kinds were withheld (rule 4). Sampled evaluations
   * pass true: the read cell and the judge_transfer cell are independent for automatic checks (rule 5).
   */
  credentialMayReadContent: boolean;
  /** Aborted when the evaluation's five-minute budget runs out. */
  signal: AbortSignal;
}

/** The model judge (judge/judge.ts). */
export interface JudgeScorer {
  score(input: JudgeInput): Promise<ScoreOutcome>;
}

/** The organization's daily evaluation budget (sampling/budget.ts). */
export interface EvaluationBudget {
  /** Throws 429 `budget_exhausted` when the organization's budget for today is spent (for this kind of evaluator). */
  admit(orgId: string, kind: EvaluatorKind): Promise<void>;
  /** Adds one evaluation and its charged cost (billionths of a US dollar; 0 when free or unpriced) to today's spend. */
  charge(orgId: string, spend: { costNanos: number; kind: EvaluatorKind }): Promise<void>;
}

/** How an evaluation was asked for. */
export type EvaluationTrigger =
  | { sampling: 'NOT_SAMPLED'; caller: Principal }
  | { sampling: 'SAMPLED'; samplingRuleId: string; samplingRate: number }
  /** An experiment scoring a dataset version (experiments/): the only asker that may name a dataset item. */
  | { sampling: 'WHOLE_DATASET'; caller: Principal; experimentId: string };

export interface EvaluateInput {
  orgId: string;
  projectId: string;
  evaluator: EvaluatorRef;
  /** As asked: the runner reads it (400 unknown, 501 turn and dataset item). */
  subjectKind: string;
  subjectRef: string;
  trigger: EvaluationTrigger;
  /**
   * SUBJECT_KIND_DATASET_ITEM only (and only with a WHOLE_DATASET trigger): the facts of the frozen case
   * the item holds (`caseFacts`), read by the experiment from the dataset version. The item is scored
   * exactly like the run it froze, from these facts, never from live telemetry.
   */
  frozenCase?: RunFacts;
}

/** What one evaluation came to (the on-demand route maps `unmeasured` to 400 and `withheld` to 403). */
export type EvaluateAnswer =
  | { outcome: 'scored'; alreadyEvaluated: boolean; resultId: string }
  /** `execution` when a model was called (and spent) without giving a usable score. */
  | { outcome: 'unmeasured'; reason: string; execution?: ScoredExecution; metricName?: string }
  | { outcome: 'withheld'; contentClass: string; boundary: string; decidedBy: string };

/** Evaluates one subject with one exact evaluator version and stores what it came to (service.ts). */
export interface EvaluationRunner {
  evaluate(input: EvaluateInput): Promise<EvaluateAnswer>;
}

/** A stored sampling rule (evaluators/sampling-rules: its CRUD routes). */
export interface SamplingRuleRecord {
  ruleId: string;
  orgId: string;
  projectId: string;
  evaluator: EvaluatorRef;
  subjectKind: SubjectKind;
  samplingRate: number;
  perTickLimit: number;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The rules the sampling job reads (implemented beside the sampling-rule routes). */
export interface SamplingRules {
  /** Every rule that can select anything: enabled, a rate above 0 and a per-tick limit above 0 (of live projects). */
  active(): Promise<SamplingRuleRecord[]>;
}
