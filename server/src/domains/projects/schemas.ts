import { Type } from '@sinclair/typebox';
import { PageQuery, NextCursorField } from '../../http/pagination.js';

export const ProjectResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  sampling_rate: Type.Number(),
  created_at: Type.String({ format: 'date-time' }),
}, { $id: 'Project' });

export const CreateProjectBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    sampling_rate: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'default 1.0; 0 disables ingestion' })),
  },
  { additionalProperties: false },
);

export const UpdateProjectBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sampling_rate: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);

export const ListProjectsQuery = Type.Object(PageQuery, { additionalProperties: false });

export const ListProjectsResponse = Type.Object({
  projects: Type.Array(ProjectResponse),
  next_cursor: NextCursorField,
});

export const ProjectParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
