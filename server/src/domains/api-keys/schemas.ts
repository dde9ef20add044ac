import { Type } from '@sinclair/typebox';
import { PageQuery, NextCursorField } from '../../http/pagination.js';
import { MAX_EXPIRY_DAYS } from './service.js';

const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 });

export const ApiKeyEntry = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked'), Type.Literal('expired')]),
  project_id: Type.Union([Type.String(), Type.Null()]),
  org_wide: Type.Boolean(),
  key_prefix: Type.String({ description: '`svc_` and the first 6 characters of the random part, to recognise the key; empty for a key chosen at setup (SVC_INIT_API_KEY)' }),
  scopes: Type.Array(Type.String()),
  expires_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  user_id: Type.Union([Type.String(), Type.Null()]),
  created_by_api_key_id: Type.Union([Type.String(), Type.Null()]),
  created_by_state: Type.Union(
    [Type.Literal('api_key'), Type.Literal('user'), Type.Literal('orphaned_user'), Type.Literal('system')],
    { description: 'which creator field applies; orphaned_user: a person created it and their record is gone' },
  ),
}, { $id: 'ApiKey' });

export const CreatedApiKey = Type.Intersect([ApiKeyEntry, Type.Object({ key: Type.String({ description: 'the secret, shown this once' }) })]);

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Scopes,
    project_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    org_wide: Type.Optional(Type.Boolean()),
    expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_DAYS, description: 'default 30' })),
  },
  { additionalProperties: false },
);

export const UpdateApiKeyBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), scopes: Type.Optional(Scopes) },
  { additionalProperties: false },
);

export const ListApiKeysQuery = Type.Object(PageQuery, { additionalProperties: false });
export const ListApiKeysResponse = Type.Object({ api_keys: Type.Array(ApiKeyEntry), next_cursor: NextCursorField });
export const ApiKeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
