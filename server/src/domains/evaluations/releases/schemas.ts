/** Schemas of the release series and release gates (`/evaluation/release-series`, `/evaluation/gates`). */
import { Type, type TSchema } from '@sinclair/typebox';
import { NextCursorField, PageQuery, U32_MAX } from '../../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../../http/schemas.js';
import { TIME_DESCRIPTION } from '../../../http/time.js';
import { MAX_VERSION_NUMBER } from '../evaluators/service.js';
import {
  BASELINE_SOURCES,
  DECISION_HISTORY,
  DEFAULT_INTENT_KEY,
  GATE_ID_PATTERN,
  GATE_OUTCOMES,
  GATE_PAGE,
  GATE_READINGS,
  IDEMPOTENCY_KEY_PATTERN,
  MAX_DISPLAY_NAME,
  MAX_MIN_SAMPLES,
  MAX_RELEASE_LENGTH,
  REASON_CODES,
} from './gates.js';
import { MAX_POINTS, ORDERING_STRATEGIES } from './series.js';
import { EVIDENCE_CLASSES } from './store.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const EvaluatorRef = Type.Object({ evaluator_id: Type.String(), version: Type.Integer({ minimum: 1 }) });
const Release = (description: string) => Type.String({ maxLength: MAX_RELEASE_LENGTH, description: `${description}; 1 to ${MAX_RELEASE_LENGTH} characters, compared exactly` });

export const ExcludedCounts = Type.Object(
  Object.fromEntries(EVIDENCE_CLASSES.filter((c) => c !== 'admissible').map((c) => [c, Type.Optional(Type.Integer({ minimum: 1 }))])),
  {
    description:
      'results that are not evidence, by reason (absent: none): legacy, no_execution, failed, cancelled, job_status_unknown, experiment, not_run_or_step, not_scored, other_evaluator_version',
  },
);

export const SeriesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    evaluator_id: Type.String({ maxLength: 200, description: 'required' }),
    evaluator_version: Type.Integer({
      minimum: 0,
      maximum: MAX_VERSION_NUMBER,
      description: 'required: the exact version whose results form the series (404 when the evaluator has no such version; 0, the legacy version, is 400)',
    }),
    metric_name: Type.Optional(Type.String({ maxLength: 600, description: 'only results of this metric' })),
    start: Type.Optional(Type.String({ description: `on occurred_at (run time), inclusive: ${TIME_DESCRIPTION}` })),
    end: Type.Optional(Type.String({ description: `on occurred_at (run time), exclusive: ${TIME_DESCRIPTION}` })),
  },
  { additionalProperties: false },
);

const aggregateFields = {
  sample_count: Type.Integer({ minimum: 1, description: 'admissible results' }),
  mean: Type.Number({ description: 'arithmetic mean of numeric_value' }),
  first_observed_at: Timestamp('the earliest run time (occurred_at)'),
  last_observed_at: Timestamp('the latest run time (occurred_at)'),
};

export const SeriesPoint = Type.Object({
  release: Type.String(),
  ...aggregateFields,
  delta_mean: Nullable(Type.Number({ description: 'this mean minus the previous point\'s (a neutral number, not a verdict); null for the first point' })),
});

export const SeriesResponse = Type.Object({
  evaluator: EvaluatorRef,
  metric_name: Type.String({ description: 'the metric of the evaluator version' }),
  ordering_strategy: stringEnum(ORDERING_STRATEGIES, {
    description:
      'SEMANTIC_VERSION: every release name is a semantic version (a leading v accepted) and points follow version precedence; FIRST_OBSERVED: otherwise, by first-observed run time with the release name breaking ties',
  }),
  points: Type.Array(SeriesPoint, { description: `oldest release first; at most ${MAX_POINTS}` }),
  unreleased_present: Type.Boolean({ description: 'true when runs that declared no release have admissible results (see unreleased)' }),
  unreleased: Nullable(Type.Object(aggregateFields, { description: 'the runs that declared no release: one aggregate, never a point' })),
  excluded_counts: ExcludedCounts,
  truncated: Type.Boolean({ description: `true when more than ${MAX_POINTS} releases matched: the most recently first-observed ${MAX_POINTS} are shown (narrow start and end)` }),
});

// ---- gates

export const GatePath = Type.Object({ gateId: Type.String({ minLength: 1, maxLength: 200, description: 'the gate id' }) });

export const CreateGateBody = Type.Object(
  {
    gate_id: Type.String({ maxLength: 200, description: `caller-owned id matching ${GATE_ID_PATTERN}` }),
    display_name: Type.Optional(Type.String({ maxLength: MAX_DISPLAY_NAME, description: 'default: the gate id' })),
    evaluator: Type.Object(
      {
        evaluator_id: Type.String({ maxLength: 200 }),
        version: Type.Integer({ minimum: 0, maximum: MAX_VERSION_NUMBER, description: 'an exact existing version (404 when missing); 0, the legacy version, is refused' }),
      },
      { additionalProperties: false, description: 'the exact evaluator version whose results are the evidence' },
    ),
    release: Release('the candidate release the gate decides on'),
    baseline_release: Type.Optional(Release('the release to compare with; default: the release just before release in the version\'s release series')),
    min_samples: Type.Integer({ minimum: 1, maximum: MAX_MIN_SAMPLES, description: 'admissible results the candidate (and a baseline compared with) must have' }),
    min_mean: Type.Optional(Type.Number({ description: 'hold when the candidate mean is below' })),
    max_mean: Type.Optional(Type.Number({ description: 'hold when the candidate mean is above (for lower-is-better metrics)' })),
    max_mean_drop: Type.Optional(Type.Number({ minimum: 0, description: 'hold when the candidate mean is more than this below the baseline mean' })),
    max_mean_rise: Type.Optional(Type.Number({ minimum: 0, description: 'hold when the candidate mean is more than this above the baseline mean (for lower-is-better metrics)' })),
  },
  { additionalProperties: false, description: 'created_by comes from the credential; sending it is 400' },
);

