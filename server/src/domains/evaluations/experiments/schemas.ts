/** Schemas of experiments, trials, runs and the comparison (`/evaluation/experiments`). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery, U32_MAX } from '../../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../../http/schemas.js';
import { MAX_VERSION_NUMBER } from '../evaluators/service.js';
import {
  EVALUATORS_PER_EXPERIMENT,
  EXPERIMENT_ID_PATTERN,
  EXPERIMENT_PAGE,
  MAX_DISPLAY_NAME,
  MAX_LABEL,
  MAX_RELEASE,
  MAX_TRIAL_RUNS,
  RUN_BOUND,
  TRIAL_ID_PATTERN,
} from './service.js';
import { TRIAL_ROLES } from './store.js';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Actor = Type.String({ description: 'who wrote it: user:<id>, api_key:<id> or oauth:<id>, from the credential' });
const Version = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_VERSION_NUMBER, description });

export const EvaluatorRef = Type.Object(
  {
    evaluator_id: Type.String({ minLength: 1, maxLength: 128 }),
    version: Version('an exact existing version (no "latest"; 404 when missing)'),
  },
  { additionalProperties: false },
);
export const DatasetRef = Type.Object(
  {
    dataset_id: Type.String({ minLength: 1, maxLength: 200 }),
    version: Version('an exact sealed version of the dataset (no "latest"; 404 when missing)'),
  },
  { additionalProperties: false },
);

export const ExperimentPath = Type.Object({ experimentId: Type.String({ minLength: 1, maxLength: 200 }) });
export const ProjectOnlyQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

export const CreateExperimentBody = Type.Object(
  {
    experiment_id: Type.String({ maxLength: 200, description: `caller-chosen, matching ${EXPERIMENT_ID_PATTERN}` }),
    display_name: Type.String({ minLength: 1, maxLength: MAX_DISPLAY_NAME }),
    dataset: DatasetRef,
    evaluators: Type.Array(EvaluatorRef, {
      minItems: EVALUATORS_PER_EXPERIMENT.min,
      maxItems: EVALUATORS_PER_EXPERIMENT.max,
      description: `${EVALUATORS_PER_EXPERIMENT.min} to ${EVALUATORS_PER_EXPERIMENT.max} exact evaluator versions, no duplicates; each must measure runs`,
    }),
  },
  { additionalProperties: false, description: 'created_by and created_at come from the credential and the clock' },
);

export const AddTrialBody = Type.Object(
  {
    trial_id: Type.String({ maxLength: 200, description: `caller-chosen, matching ${TRIAL_ID_PATTERN}` }),
    role: stringEnum(TRIAL_ROLES, { description: 'TRIAL_ROLE_BASELINE (at most one per experiment) or TRIAL_ROLE_CANDIDATE; TRIAL_ROLE_UNSPECIFIED is refused' }),
    label: Type.String({ minLength: 1, maxLength: MAX_LABEL, description: 'what the arm is, for people (e.g. "prompt v7")' }),
    release: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_RELEASE, description: 'the release the arm stands for, as you name it (descriptive)' })),
    runs: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 64 }), {
        maxProperties: MAX_TRIAL_RUNS,
        description:
          'item id -> run id of a new run of that case. Omitted: the trial scores the frozen cases themselves. Items not mapped count as missing (never 0); ' +
          'an item the dataset version does not hold, a malformed run id, or one run for two items is 400',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RunBody = Type.Object(
  {
    max_evaluations: Type.Optional(
      Type.Integer({ minimum: 1, maximum: RUN_BOUND.max, description: `evaluations this call asks for at most (default ${RUN_BOUND.default}); the rest remain for the next call` }),
    ),
  },
  { additionalProperties: false },
);

const ExperimentFields = {
  project_id: Type.String(),
  experiment_id: Type.String(),
  display_name: Type.String(),
  dataset: Type.Object({ dataset_id: Type.String(), version: Type.Integer() }),
  evaluators: Type.Array(Type.Object({ evaluator_id: Type.String(), version: Type.Integer() })),
  created_at: Timestamp('when the experiment was created'),
  created_by: Actor,
};

export const ExperimentSummary = Type.Object(ExperimentFields, { $id: 'ExperimentSummary', description: 'An experiment over one exact dataset version' });

const Counts = Type.Object({
  items: Type.Integer({ description: 'cells counted: items × evaluators for a trial, items for one metric' }),
  scored: Type.Integer({ description: 'with a stored score' }),
  numeric: Type.Integer({ description: 'scored with a numeric value: what the mean averages' }),
  unmeasured: Type.Integer({ description: 'nothing measurable: counted, never 0' }),
  withheld: Type.Integer({ description: 'the content policy withheld content the rubric asked for: counted, never 0' }),
  missing: Type.Integer({ description: 'the trial maps no run to the item: counted, never 0' }),
  pending: Type.Integer({ description: 'not evaluated yet (or the run is not readable yet): run again' }),
});

const TrialFields = {
  trial_id: Type.String(),
  role: stringEnum(TRIAL_ROLES),
  label: Type.String(),
  release: Type.Optional(Type.String()),
  subjects: stringEnum(['FROZEN_CASES', 'RUNS'] as const, { description: 'FROZEN_CASES: the cases themselves; RUNS: new runs mapped by item' }),
  mapped_items: Type.Integer({ description: 'items the trial has a subject for (every item for FROZEN_CASES)' }),
  created_at: Timestamp('when the trial was added'),
  created_by: Actor,
};

export const TrialWithStatus = Type.Object(
  {
    ...TrialFields,
    status: stringEnum(['TRIAL_STATUS_NOT_STARTED', 'TRIAL_STATUS_IN_PROGRESS', 'TRIAL_STATUS_COMPLETE'] as const, {
      description: 'COMPLETE: no cell is pending (missing, unmeasured and withheld cells are final)',
    }),
    counts: Counts,
  },
  { $id: 'ExperimentTrial' },
);

export const Experiment = Type.Object(
  { ...ExperimentFields, items: Type.Integer({ description: 'items of the dataset version' }), trials: Type.Array(TrialWithStatus, { description: 'in the order added' }) },
  { $id: 'Experiment', description: 'An experiment, its trials and their progress' },
);

export const CreateExperimentResponse = Type.Object({ ...ExperimentFields, created: Type.Boolean({ description: 'false: the identical experiment already existed; nothing was written' }) });

export const TrialResponse = Type.Object({
  ...TrialFields,
  runs: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'item id -> run id (lower case), as stored' })),
  created: Type.Boolean({ description: 'false: the identical trial already existed; nothing was written' }),
});

export const ListExperimentsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: `default ${EXPERIMENT_PAGE.default}, at most ${EXPERIMENT_PAGE.max} (above is 400); 0 is refused` })),
    dataset_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'only experiments over this dataset' })),
  },
  { additionalProperties: false },
);
export const ListExperimentsResponse = Type.Object({ experiments: Type.Array(ExperimentSummary, { description: 'by experiment_id ascending' }), next_cursor: NextCursorField });

const Failure = Type.Object({
  trial_id: Type.String(),
  item_id: Type.String(),
  evaluator: Type.Object({ evaluator_id: Type.String(), version: Type.Integer() }),
  status: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
});

export const RunResponse = Type.Object({
  experiment_id: Type.String(),
  asked: Type.Integer({ description: 'evaluations this call asked for' }),
  scored: Type.Integer({ description: 'scored and stored by this call' }),
  unmeasured: Type.Integer({ description: 'recorded as unmeasured by this call (never 0)' }),
  withheld: Type.Integer({ description: 'recorded as withheld by this call (never 0)' }),
  already_evaluated: Type.Integer({ description: 'answered from a result stored earlier or by a concurrent call (nothing scored twice)' }),
  not_evaluated: Type.Object(
    {
      unreadable: Type.Integer({ description: 'the run could not be read (not found yet, or past its read budget)' }),
      in_progress: Type.Integer({ description: 'a concurrent call is evaluating the same subject' }),
      refused: Type.Integer({ description: 'refused for another reason (see failures)' }),
    },
    { description: 'asked but not answered: the next run asks again' },
  ),
  failures: Type.Array(Failure, { description: 'the first 20 cells not evaluated, with why' }),
  failures_truncated: Type.Boolean(),
  missing: Type.Integer({ description: 'cells without a subject (a trial maps no run to the item): counted, never scored' }),
  stopped: Type.Union([stringEnum(['budget_exhausted', 'bound'] as const), Type.Null()], {
    description: 'why the call stopped early: the organization\'s daily budget (429 from the budget), or this call\'s bound; null when it went through',
  }),
  truncated: Type.Boolean({ description: 'true: cells remain that this call did not ask for (run again)' }),
  remaining: Type.Integer({ description: 'cells still without a stored answer' }),
  complete: Type.Boolean({ description: 'every cell has a stored answer (or is missing)' }),
});

const Arm = Type.Object({
  trial_id: Type.String(),
  role: stringEnum(TRIAL_ROLES),
  label: Type.String(),
  release: Type.Optional(Type.String()),
  counts: Counts,
  mean: Type.Optional(Type.Number({ description: 'over the numeric scores; absent when nothing was scored (never 0 for nothing)' })),
  labels: Type.Record(Type.String(), Type.Integer(), { description: 'scored items by label' }),
});

const Versus = Type.Object({
  trial_id: Type.String(),
  label: Type.String(),
  delta: Type.Optional(Type.Number({ description: 'candidate mean − baseline mean, each over all it scored; absent when either is absent' })),
  paired: Type.Object({
    items: Type.Integer({ description: 'items with a numeric score on both sides' }),
    baseline_mean: Type.Optional(Type.Number()),
    candidate_mean: Type.Optional(Type.Number()),
    delta: Type.Optional(Type.Number({ description: 'candidate − baseline over the paired items; absent when none' })),
  }),
});

export const ComparisonResponse = Type.Object({
  experiment_id: Type.String(),
  dataset: Type.Object({ dataset_id: Type.String(), version: Type.Integer() }),
  items: Type.Integer(),
  baseline_trial_id: Type.Union([Type.String(), Type.Null()], { description: 'null: no baseline yet (each arm is still summarized; nothing is compared)' }),
  complete: Type.Boolean({ description: 'no cell is pending' }),
  pending: Type.Integer({ description: 'cells not evaluated yet, over every trial and metric' }),
  metrics: Type.Array(
    Type.Object({
      evaluator: Type.Object({ evaluator_id: Type.String(), version: Type.Integer() }),
      metric_name: Type.String(),
      trials: Type.Array(Arm, { description: 'every trial, in the order added' }),
      versus_baseline: Type.Array(Versus, { description: 'each candidate against the baseline: arithmetic differences, neutral (not a verdict)' }),
    }),
    { description: 'one per evaluator version of the experiment, in its order' },
  ),
});
