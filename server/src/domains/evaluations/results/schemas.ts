/** Schemas of on-demand evaluation, the results read and unscored subjects (`/evaluation/evaluate`, `/evaluation/results`, `/evaluation/unscored-subjects`). */
import { Type, type TSchema } from '@sinclair/typebox';
import { NextCursorField, PageQuery, U32_MAX } from '../../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../../http/schemas.js';
import { TIME_DESCRIPTION } from '../../../http/time.js';
import { DECIDERS } from '../../content-policy/model.js';
import { CONTENT_CLASSES } from '../../content/content-keys.js';
import { COST_STATES, EVALUATION_MODES, JOB_STATUSES, JUDGE_MODEL_STATES, RELEASE_DECLARATIONS, SAMPLING, SUBJECT_KINDS } from '../model.js';
import { MAX_SUBJECT_REFS, PER_SUBJECT_LIMIT, SINGLE_SUBJECT_LIMIT } from './service.js';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const RepeatedOrComma = (description: string) => Type.Optional(Type.Array(Type.String(), { description: `repeated or comma-separated; ${description}` }));

export const EvaluatorRefSchema = Type.Object(
  {
    evaluator_id: Type.String({ minLength: 1, maxLength: 128 }),
    version: Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'an exact integer version; there is no latest alias' }),
  },
  { additionalProperties: false, description: 'an exact evaluator version' },
);

export const EvaluateBody = Type.Object(
  {
    evaluator: EvaluatorRefSchema,
    subject_kind: Type.String({
      maxLength: 64,
      description: `one of ${SUBJECT_KINDS.join(', ')}; SUBJECT_KIND_AGENT_TURN and SUBJECT_KIND_DATASET_ITEM answer 501; anything else is 400`,
    }),
    subject_ref: Type.String({
      minLength: 1,
      maxLength: 300,
      description: 'a run id; <run_id>/<span_id> for a step; a session key for a session',
    }),
  },
  { additionalProperties: false },
);

export const Execution = Type.Object(
  {
    sampling: Type.Optional(stringEnum(SAMPLING)),
    sampling_rule_id: Type.Optional(Type.String({ description: 'only for SAMPLED' })),
    sampling_rate: Type.Optional(Type.Number({ description: 'only for SAMPLED' })),
    cost_state: Type.Optional(stringEnum(COST_STATES)),
    charged_cost_nano_usd: Type.Optional(Type.Integer({ description: 'billionths of a US dollar; meaningful only for CHARGED' })),
    input_tokens: Type.Optional(Type.Integer({ description: 'zero when no model is called' })),
    output_tokens: Type.Optional(Type.Integer()),
    judge_model_state: Type.Optional(stringEnum(JUDGE_MODEL_STATES)),
    judge_model: Type.Optional(Type.String({ description: 'the model that answered; only for RECORDED' })),
    job_status: Type.Optional(stringEnum(JOB_STATUSES)),
    job_failure_class: Type.Optional(Type.String({ description: 'what was missing; for every status except COMPLETED' })),
  },
  { description: 'how the result was produced; empty for a result written before this record existed' },
);

export const Result = Type.Object(
  {
    result_id: Type.String(),
    project_id: Type.String(),
    metric_name: Type.String(),
    numeric_value: Type.Optional(Type.Number({ description: 'the score; absent when the evaluator gives a label only' })),
    label: Type.Optional(Type.String()),
    explanation: Type.Optional(Type.String({ description: 'the evaluator\'s reasoning: shown with agents:content:read when the project\'s content policy also lets model transcripts be read' })),
    explanation_withheld_by: Type.Optional(
      stringEnum(['credential_scope', ...DECIDERS] as const, { description: 'present instead of explanation when one exists and may not be shown: who withheld it' }),
    ),
    provenance: Type.Object({
      evaluator: Type.Object({ evaluator_id: Type.String(), version: Type.Integer({ description: '0 marks a legacy result' }) }),
      mode: stringEnum(EVALUATION_MODES),
      subject_kind: stringEnum(SUBJECT_KINDS),
      subject_ref: Type.String(),
      legacy_source: Type.String({ description: 'non-empty only for results recorded before evaluators existed' }),
      execution: Execution,
    }),
    subject_release: Type.Optional(Type.String({ description: 'the release observed on the subject (its root span\'s gen_ai.agent.version, else its service.version)' })),
    release_declaration: stringEnum(RELEASE_DECLARATIONS, { description: 'RELEASE_NOT_DECLARED is the explicit answer that the subject declared none' }),
    occurred_at: Timestamp('when the subject happened (a run\'s or session\'s start; a step\'s start)'),
    evaluated_at: Timestamp('when the score was produced'),
  },
  { $id: 'EvaluationResult' },
);

