import { Type } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH } from '../people/password.js';
import { OrganizationRole, UserSummary } from '../people/schemas.js';

export const LoginBody = Type.Object(
  {
    // Not format-checked: a malformed email is simply one nobody has (401), like any unknown email.
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
    org_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'required when the person belongs to several organizations' })),
  },
  { additionalProperties: false },
);

export const SessionResponse = Type.Object(
  { user: UserSummary, organization: OrganizationRole },
  { description: 'sets the svc_session and svc_refresh cookies' },
);
