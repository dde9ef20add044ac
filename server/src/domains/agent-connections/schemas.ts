/** TypeBox schemas of the agent-connection and agent-budget routes. */
import { Type } from '@sinclair/typebox';
import { U32_MAX } from '../../http/pagination.js';

export const AgentConnection = Type.Object({
  id: Type.String(),
  client_id: Type.String(),
  client_name: Type.String({ description: 'client-supplied label, not verified' }),
  client_host: Type.Union([Type.String(), Type.Null()], { description: 'client-supplied label, not verified' }),
  workspace_id: Type.String({ description: 'the organization' }),
  project_id: Type.Union([Type.String(), Type.Null()], { description: 'the one project the approval is limited to; null: the whole organization' }),
  user_id: Type.String({ description: 'the person who approved' }),
  scopes: Type.Array(Type.String(), { description: 'granted permissions (requests are also narrowed to the person\'s current role)' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const OrgWide = Type.Optional(Type.Boolean({ description: "true: every person's approvals in the organization (needs members:write)" }));

export const ListConnectionsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: '1 to 200, default 100' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'rows to skip, default 0' })),
    org_wide: OrgWide,
  },
  { additionalProperties: false },
);

export const ListConnectionsResponse = Type.Object({
  agent_connections: Type.Array(AgentConnection),
  limit: Type.Integer(),
  offset: Type.Integer(),
  next_offset: Type.Union([Type.Integer(), Type.Null()], { description: 'the offset of the next page; null on the last page' }),
});

export const ConnectionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
export const RevokeConnectionQuery = Type.Object({ org_wide: OrgWide }, { additionalProperties: false });

const Limit = (description: string) =>
  Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), Type.Null()], { description: `${description}; null: unlimited` });

export const GetBudgetQuery = Type.Object(
  { credential_kind: Type.Literal('oauth_connection'), credential_id: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const PutBudgetBody = Type.Object(
  {
    credential_kind: Type.Literal('oauth_connection'),
    credential_id: Type.String({ minLength: 1, maxLength: 200 }),
    requests_per_day: Limit('authenticated requests per UTC day'),
    write_actions_per_day: Limit('writes (POST, PUT, PATCH, DELETE) per UTC day'),
  },
  { additionalProperties: false },
);

export const BudgetResponse = Type.Object({
  credential_kind: Type.Literal('oauth_connection'),
  credential_id: Type.String(),
  requests_per_day: Type.Union([Type.Integer(), Type.Null()]),
  write_actions_per_day: Type.Union([Type.Integer(), Type.Null()]),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null: no budget was ever set' }),
  usage: Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD' }), requests: Type.Integer(), write_actions: Type.Integer() }),
});
