import { Type } from '@sinclair/typebox';
import { PageQuery, NextCursorField } from '../../http/pagination.js';
import { MAX_PASSWORD_LENGTH } from './password.js';

const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);
const Email = Type.String({ format: 'email', maxLength: 320 });

export const UserSummary = Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() });
export const OrganizationRole = Type.Object({ id: Type.String(), role: RoleSchema });

export const MeResponse = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  organization: OrganizationRole,
  scopes: Type.Array(Type.String(), { description: "what this credential may do: the role's scopes for a session, the key's for an API key" }),
});

export const MemberEntry = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  created_at: Type.String({ format: 'date-time' }),
}, { $id: 'Member' });
export const ListMembersQuery = Type.Object(PageQuery, { additionalProperties: false });
export const ListMembersResponse = Type.Object({ members: Type.Array(MemberEntry), next_cursor: NextCursorField });
export const MemberParams = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 200 }) });
export const UpdateMemberBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });

export const InvitationEntry = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: RoleSchema,
  status: Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('revoked'), Type.Literal('expired')]),
  expires_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
}, { $id: 'Invitation' });
export const CreatedInvitation = Type.Intersect([
  InvitationEntry,
  Type.Object({ token: Type.String({ description: 'the one-time acceptance token, shown this once' }) }),
]);
export const CreateInvitationBody = Type.Object({ email: Email, role: RoleSchema }, { additionalProperties: false });
export const ListInvitationsQuery = Type.Object(PageQuery, { additionalProperties: false });
export const ListInvitationsResponse = Type.Object({ invitations: Type.Array(InvitationEntry), next_cursor: NextCursorField });
export const InvitationParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
export const AcceptInvitationBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'for a new account only' })),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description: 'new account: at least 12 characters; existing account: its password' }),
  },
  { additionalProperties: false },
);
export const AcceptedInvitation = Type.Object({ user: UserSummary, organization: OrganizationRole });
