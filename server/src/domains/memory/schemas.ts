/** Schemas of memory labels and propagation (`/memory-items`, `/memory-item-labels`). */
import { Type, type TSchema } from '@sinclair/typebox';
import { NextCursorField, PageQuery, U32_MAX } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { CANONICAL_OPERATIONS } from '../agent-runs/model.js';
import { LABEL_PAGE, MAX_ITEM_KEY, MAX_REASON, PROPAGATION_LIMIT } from './service.js';
import { MEMORY_LABEL_STATES, MEMORY_TRUST_LABELS } from './store.js';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Nullable = <T extends TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

const ItemKey = Type.String({
  minLength: 1,
  maxLength: MAX_ITEM_KEY,
  description: `the memory item key: the svc.memory.item.id recorded on memory steps, URL-encoded in the path; 1 to ${MAX_ITEM_KEY} characters`,
});

export const ItemPathParams = Type.Object({ itemKey: ItemKey });

export const ItemQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

export const LabelBody = Type.Object(
  {
    label: stringEnum(MEMORY_TRUST_LABELS, { description: 'the judgement; MEMORY_TRUST_LABEL_UNSPECIFIED and anything else is refused' }),
    reason: Type.String({ minLength: 1, maxLength: MAX_REASON, description: `required, not blank; at most ${MAX_REASON} characters` }),
  },
  { additionalProperties: false, description: 'labeled_by and labeled_at come from the credential and the clock; sending them is 400' },
);

export const MemoryLabel = Type.Object(
  {
    id: Type.String({ description: 'the id of this revision' }),
    project_id: Type.String(),
    memory_item_key: Type.String(),
    label: stringEnum(MEMORY_TRUST_LABELS),
    reason: Type.String(),
    revision: Type.Integer({ minimum: 1, description: '1 for the first label of the item, then 2, 3, ...; history is never replaced' }),
    labeled_by: Type.String({ description: 'user:<id> or api_key:<id>, from the credential' }),
    labeled_at: Timestamp('when it was written; strictly increases with the revision within one item'),
    review_signal_opened: Type.Boolean({ description: 'this write opened a REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM signal' }),
    review_signal_resolved: Type.Boolean({ description: 'this write resolved one' }),
  },
  { $id: 'MemoryLabel', description: 'One revision of the label of a memory item' },
);

const limitQuery = (d: { default: number; max: number }, extra = '') =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: `default ${d.default}, at most ${d.max} (above is 400, never truncated)${extra}; 0 is refused` }));

export const ListLabelsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: limitQuery(LABEL_PAGE),
    memory_item_key: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ITEM_KEY, description: 'only the revisions of this item (exact key)' })),
    label: Type.Optional(
      Type.Array(Type.String(), { description: `repeated or comma-separated, OR within; one of ${MEMORY_TRUST_LABELS.join(', ')}; anything else is 400` }),
    ),
  },
  { additionalProperties: false, description: 'AND across filters, OR within one' },
);

export const ListLabelsResponse = Type.Object({
  memory_item_labels: Type.Array(MemoryLabel, { description: 'every revision, newest first by labeled_at (then id)' }),
  next_cursor: NextCursorField,
});

export const PropagationQuery = Type.Object({ ...ProjectSelectorQuery, limit: limitQuery(PROPAGATION_LIMIT) }, { additionalProperties: false });

const LabelState = stringEnum(MEMORY_LABEL_STATES);

export const PropagationEntry = Type.Object({
  session_key: Nullable(Type.String(), "the session of the step's run; null when none"),
  turn_id: Nullable(Type.String(), "the turn of the step's run; null when none"),
  run_id: Nullable(Type.String(), 'the run (its trace id); null when the trace is no agent run'),
  trace_id: Type.String({ description: 'the trace of the step (the run id when the trace is a run)' }),
  span_id: Type.String({ description: 'the memory step' }),
  occurred_at: Timestamp('start of the step (microseconds)'),
  canonical_operation: stringEnum(CANONICAL_OPERATIONS, { description: 'one of the memory operations' }),
  store: Nullable(Type.String(), 'gen_ai.data_source.id of the step'),
  item_provenance: Nullable(Type.String(), 'svc.memory.item.provenance of the step'),
  declared_trust_label: Nullable(stringEnum(MEMORY_TRUST_LABELS), 'svc.memory.trust_label the agent declared on the step (its own claim, not a label)'),
  label_state: LabelState,
  label_in_force: Nullable(stringEnum(MEMORY_TRUST_LABELS), 'the label at the time of this entry (historical, not the current label); null when unlabeled then'),
  label_revision: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'revision of the label in force' }),
  label_id: Nullable(Type.String(), 'id of the label revision in force'),
  label_in_force_since: Nullable(Timestamp('labeled_at of that revision'), 'labeled_at of the label in force'),
});

export const PropagationResponse = Type.Object(
  {
    memory_item_key: Type.String(),
    project_id: Type.String(),
    entries: Type.Array(PropagationEntry, { description: 'the recorded operations on the item, oldest first (start, trace id, span id)' }),
    distinct_session_count: Type.Integer({ minimum: 0, description: 'distinct sessions over every recorded operation of the item, not only this page' }),
    current_label: Nullable(stringEnum(MEMORY_TRUST_LABELS), 'the label now (highest revision); null when nobody labelled the item'),
    current_label_state: LabelState,
    current_label_record: Type.Union([MemoryLabel, Type.Null()], { description: 'the current revision in full; null when unlabeled' }),
    truncated: Type.Boolean({ description: 'more operations were recorded than limit' }),
  },
  { description: 'Where a memory item went: every recorded operation on it with the label in force at its time' },
);
