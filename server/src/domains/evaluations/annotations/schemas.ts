/** Schemas of human judgments (`/agent-runs/{run_id}/annotations`, `/evaluation/annotations`). */
import { Type, type Static } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../../http/pagination.js';
import { ProjectSelectorQuery } from '../../../http/schemas.js';
import { MAX_SUBJECT_REFS } from '../results/service.js';
import { ANNOTATION_LIMIT, MAX_COMMENT, MAX_LABEL, MAX_METRIC_NAME } from './service.js';

export const JudgmentBody = Type.Object(
  {
    metric_name: Type.String({ minLength: 1, maxLength: MAX_METRIC_NAME + 64, description: `free text; stored trimmed and lower-cased (1 to ${MAX_METRIC_NAME} characters)` }),
    numeric_value: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], { description: 'the score; absent (or null) means not scored, 0 is a score of zero' }),
    ),
    label: Type.Optional(Type.Union([Type.String({ maxLength: MAX_LABEL }), Type.Null()], { description: `a verdict label, at most ${MAX_LABEL} characters; absent or null: none` })),
    comment: Type.Optional(Type.String({ maxLength: MAX_COMMENT })),
  },
  { additionalProperties: false, description: 'at least one of numeric_value and label; the author is the credential\'s person' },
);

export const Annotation = Type.Object({
  annotation_id: Type.String(),
  project_id: Type.String(),
  run_id: Type.String(),
  metric_name: Type.String(),
  numeric_value: Type.Optional(Type.Number({ description: 'absent: not scored' })),
  label: Type.Optional(Type.String()),
  comment: Type.String(),
  author_id: Type.String({ description: 'the person who judged (a user id)' }),
  created_at: Type.String({ format: 'date-time' }),
});

export const RecordedAnnotation = Type.Object({
  annotation: Annotation,
  replaced_annotation_id: Type.Union([Type.String(), Type.Null()], { description: 'the caller\'s earlier judgment of this run and metric that this one replaced' }),
});

export const AnnotationsPage = Type.Object({
  annotations: Type.Array(Annotation, { description: 'oldest first' }),
  truncated: Type.Boolean({ description: 'exact: the page cut matching judgments (follow next_cursor)' }),
  next_cursor: NextCursorField,
});

const limit = Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `page size (default ${ANNOTATION_LIMIT.default}, max ${ANNOTATION_LIMIT.max}; above is 400)` }));

export const RunAnnotationsQuery = Type.Object({ ...ProjectSelectorQuery, ...PageQuery, limit, metric_name: Type.Optional(Type.String()) }, { additionalProperties: false });

export const AnnotationsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit,
    subject_refs: Type.Optional(Type.Array(Type.String(), { description: `run ids, repeated or comma-separated; at most ${MAX_SUBJECT_REFS} (a longer list is refused)` })),
    metric_name: Type.Optional(Type.String()),
    author_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const RunParams = Type.Object({ run_id: Type.String({ maxLength: 64 }) });

export type AnnotationView = Static<typeof Annotation>;
