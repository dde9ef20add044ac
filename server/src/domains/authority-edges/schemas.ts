/** Schemas of authority edges (docs/receipts.md, "Authority edges"). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { ProjectSelectorQuery } from '../../http/schemas.js';
import { EDGE_PAGE, MAX_REVOKE_REASON } from './service.js';

export const AuthorityEdge = Type.Object(
  {
    id: Type.String(),
    project_id: Type.String(),
    from_principal: Type.String({ description: 'who delegated: the approver of a mediated authorization, else the requester or the reporting credential' }),
    tool: Type.String(),
    purpose: Type.String(),
    source_kind: Type.String({ description: 'what first evidenced the edge: `quarantine` (a containment approval) or `receipt` (a reported AUTHORIZED entry)' }),
    source_id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    sighting_count: Type.Integer({ minimum: 1, description: 'AUTHORIZED entries that exercised it' }),
    last_exercised_at: Type.Optional(Type.String({ format: 'date-time' })),
    revoked: Type.Boolean(),
    revocation: Type.Optional(
      Type.Object({
        reason: Type.String(),
        revoked_by: Type.String({ description: 'from the credential' }),
        revoked_at: Type.String({ format: 'date-time' }),
      }),
    ),
  },
  { $id: 'AuthorityEdge' },
);

export const ListEdgesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${EDGE_PAGE.default}, at most ${EDGE_PAGE.max}; 0 is refused` })),
    from_principal: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'only edges delegated by this principal' })),
    include_revoked: Type.Optional(Type.Boolean({ description: 'true: revoked edges too (hidden by default)' })),
  },
  { additionalProperties: false },
);

export const ListEdgesResponse = Type.Object({
  authority_edges: Type.Array(AuthorityEdge, { description: 'newest first (created_at, then id)' }),
  next_cursor: NextCursorField,
});

export const EdgeParams = Type.Object({ edgeId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const RevokeBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: MAX_REVOKE_REASON, description: `why (required, at most ${MAX_REVOKE_REASON} characters)` }) },
  { additionalProperties: false },
);

export const RevokeResponse = Type.Object({
  ...AuthorityEdge.properties,
  already_revoked: Type.Boolean({ description: 'true: the edge was revoked before; the first reason and instant are kept' }),
});
