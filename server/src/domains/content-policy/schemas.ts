/** Schemas of content policies, retention windows and the refusal audit (docs/content-policy.md). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { stringEnum } from '../../http/schemas.js';
import { TIME_DESCRIPTION } from '../../http/time.js';
import { BOUNDARIES, CONTENT_CLASSES, DECIDERS, DECISIONS, RETENTION_MAX_DAYS, RETENTION_MIN_DAYS } from './model.js';

export const POLICY_LIMIT = { default: 100, max: 200 };
export const REFUSAL_LIMIT = { default: 100, max: 200 };
const CELLS = CONTENT_CLASSES.length * BOUNDARIES.length;

const Class = stringEnum(CONTENT_CLASSES, { description: 'content class' });
const Sink = stringEnum(BOUNDARIES, { description: 'boundary: `store` (recorded at all), `read` (served to a reader), `export`, `judge_transfer` (sent to an evaluation model)' });
const DecisionSchema = stringEnum(DECISIONS, { description: '`allow`, `allow_metadata` (existence and size only, never bytes) or `deny`' });

export const Rule = Type.Object({ content_class: Class, sink: Sink, decision: DecisionSchema }, { additionalProperties: false });

const Actor = Type.Object(
  { user_id: Type.Optional(Type.String()), api_key_id: Type.Optional(Type.String()) },
  { additionalProperties: false, description: 'who changed it, from their credential' },
);

export const ProjectParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const PolicyView = Type.Object(
  {
    project_id: Type.String(),
    version: Type.Integer({ description: '0: the project has no policy (every cell deny); increases on every change' }),
    rules: Type.Array(Rule, { description: `every cell (${CELLS}), denied ones included, by class then boundary` }),
    updated_by: Type.Optional(Actor),
    updated_at: Type.Optional(Type.String({ description: 'RFC 3339; absent when the project has no policy' })),
  },
  { additionalProperties: false },
);

export const PutPolicyBody = Type.Object(
  {
    expected_version: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 2147483647, description: 'write only at this version (0: only if the project has no policy); mismatch 409; omit to write unconditionally' }),
    ),
    rules: Type.Array(Rule, { maxItems: CELLS, description: 'the whole grid: an omitted cell is deny; one rule per cell (a cell listed twice is 400)' }),
  },
  { additionalProperties: false },
);

export const ListPoliciesQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export const ListPoliciesResponse = Type.Object({ content_policies: Type.Array(PolicyView), next_cursor: NextCursorField }, { additionalProperties: false });

const Days = Type.Integer({ minimum: RETENTION_MIN_DAYS, maximum: RETENTION_MAX_DAYS, description: `whole days, ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS}` });

export const RetentionView = Type.Object(
  {
    project_id: Type.String(),
    windows: Type.Array(
      Type.Object({ content_class: Class, retention_days: Days, updated_by: Actor, updated_at: Type.String() }, { additionalProperties: false }),
      { description: 'only classes that have a window; a class without one is kept as long as the organization keeps data anyway' },
    ),
  },
  { additionalProperties: false },
);

export const PutRetentionBody = Type.Object(
  {
    windows: Type.Array(Type.Object({ content_class: Class, retention_days: Days }, { additionalProperties: false }), {
      maxItems: CONTENT_CLASSES.length,
      description: 'replaces every window: a class not listed has none (no default is synthesized); one window per class',
    }),
  },
  { additionalProperties: false },
);

export const RefusalsQuery = Type.Object(
  {
    ...PageQuery,
    content_class: Type.Optional(Class),
    boundary: Type.Optional(Sink),
    from: Type.Optional(Type.String({ description: `minutes from this time (${TIME_DESCRIPTION})` })),
    to: Type.Optional(Type.String({ description: `minutes up to this time (${TIME_DESCRIPTION})` })),
  },
  { additionalProperties: false },
);

export const RefusalView = Type.Object(
  {
    minute: Type.String({ description: 'the minute the refusals fell in (RFC 3339, UTC)' }),
    content_class: Class,
    boundary: Sink,
    decided_by: stringEnum(DECIDERS, { description: '`policy`, `no_policy` (a project without a policy is denied) or `policy_unreadable`' }),
    decision: stringEnum(['deny', 'allow_metadata'] as const, { description: 'what was refused: everything (`deny`) or the bytes (`allow_metadata`)' }),
    count: Type.Integer({ description: 'values refused in that minute' }),
  },
  { additionalProperties: false },
);

export const RefusalsResponse = Type.Object({ refusals: Type.Array(RefusalView), next_cursor: NextCursorField }, { additionalProperties: false });
