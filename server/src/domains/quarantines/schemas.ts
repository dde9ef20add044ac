/** Schemas of containments (`/quarantines`; docs/governance-quarantines.md). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { ENFORCEMENT_STATES, MAX_REASON, MAX_REQUEST_ID, MAX_TARGET, QUARANTINE_ACTIONS, QUARANTINE_STATUSES } from './model.js';

export const QUARANTINE_LIMIT = { default: 100, max: 200 };

const Target = (what: string) => Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TARGET, description: `the ${what} to contain (exactly one target)` }));
const Reason = (what: string) => Type.String({ minLength: 1, maxLength: MAX_REASON, description: `${what}, at most ${MAX_REASON} characters` });

export const RequestQuarantineBody = Type.Object(
  {
    asset_id: Target('inventory asset'),
    observation_key: Target('agent identity (observation key)'),
    api_key_id: Target('API key'),
    reason: Reason('why the agent is contained (required)'),
    action: Type.Optional(
      stringEnum(QUARANTINE_ACTIONS, {
        description: '`freeze_writes` (default: the keys can no longer write telemetry until lifted), `revoke_credentials` or `kill` (the keys are revoked for good)',
      }),
    ),
    environment: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'where the agent misbehaved (recorded; the keys are held in every environment)' })),
    request_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_REQUEST_ID, description: 'makes a retry idempotent: the same person gets the same containment; another person gets 409' }),
    ),
  },
  { additionalProperties: false },
);

export const ReasonBody = Type.Object({ reason: Reason('the reason (required)') }, { additionalProperties: false });

export const QuarantineParams = Type.Object({ quarantineId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const ListQuarantinesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    status: Type.Optional(
      Type.Array(Type.String(), { description: `repeatable or comma-separated (OR): ${QUARANTINE_STATUSES.join(', ')}; an unknown value is 400` }),
    ),
    cursor: PageQuery.cursor,
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${QUARANTINE_LIMIT.default}, at most ${QUARANTINE_LIMIT.max}; 0 is refused` })),
  },
  { additionalProperties: false },
);

const ActorView = Type.Object(
  {
    user_id: Type.Optional(Type.String({ description: 'the person' })),
    api_key_id: Type.Optional(Type.String({ description: 'the API key, when the credential was one' })),
  },
  { description: 'taken from the credential, never from a request body' },
);

const CredentialView = Type.Object({
  api_key_id: Type.String(),
  effect: stringEnum(['freeze', 'revoke'] as const, { description: 'freeze: telemetry writes held until the last lift; revoke: revoked for good' }),
  enforcement: stringEnum(ENFORCEMENT_STATES, { description: '`verified` (read back), `failed` (reenforce retries it) or `unknown` (could not be verified)' }),
  detail_code: Type.Optional(Type.String({ description: 'for example `held_by_another_quarantine`, `already_revoked`, `key_not_found`, `store_error`' })),
  released_at: Type.Optional(Type.String({ format: 'date-time', description: 'when a lift released this hold' })),
});

export const QuarantineView = Type.Object(
  {
    id: Type.String(),
    project_id: Type.String(),
    status: stringEnum(QUARANTINE_STATUSES),
    action: stringEnum(QUARANTINE_ACTIONS),
    asset_id: Type.Optional(Type.String()),
    observation_key: Type.Optional(Type.String()),
    api_key_id: Type.Optional(Type.String()),
    reason: Type.String(),
    environment: Type.Optional(Type.String()),
    request_id: Type.Optional(Type.String()),
    requested_by: ActorView,
    requested_at: Type.String({ format: 'date-time' }),
    approved_by: Type.Optional(ActorView),
    approved_at: Type.Optional(Type.String({ format: 'date-time' })),
    credentials: Type.Array(CredentialView, { description: 'one entry per API key the approval reached; empty before approval' }),
    unenforceable_sightings: Type.Integer({ minimum: 0, description: 'sightings of the target by OAuth access tokens, which no containment can hold' }),
    lift_reason: Type.Optional(Type.String()),
    lifted_by: Type.Optional(ActorView),
    lifted_at: Type.Optional(Type.String({ format: 'date-time' })),
    withdraw_reason: Type.Optional(Type.String()),
    withdrawn_by: Type.Optional(ActorView),
    withdrawn_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { $id: 'Quarantine' },
);

export const ListQuarantinesResponse = Type.Object({ quarantines: Type.Array(QuarantineView), next_cursor: NextCursorField });
export const ReenforceResponse = Type.Object({ ...QuarantineView.properties, retried: Type.Integer({ minimum: 0, description: 'credentials retried (only those recorded `failed`); 0 is success' }) });
