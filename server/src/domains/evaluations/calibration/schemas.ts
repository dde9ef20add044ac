/** Schemas of calibration records (`/evaluation/evaluators/{evaluatorId}/versions/{version}/calibrations`, `/evaluation/evaluators/{evaluatorId}/calibrations`). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery, U32_MAX } from '../../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../../http/schemas.js';
import { MAX_VERSION_NUMBER } from '../evaluators/service.js';
import { CALIBRATION_STATES, CALIBRATION_STATISTICS, EXCLUSION_REASONS, MAX_CALIBRATION_SUBJECTS, MAX_MIN_LABELS, VALUE_KINDS } from './model.js';
import { CALIBRATION_PAGE } from './service.js';

export { EvaluatorPath, VersionPath } from '../evaluators/schemas.js';
export const ProjectOnlyQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

export const CreateCalibrationBody = Type.Object(
  {
    subject_refs: Type.Array(Type.String({ maxLength: 64, description: 'a run id (32 hexadecimal characters)' }), {
      maxItems: 1000,
      description: `the runs to compare on: at least 1 and at most ${MAX_CALIBRATION_SUBJECTS} distinct run ids (repeats count once; a longer list is refused, not shortened)`,
    }),
    min_labels: Type.Integer({
      minimum: 0,
      maximum: U32_MAX,
      description: `required: the fewest comparable judgments that make a calibration, from 1 to ${MAX_MIN_LABELS}; 0 is refused`,
    }),
  },
  { additionalProperties: false, description: 'who asked comes from the credential; sending an actor field is 400' },
);

const Statistic = stringEnum(CALIBRATION_STATISTICS, {
  description: 'LINS_CCC (numeric ratings, population form) or COHENS_KAPPA (labels): the statistic computed, or attempted and undefined; absent otherwise',
});

export const Calibration = Type.Object({
  calibration_id: Type.String(),
  project_id: Type.String(),
  evaluator: Type.Object({ evaluator_id: Type.String(), version: Type.Integer({ minimum: 1 }) }, { description: 'the exact evaluator version calibrated' }),
  metric_name: Type.String({ description: 'the evaluator version\'s metric: people\'s judgments of this metric were compared' }),
  state: stringEnum(CALIBRATION_STATES),
  statistic: Type.Optional(Statistic),
  value_kind: Type.Optional(stringEnum(VALUE_KINDS, { description: 'which values the pairs compare; absent without pairs' })),
  agreement: Type.Optional(Type.Number({ minimum: -1, maximum: 1, description: 'the calibration: only for CALIBRATED (0 is a measured zero)' })),
  agreement_rate: Type.Optional(
    Type.Number({ minimum: 0, maximum: 1, description: 'raw label match rate, beside kappa; never the calibration. Only for label pairs that reached min_labels' }),
  ),
  pair_count: Type.Integer({ minimum: 0, description: 'comparable (judgment, judge result) pairs used' }),
  excluded_count: Type.Integer({ minimum: 0, description: 'judgments of the named runs left out; excluded says why' }),
  excluded: Type.Object(Object.fromEntries(EXCLUSION_REASONS.map((r) => [r, Type.Integer({ minimum: 0 })])), {
    description: 'no_judge_result: the judge has no result of this version for the run; no_shared_value: judge and person share no kind of value; other_value_kind: comparable only in the kind not chosen',
  }),
  runs_without_judgment: Type.Integer({ minimum: 0, description: 'named runs the judge scored that no person judged for this metric' }),
  min_labels: Type.Integer({ minimum: 1 }),
  subject_refs: Type.Array(Type.String(), { description: 'the distinct runs named, sorted' }),
  judgment_ids: Type.Array(Type.String(), { description: 'the judgments (annotation ids) paired' }),
  result_ids: Type.Array(Type.String(), { description: 'the judge results paired' }),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Type.String({ description: 'user:<id> or api_key:<id>, from the credential' }),
});

export const CreateCalibrationResponse = Type.Intersect([
  Calibration,
  Type.Object({
    created: Type.Boolean({ description: 'false: the same inputs (judgments, judge results, min_labels, runs) were calibrated before, and that record is answered' }),
  }),
]);

export const ListCalibrationsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: Type.Optional(
      Type.Integer({ minimum: 0, maximum: U32_MAX, description: `default ${CALIBRATION_PAGE.default}, at most ${CALIBRATION_PAGE.max} (above is 400, never truncated); 0 is refused` }),
    ),
    version: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_VERSION_NUMBER, description: 'only records of this exact version' })),
    state: Type.Optional(Type.Array(Type.String(), { description: `repeated or comma-separated, OR within; one of ${CALIBRATION_STATES.join(', ')}` })),
  },
  { additionalProperties: false },
);

export const ListCalibrationsResponse = Type.Object({
  calibrations: Type.Array(Calibration, { description: 'newest first' }),
  next_cursor: NextCursorField,
});
