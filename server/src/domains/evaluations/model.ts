/**
 * The closed vocabulary of evaluations (docs/evaluations.md) and the types every part of the area
 * shares: evaluator versions and their parsed configurations, the facts a subject offers, what a scorer
 * answers, and the execution record of a result. No HTTP, no SQL.
 */
import type { Boundary, Decider } from '../content-policy/model.js';
import type { ContentClass } from '../content/content-keys.js';

// ---- closed enumerations (an unknown value is 400; `_UNSPECIFIED` is refused on write)

export const EVALUATOR_KINDS = ['EVALUATOR_KIND_DETERMINISTIC', 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', 'EVALUATOR_KIND_LLM_JUDGE'] as const;
export type EvaluatorKind = (typeof EVALUATOR_KINDS)[number];

export const SUBJECT_KINDS = [
  'SUBJECT_KIND_AGENT_RUN',
  'SUBJECT_KIND_AGENT_STEP',
  'SUBJECT_KIND_AGENT_SESSION',
  'SUBJECT_KIND_AGENT_TURN',
  'SUBJECT_KIND_DATASET_ITEM',
] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];
/** The kinds an on-demand evaluation scores; the other two answer 501. */
export const ON_DEMAND_SUBJECT_KINDS = ['SUBJECT_KIND_AGENT_RUN', 'SUBJECT_KIND_AGENT_STEP', 'SUBJECT_KIND_AGENT_SESSION'] as const;
export type OnDemandSubjectKind = (typeof ON_DEMAND_SUBJECT_KINDS)[number];
/** What a sampling rule selects: new runs (sessions and steps are named on demand). */
export const SAMPLED_SUBJECT_KINDS = ['SUBJECT_KIND_AGENT_RUN'] as const;

/** `provenance.mode`: how a result was produced. */
export const EVALUATION_MODES = ['EVALUATION_MODE_ON_DEMAND', 'EVALUATION_MODE_SAMPLED', 'EVALUATION_MODE_EXPERIMENT', 'EVALUATION_MODE_LEGACY'] as const;
export type EvaluationMode = (typeof EVALUATION_MODES)[number];

