/** Schemas of datasets and sandbox replay (`/evaluation/datasets...`). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../../http/pagination.js';
import { ProjectSelectorQuery } from '../../../http/schemas.js';
import { CONTENT_CLASSES } from '../../content/content-keys.js';
import { MAX_POLICIES, MAX_TOOL_NAME } from '../replay/replay.js';
import {
  DATASET_ID_PATTERN,
  DATASET_PAGE,
  ITEM_PAGE,
  MAX_DESCRIPTION,
  MAX_DISPLAY_NAME,
  MAX_PROMOTION_SUBJECTS,
  MAX_REMOVAL_ITEMS,
  MAX_VERSION_ITEMS,
  MAX_VERSION_NUMBER,
  PROMOTABLE_KIND,
} from './service.js';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Actor = (description: string) => Type.String({ description: `${description}: user:<id> or api_key:<id>, from the credential` });
const DatasetIdField = Type.String({ maxLength: 200, description: `a caller-chosen slug matching ${DATASET_ID_PATTERN}` });
const DisplayName = Type.String({ maxLength: MAX_DISPLAY_NAME, description: `not blank; at most ${MAX_DISPLAY_NAME} characters` });
const Description = Type.String({ maxLength: MAX_DESCRIPTION, description: `at most ${MAX_DESCRIPTION} characters` });
const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) => Type.Union([t, Type.Null()]);

export const ProjectOnlyQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });
export const ListQuery = Type.Object({ ...ProjectSelectorQuery, ...PageQuery }, { additionalProperties: false });
export const DatasetPath = Type.Object({ datasetId: Type.String({ minLength: 1, maxLength: 200, description: 'the dataset id' }) });
const VersionParam = Type.String({ maxLength: 20, description: `an exact integer from 1 to ${MAX_VERSION_NUMBER}; "latest" and 0 are 400` });
export const VersionPath = Type.Object({ datasetId: DatasetPath.properties.datasetId, version: VersionParam });
export const ItemPath = Type.Object({
  datasetId: DatasetPath.properties.datasetId,
  version: VersionParam,
  itemId: Type.String({ minLength: 1, maxLength: 200, description: 'the item (case) id: 64 lower-case hexadecimal characters' }),
});

export const CreateDatasetBody = Type.Object(
  { dataset_id: DatasetIdField, display_name: Type.Optional(DisplayName), description: Type.Optional(Description) },
  { additionalProperties: false, description: 'display_name defaults to the id, description to empty. The dataset starts with no version.' },
);
export const PatchDatasetBody = Type.Object(
  { display_name: Type.Optional(DisplayName), description: Type.Optional(Description) },
  { additionalProperties: false, description: 'the editable metadata; versions are never changed' },
);
export const PromotionBody = Type.Object(
  {
    subjects: Type.Array(
      Type.Object(
        {
          subject_kind: Type.String({ maxLength: 100, description: `${PROMOTABLE_KIND} (the only accepted value)` }),
          subject_ref: Type.String({ maxLength: 200, description: 'the run (trace) id' }),
          review_annotation_id: Type.String({ maxLength: 200, description: 'the id of a judgment recorded in this project on this exact run' }),
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_PROMOTION_SUBJECTS, description: `1 to ${MAX_PROMOTION_SUBJECTS} reviewed runs; more is refused, never shortened` },
    ),
  },
  { additionalProperties: false },
);
export const RemovalBody = Type.Object(
  { item_ids: Type.Array(Type.String({ maxLength: 200 }), { maxItems: MAX_REMOVAL_ITEMS, description: `1 to ${MAX_REMOVAL_ITEMS} item ids of the latest version` }) },
  { additionalProperties: false },
);
export const SandboxPlanBody = Type.Object(
  {
    policies: Type.Optional(
      Type.Array(
        Type.Object(
          {
            tool_name: Type.String({ maxLength: MAX_TOOL_NAME }),
            effect: Type.String({ maxLength: 100, description: 'SANDBOX_EFFECT_NONE, SANDBOX_EFFECT_INTERNAL or SANDBOX_EFFECT_EXTERNAL' }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_POLICIES, description: `at most ${MAX_POLICIES}; a tool declared twice is 400` },
      ),
    ),
    default_effect: Type.Optional(Type.String({ maxLength: 100, description: 'absent: SANDBOX_EFFECT_EXTERNAL' })),
  },
  { additionalProperties: false, description: 'a sandbox plan' },
);

// ---- responses

const Version = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  item_count: Type.Integer({ minimum: 0, maximum: MAX_VERSION_ITEMS }),
  change: Type.String({ description: 'what sealed it: promotion or removal' }),
  changed_count: Type.Integer({ minimum: 0, description: 'items the change added or removed' }),
  sealed_at: Timestamp('when it was sealed'),
  sealed_by: Actor('who sealed it'),
  cited: Type.Boolean({ description: 'a stored score cites this version' }),
});

export const DatasetSummary = Type.Object(
  {
    project_id: Type.String(),
    dataset_id: Type.String(),
    display_name: Type.String(),
    description: Type.String(),
    latest_version: Type.Integer({ minimum: 0, description: '0: no version sealed yet' }),
    created_at: Timestamp('when it was created'),
    created_by: Actor('who created it'),
    updated_at: Timestamp('when the metadata last changed'),
    updated_by: Actor('who last changed the metadata'),
  },
  { $id: 'EvalDatasetSummary' },
);
export const Dataset = Type.Intersect([DatasetSummary, Type.Object({ versions: Type.Array(Version, { description: 'oldest first' }) })]);
export const ListDatasetsResponse = Type.Object({ datasets: Type.Array(DatasetSummary), next_cursor: NextCursorField }, { description: `by dataset id; default ${DATASET_PAGE.default}, at most ${DATASET_PAGE.max}` });

export const SealResponse = Type.Object({
  dataset: DatasetSummary,
  version: Version,
  sealed: Type.Boolean({ description: 'false: nothing new (every case was already present); the latest version is answered' }),
  subjects: Type.Optional(Type.Array(Type.Object({ subject_ref: Type.String(), item_id: Type.String(), added: Type.Boolean() }))),
});

const Content = Type.Object({ key: Type.String(), content_class: Type.String(), value: Type.Unknown() });
const CaseStep = Type.Object({
  step_id: Type.String(),
  parent_step_id: Nullable(Type.String()),
  name: Type.String(),
  canonical_operation: Type.String(),
  outcome: Nullable(Type.String()),
  tool_name: Nullable(Type.String()),
  started_at: Type.String(),
  safety_check: Type.Boolean(),
  content: Type.Array(Content),
});
export const Case = Type.Object(
  {
    run: Type.Object({
      run_id: Type.String(),
      root_step_id: Type.String(),
      status: Nullable(Type.String()),
      started_at: Type.String(),
      duration_ms: Type.Union([Type.Number(), Type.Null()]),
      step_count: Type.Integer(),
      error_steps: Type.Integer(),
      tool_calls: Type.Integer(),
      model_calls: Type.Integer(),
      cost_nanos: Type.Union([Type.Number(), Type.Null()]),
      cost_unavailable_reason: Nullable(Type.String()),
      safety_error_steps: Nullable(Type.Integer()),
      session_key: Nullable(Type.String()),
      release: Nullable(Type.String()),
      content: Type.Array(Content),
    }),
    steps: Type.Array(CaseStep),
    withheld_classes: Type.Array(Type.String({ enum: [...CONTENT_CLASSES] })),
  },
  { $id: 'EvalDatasetCase', description: 'a frozen, self-contained projection of one run' },
);

const Item = Type.Object({
  item_id: Type.String({ description: 'the case id (SHA-256 of the case content)' }),
  position: Type.Integer({ minimum: 1 }),
  review: Type.Object({ annotation_id: Type.String(), reviewer_id: Type.String(), reviewed_at: Timestamp('when the judgment was recorded') }),
  case: Case,
});
export const ItemsResponse = Type.Object(
  { dataset_id: Type.String(), version: Type.Integer(), item_count: Type.Integer(), items: Type.Array(Item), next_cursor: NextCursorField },
  { description: `by position; default ${ITEM_PAGE.default}, at most ${ITEM_PAGE.max} a page` },
);

export const ReplayResponse = Type.Object({
  dataset_id: Type.String(),
  version: Type.Integer(),
  item_id: Type.String(),
  replayed_run: Case,
  plan_digest: Type.String({ description: 'identical behaviour on this case gives one digest' }),
  counts: Type.Object({
    steps: Type.Integer(),
    tool_calls: Type.Integer(),
    replayed: Type.Integer(),
    stubbed: Type.Integer(),
    nothing_recorded: Type.Integer(),
  }),
  sandbox_tools: Type.Array(Type.String(), { description: 'sorted: the tools the sandbox answered for with a stub' }),
  steps: Type.Array(
    Type.Object({
      index: Type.Integer(),
      step_id: Type.String(),
      canonical_operation: Type.String(),
      tool_name: Nullable(Type.String()),
      effect: Type.Optional(Type.String()),
      disposition: Type.String({ enum: ['carried', 'recorded', 'unrecorded', 'stubbed'] }),
    }),
  ),
});