const gateFields = {
  gate_id: Type.String(),
  project_id: Type.String(),
  display_name: Type.String(),
  evaluator: EvaluatorRef,
  metric_name: Type.String({ description: 'the metric of the bound evaluator version' }),
  release: Type.String(),
  baseline_release: Nullable(Type.String({ description: 'null: the release just before release in the series, found at each evaluation' })),
  min_samples: Type.Integer(),
  min_mean: Nullable(Type.Number()),
  max_mean: Nullable(Type.Number()),
  max_mean_drop: Nullable(Type.Number()),
  max_mean_rise: Nullable(Type.Number()),
  created_at: Timestamp('when the gate was created'),
  created_by: Type.String({ description: 'user:<id> or api_key:<id>, from the credential' }),
};

export const Gate = Type.Object(gateFields, { $id: 'ReleaseGate', description: 'A release gate; it never changes' });
export const CreateGateResponse = Type.Object({ ...gateFields, created: Type.Boolean({ description: 'false: an identical gate existed and is answered' }) });

const EvidenceSide = Type.Object({
  release: Type.String(),
  sample_count: Type.Integer({ minimum: 0, description: 'admissible results' }),
  mean: Nullable(Type.Number({ description: 'null when there is no admissible result (never a measured zero)' })),
  first_observed_at: Nullable(Type.String()),
  last_observed_at: Nullable(Type.String()),
  excluded_counts: ExcludedCounts,
});

export const Decision = Type.Object(
  {
    decision_id: Type.String(),
    gate_id: Type.String(),
    idempotency_key: Type.String({ description: `"${DEFAULT_INTENT_KEY}" when the evaluation named none` }),
    decided_at: Timestamp('when the evidence was read'),
    decided_by: Type.String({ description: 'user:<id> or api_key:<id>, from the credential' }),
    outcome: stringEnum(GATE_OUTCOMES, { description: 'ADMIT only when every check passed; anything missing or unusable holds' }),
    reading: stringEnum(GATE_READINGS, {
      description: 'EVIDENCE: admissible results of the bound version exist; NO_EVIDENCE: none of the bound version; INADMISSIBLE: matching results exist but none is usable',
    }),
    reasons: Type.Array(Type.Object({ code: stringEnum(REASON_CODES), message: Type.String() }), { description: 'why the release is held; empty for ADMIT' }),
    evidence: Type.Object({
      evaluator: EvaluatorRef,
      metric_name: Type.String(),
      candidate: EvidenceSide,
      baseline: Nullable(EvidenceSide),
      baseline_source: stringEnum(BASELINE_SOURCES),
      ordering_strategy: Nullable(Type.String({ description: 'the series ordering that chose a default baseline' })),
      delta_mean: Nullable(Type.Number({ description: 'candidate mean minus baseline mean' })),
      thresholds: Type.Object({
        min_samples: Type.Integer(),
        min_mean: Nullable(Type.Number()),
        max_mean: Nullable(Type.Number()),
        max_mean_drop: Nullable(Type.Number()),
        max_mean_rise: Nullable(Type.Number()),
      }),
    }),
  },
  { $id: 'ReleaseGateDecision', description: 'One decision of a gate with the evidence snapshot it was made on' },
);

export const EvaluateGateBody = Type.Object(
  {
    idempotency_key: Type.Optional(
      Type.String({ maxLength: 200, description: `matches ${IDEMPOTENCY_KEY_PATTERN}; the same key answers the original decision; omitted: "${DEFAULT_INTENT_KEY}", the stable default intent` }),
    ),
  },
  { additionalProperties: false },
);

export const EvaluateGateResponse = Type.Object({
  decision: Decision,
  created: Type.Boolean({ description: 'false: the decision already recorded under this idempotency key' }),
});

export const GateWithHistory = Type.Object({
  ...gateFields,
  decisions: Type.Array(Decision, { description: `newest first; at most ${DECISION_HISTORY}` }),
  decision_count: Type.Integer({ minimum: 0 }),
  decisions_truncated: Type.Boolean({ description: `true when the gate holds more than ${DECISION_HISTORY} decisions` }),
});

export const ListGatesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: Type.Optional(
      Type.Integer({ minimum: 0, maximum: U32_MAX, description: `default ${GATE_PAGE.default}, at most ${GATE_PAGE.max} (above is 400, never truncated); 0 is refused` }),
    ),
    release: Type.Optional(Type.String({ maxLength: 600, description: 'only gates deciding on this release' })),
    evaluator_id: Type.Optional(Type.String({ maxLength: 200, description: 'only gates bound to a version of this evaluator' })),
  },
  { additionalProperties: false },
);

export const ListGatesResponse = Type.Object({ gates: Type.Array(Gate, { description: 'by gate_id ascending' }), next_cursor: NextCursorField });