export const EvaluateResponse = Type.Object({
  already_evaluated: Type.Boolean({ description: 'true: the stored answer of an earlier evaluation; nothing was re-run or spent' }),
  stored: Type.Boolean({ description: 'false only for a FAILED reply (the model gave no usable answer): nothing was stored' }),
  result: Result,
});

export const ResultsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: U32_MAX,
        description: `at most one subject: the page size (default ${SINGLE_SUBJECT_LIMIT.default}, max ${SINGLE_SUBJECT_LIMIT.max}); several subjects: each subject's share (default and max ${PER_SUBJECT_LIMIT.max}); above is 400, never truncated`,
      }),
    ),
    metric_name: Type.Optional(Type.String()),
    evaluator_id: Type.Optional(Type.String()),
    subject_ref: Type.Optional(Type.String()),
    subject_refs: RepeatedOrComma(`one set with subject_ref; at most ${MAX_SUBJECT_REFS} distinct subjects (a longer list is refused)`),
    mode: RepeatedOrComma(`OR within; one of ${EVALUATION_MODES.join(', ')}; omitted: every mode`),
    start: Type.Optional(Type.String({ description: `on occurred_at, inclusive: ${TIME_DESCRIPTION}` })),
    end: Type.Optional(Type.String({ description: `on occurred_at, exclusive: ${TIME_DESCRIPTION}` })),
  },
  { additionalProperties: false, description: 'AND across filters, OR within one' },
);

export const ResultsResponse = Type.Object({
  results: Type.Array(Result, { description: 'newest evaluated first; one result per evaluator version per subject (history)' }),
  truncated: Type.Boolean({ description: 'exact: a cap cut matching results' }),
  truncated_subject_refs: Type.Array(Type.String(), { description: 'subjects whose share was cut: treat them as unknown, not unevaluated' }),
  next_cursor: NextCursorField,
});

export const UnscoredQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    evaluator_id: Type.Optional(Type.String()),
    subject_ref: Type.Optional(Type.String()),
    subject_refs: RepeatedOrComma(`at most ${MAX_SUBJECT_REFS}`),
    outcome: RepeatedOrComma('unmeasured, withheld'),
  },
  { additionalProperties: false },
);

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const UnscoredSubject = Type.Object({
  evaluator: Type.Object({ evaluator_id: Type.String(), version: Type.Integer() }),
  subject_kind: stringEnum(SUBJECT_KINDS),
  subject_ref: Type.String(),
  mode: stringEnum(EVALUATION_MODES),
  outcome: stringEnum(['unmeasured', 'withheld'] as const, { description: 'unmeasured: nothing measurable yet (retried later, never scored 0); withheld: the content policy refused the transfer' }),
  reason: Type.String({ description: 'what was missing, or withheld:<content class>' }),
  withheld: Nullable(
    Type.Object({ content_class: stringEnum(CONTENT_CLASSES), boundary: Type.String(), decided_by: stringEnum(DECIDERS) }, { description: 'for withheld' }),
  ),
  attempts: Type.Integer({ minimum: 1 }),
  first_at: Timestamp('the first attempt'),
  last_at: Timestamp('the latest attempt'),
});

export const UnscoredResponse = Type.Object({ unscored_subjects: Type.Array(UnscoredSubject), next_cursor: NextCursorField });
