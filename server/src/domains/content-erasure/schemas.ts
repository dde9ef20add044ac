/** Schemas of content erasures (docs/content-policy.md "Erasure"). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { stringEnum } from '../../http/schemas.js';
import { CONTENT_CLASSES } from '../content/content-keys.js';
import { ERASURE_SUBJECT_KINDS } from './store.js';

export const ERASURE_LIMIT = { default: 100, max: 200 };

const Class = stringEnum(CONTENT_CLASSES, { description: 'content class' });
const SubjectKind = stringEnum(ERASURE_SUBJECT_KINDS, {
  description: '`session_key` (the conversation id, gen_ai.conversation.id), `trace_id` (32 lower-case hex), `enduser_id` (the `enduser.id` or `user.id` attribute)',
});

export const ErasureParams = Type.Object(
  { projectId: Type.String({ minLength: 1, maxLength: 200 }), erasureId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

export const EraseBody = Type.Object(
  {
    subject_kind: SubjectKind,
    subject_id: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\u0000]*$' }),
    content_classes: Type.Optional(Type.Array(Class, { minItems: 1, maxItems: CONTENT_CLASSES.length, description: 'the classes to erase; default every class' })),
    reason: Type.String({ minLength: 1, maxLength: 1024, pattern: '\\S' }),
    request_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'makes a retry safe: the same principal gets the first erasure back' })),
  },
  { additionalProperties: false },
);

export const ListErasuresQuery = Type.Object(
  { ...PageQuery, kind: Type.Optional(stringEnum(['subject', 'retention'] as const, { description: 'on-demand subject erasures or scheduled retention erasures' })) },
  { additionalProperties: false },
);

export const ErasureView = Type.Object(
  {
    id: Type.String({ description: 'also the action id of its receipt (GET /action-receipts/{actionId})' }),
    project_id: Type.String(),
    kind: Type.String({ description: '`subject` (on demand) or `retention` (scheduled)' }),
    subject_kind: Type.Union([Type.String(), Type.Null()]),
    subject_id: Type.Union([Type.String(), Type.Null()]),
    content_classes: Type.Array(Type.String()),
    before: Type.Union([Type.String(), Type.Null()], { description: 'retention: content recorded before this instant was erased' }),
    reason: Type.Union([Type.String(), Type.Null()]),
    requested_by: Type.String({ description: 'from the credential (`user:…`, `api_key:…`), or `platform:content_retention`' }),
    request_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({ description: '`running`, `completed`, or `failed` (send it again: erasing twice is safe)' }),
    counts: Type.Union(
      [
        Type.Object(
          { spans: Type.Integer(), span_events: Type.Integer(), logs: Type.Integer(), attributes: Type.Integer(), log_bodies: Type.Integer() },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'rows rewritten, attributes removed and GenAI event log bodies removed; null until done or when it failed' },
    ),
    detail_code: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    completed_at: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const ListErasuresResponse = Type.Object({ erasures: Type.Array(ErasureView), next_cursor: NextCursorField }, { additionalProperties: false });