export const SAMPLING = ['SAMPLED', 'NOT_SAMPLED', 'WHOLE_DATASET'] as const;
export type Sampling = (typeof SAMPLING)[number];
export const COST_STATES = ['CHARGED', 'FREE', 'UNPRICED', 'UNREPORTED'] as const;
export type CostState = (typeof COST_STATES)[number];
export const JUDGE_MODEL_STATES = ['RECORDED', 'NOT_APPLICABLE', 'UNREPORTED'] as const;
export type JudgeModelState = (typeof JUDGE_MODEL_STATES)[number];
export const JOB_STATUSES = ['COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** `release_declaration`: the subject named its release (`subject_release` holds it), or explicitly none. */
export const RELEASE_DECLARATIONS = ['RELEASE_DECLARED', 'RELEASE_NOT_DECLARED'] as const;
export type ReleaseDeclaration = (typeof RELEASE_DECLARATIONS)[number];

// ---- evaluator configurations (parsed from `config_json`)

export const ASSERTION_SINGLE_FIELDS = ['run.status'] as const;
export const ASSERTION_NUMBER_FIELDS = [
  'run.error_steps',
  'run.step_count',
  'run.tool_calls',
  'run.model_calls',
  'run.duration_ms',
  'session.turn_count',
  'session.run_count',
  'session.duration_ms',
  'session.cost_nanos',
] as const;
export const ASSERTION_SET_FIELDS = ['steps.outcomes', 'steps.tool_names', 'steps.canonical_operations'] as const;
export type AssertionField = (typeof ASSERTION_SINGLE_FIELDS)[number] | (typeof ASSERTION_NUMBER_FIELDS)[number] | (typeof ASSERTION_SET_FIELDS)[number];
export const ASSERTION_OPS = ['equals', 'not_equals', 'lte', 'gte', 'contains', 'not_contains'] as const;
export type AssertionOp = (typeof ASSERTION_OPS)[number];

/** One assertion: a single-value or set field compares `value` (a string); a number field compares `number`. */
export interface Assertion {
  field: AssertionField;
  op: AssertionOp;
  value?: string;
  number?: number;
}

export const MEASUREMENTS = [
  'run.duration_ms',
  'run.cost_nanos',
  'safety.error_steps',
  'session.turn_count',
  'session.run_count',
  'session.duration_ms',
  'session.cost_nanos',
] as const;
export type Measurement = (typeof MEASUREMENTS)[number];

export type DeterministicConfig =
  | { form: 'assertion'; aggregation: 'all' | 'fraction'; assertions: Assertion[] }
  | { form: 'measurement'; measurement: Measurement };

export const STEP_KEYS = ['canonical_operation', 'tool_name'] as const;
export const TRAJECTORY_MATCHES = ['ordered_subsequence', 'exact'] as const;
export interface TrajectoryConfig {
  step_key: (typeof STEP_KEYS)[number];
  /** Default `ordered_subsequence`. */
  match: (typeof TRAJECTORY_MATCHES)[number];
  reference: string[];
}

export const EVIDENCE_SELECTORS = ['run_summary', 'step_sequence', 'model_transcript', 'tool_calls'] as const;
export type EvidenceSelector = (typeof EVIDENCE_SELECTORS)[number];
/** The content class each selector asks the policy about (none for the two that carry no recorded content). */
export const EVIDENCE_CLASS: Record<EvidenceSelector, ContentClass | null> = {
  run_summary: null,
  step_sequence: null,
  model_transcript: 'model_transcript',
  tool_calls: 'tool_arguments',
};
export const MAX_EVIDENCE_CHARS = { min: 500, max: 40_000, default: 12_000 } as const;
export const CRITERIA = { min: 1, max: 8 } as const;

export interface JudgeCriterion {
  name: string;
  description: string;
  /** Default 1. */
  weight: number;
}
export interface JudgeConfig {
  criteria: JudgeCriterion[];
  evidence: EvidenceSelector[];
  instructions?: string;
  /** Absent: the configured default judge model. */
  model?: string;
  max_evidence_chars: number;
}

export type EvaluatorConfig =
  | { kind: 'EVALUATOR_KIND_DETERMINISTIC'; config: DeterministicConfig }
  | { kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY'; config: TrajectoryConfig }
  | { kind: 'EVALUATOR_KIND_LLM_JUDGE'; config: JudgeConfig };

/** One immutable evaluator version, as stored. */
export interface EvaluatorVersionRecord {
  orgId: string;
  projectId: string;
  evaluatorId: string;
  version: number;
  displayName: string;
  metricName: string;
  kind: EvaluatorKind;
  /** Exactly as sent (a string holding JSON). */
  configJson: string;
  createdAt: string;
  createdBy: string;
}

/** A reference always names an exact version (no "latest"). */
export interface EvaluatorRef {
  evaluator_id: string;
  version: number;
}

// ---- the subject's facts (read from telemetry by scoring/facts.ts)

export interface StepFact {
  spanId: string;
  parentSpanId: string | null;
  canonicalOperation: string;
  /** OUTCOME_OK | OUTCOME_ERROR | OUTCOME_CANCELLED, or null when none was stated. */
  outcome: string | null;
  toolName: string | null;
  startUs: number;
}

export interface RunFacts {
  kind: 'run';
  runId: string;
  status: string | null;
  startUs: number;
  durationMs: number | null;
  stepCount: number;
  errorSteps: number;
  toolCalls: number;
  modelCalls: number;
  /** Null: missing or unpriced (never a measured zero). */
  costNanos: number | null;
  /** Null: no explicitly identified safety step with an outcome. */
  safetyErrorSteps: number | null;
  /** Every step but the root, oldest first (the run's step sequence). */
  steps: StepFact[];
  sessionKey: string | null;
  /** The root span's `service.version` resource attribute, when set. */
  release: string | null;
}

export interface StepSubjectFacts {
  kind: 'step';
  run: RunFacts;
  step: StepFact;
}

export interface SessionFacts {
  kind: 'session';
  sessionKey: string;
  runCount: number;
  /** Null when the session's turns carry no turn ids. */
  turnCount: number | null;
  startUs: number;
  durationMs: number;
  /** Null: unmeasured (a missing or unpriced run cost, or a zero sum). */
  costNanos: number | null;
  release: string | null;
}

export type SubjectFacts = RunFacts | StepSubjectFacts | SessionFacts;

// ---- what a scorer answers

/** `provenance.execution` of a result. */
export interface Execution {
  sampling: Sampling;
  sampling_rule_id?: string;
  sampling_rate?: number;
  cost_state: CostState;
  charged_cost_nano_usd: number;
  input_tokens: number;
  output_tokens: number;
  judge_model_state: JudgeModelState;
  judge_model?: string;
  job_status: JobStatus;
  job_failure_class?: string;
}

/** What a scorer measured, beside the sampling (the orchestrator adds it). */
export type ScoredExecution = Omit<Execution, 'sampling' | 'sampling_rule_id' | 'sampling_rate'>;

/** A withheld transfer: which kind of content, at which boundary, and who decided. */
export interface Withheld {
  content_class: ContentClass;
  boundary: Boundary;
  decided_by: Decider;
}

export type ScoreOutcome =
  | { outcome: 'scored'; numericValue: number | null; label: string | null; explanation: string | null; execution: ScoredExecution }
  /** Nothing measurable (yet): recorded as unmeasured and retried later, never scored. `reason` names what was missing. */
  | { outcome: 'unmeasured'; reason: string; execution?: ScoredExecution }
  /** The content policy refused the transfer of content the rubric asked for (403 on demand). */
  | { outcome: 'withheld'; withheld: Withheld };

/** A free, model-less execution record (deterministic and trajectory evaluators). */
export const FREE_EXECUTION: ScoredExecution = {
  cost_state: 'FREE',
  charged_cost_nano_usd: 0,
  input_tokens: 0,
  output_tokens: 0,
  judge_model_state: 'NOT_APPLICABLE',
  job_status: 'COMPLETED',
};

/** Legacy results cite version 0 and an evaluator id `legacy/<author>/<metric>`; no exact reference matches them. */
export const LEGACY_VERSION = 0;
export const isLegacyEvaluatorId = (id: string) => id.startsWith('legacy/');

// ---- scoring/: what the model-less scorers read beside the facts above (interface merging; all optional)

export interface StepFact {
  /** True when the step is marked as a safety check (`svc.safety.check`). */
  safetyCheck?: boolean;
}
export interface RunFacts {
  /** Why `costNanos` is null: `no_model_calls`, `missing_usage` or `unpriced_model` (the agent reads' reasons). */
  costUnavailableReason?: string;
}
export interface SessionFacts {
  /** Why `costNanos` is null: `run_cost_unavailable` or `zero_cost`. */
  costUnavailableReason?: string;
}
