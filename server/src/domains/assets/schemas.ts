/** Schemas of the agent inventory (`/assets`) and review signals (`/review-signals`). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { APPROVAL_STATES, DATA_CLASSIFICATIONS, RISK_TIERS, SIGNAL_KINDS, SIGNAL_SEVERITIES, SIGNAL_STATUSES } from './store.js';

export const ASSET_PAGE = { default: 100, max: 200 };
export const SIGNAL_PAGE = { default: 100, max: 200 };
export const MAX_KEYS_PER_ASSET = 100;
export const MAX_ATTRIBUTION_KEYS = 100;
/** The environments an asset read names at most (most recently seen first). */
export const MAX_ENVIRONMENTS_SHOWN = 50;

const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T, description: string) => Type.Union([t, Type.Null()], { description });
const Str = Type.String();
const Reason = Type.String({ minLength: 1, maxLength: 1024, description: 'required; at most 1024 characters' });
const ObservationKey = Type.String({ minLength: 1, maxLength: 512, description: 'an agent identity (docs/agent-model.md "Agent identity")' });
const Count = Type.Integer({ minimum: 0 });
const limitQuery = (d: { default: number; max: number }) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${d.default}, at most ${d.max}; 0 is refused` }));
const repeatable = (what: string, values: readonly string[]) =>
  Type.Optional(Type.Array(Type.String(), { description: `${what}: repeated or comma-separated, OR within; one of ${values.join(', ')}; anything else is 400` }));

/** Enum values a write accepts: `_UNSPECIFIED` is not one of them (the validator names the accepted values). */
const writeEnum = <T extends string>(values: readonly T[], description: string) => stringEnum(values, { description: `${description}; *_UNSPECIFIED is refused` });

export const ScopeBody = {
  scope: Type.Optional(
    Type.Object({ project_id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false, description: 'the project; assets take scope by project, never environment' }),
  ),
  project_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the same as scope.project_id (either; both must agree)' })),
};

export const Asset = Type.Object(
  {
    id: Str,
    project_id: Str,
    name: Str,
    description: Nullable(Type.String(), 'free text from the declaration'),
    origin: stringEnum(['declared', 'discovered'], { description: 'declared with POST /assets, or discovered from a sighting nobody declared' }),
    shadow: Type.Boolean({ description: 'true for a discovered asset nobody has declared yet (stays true after a review, false once a declaration adopts it; the SHADOW_ASSET signal clears with a review)' }),
    observation_keys: Type.Array(Str, { description: 'the agent identities mapped to this asset (each maps to at most one asset per project), code point order' }),
    environment: Nullable(
      Type.String(),
      'where it was seen (read-only): the deployment environment (resource attribute deployment.environment.name, else deployment.environment) ' +
        'of the most recent sighting of its observation keys that named one. Null when none did (a key without sightings, spans without the ' +
        'attribute, sightings recorded before environments were recorded) or when the telemetry store could not be read (then `environments` is null too)',
    ),
    environments: Type.Union([Type.Array(Str), Type.Null()], {
      description:
        `every environment the sightings of its observation keys named (read-only), most recently seen first, at most ${MAX_ENVIRONMENTS_SHOWN} ` +
        '(`environments_truncated` says when there are more); [] when none named one; null when the telemetry store could not be read',
    }),
    environments_truncated: Type.Boolean({ description: `true when the sightings named more than ${MAX_ENVIRONMENTS_SHOWN} environments (only the most recent are listed)` }),
    approval_state: stringEnum(APPROVAL_STATES),
    approver_principal: Nullable(Type.String(), 'who reviewed it (user:<id> or api_key:<id>), from the credential'),
    approval_reason: Nullable(Type.String(), 'the reason of the last review'),
    reviewed_at: Nullable(Timestamp(), 'when it was last reviewed'),
    risk_tier: stringEnum(RISK_TIERS, { description: 'RISK_TIER_UNASSESSED until the first review; only a review writes it' }),
    data_classification: stringEnum(DATA_CLASSIFICATIONS),
    classified_by: Nullable(Type.String(), 'null with UNCLASSIFIED: nobody examined it'),
    classification_reason: Nullable(Type.String(), 'reason of the last classification'),
    classified_at: Nullable(Timestamp(), 'when it was last classified'),
    owner_team: Nullable(Type.String(), 'owning team'),
    owner_principal: Nullable(Type.String(), 'owning person or principal'),
    ownership_set_by: Nullable(Type.String(), 'who last wrote the ownership, from the credential'),
    ownership_set_at: Nullable(Timestamp(), 'when the ownership was last written'),
    quarantined: Type.Boolean({ description: 'an active quarantine holds the asset; a review never changes it' }),
    quarantine_id: Nullable(Type.String(), 'the quarantine holding it'),
    version: Type.Integer({ minimum: 1, description: 'increases by one on every write (GET /assets/{assetId}/versions)' }),
    created_by: Nullable(Type.String(), 'who declared it; null for a discovered asset'),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Asset', description: 'An agent inventory record (declared or discovered)' },
);

export const DeclareAssetBody = Type.Object(
  {
    ...ScopeBody,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    observation_keys: Type.Optional(
      Type.Array(ObservationKey, {
        maxItems: MAX_KEYS_PER_ASSET,
        description: `at most ${MAX_KEYS_PER_ASSET}, no repeats; keys of one discovered asset adopt it, a key of a declared asset or keys of two assets are 409`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const ReviewBody = Type.Object(
  {
    ...ScopeBody,
    approval_state: writeEnum(APPROVAL_STATES, 'the decision; APPROVED or REJECTED clears SHADOW_ASSET and UNREVIEWED_ASSET'),
    risk_tier: writeEnum(RISK_TIERS, 'required; an approval needs an assessed tier (not UNASSESSED)'),
    reason: Reason,
  },
  { additionalProperties: false },
);

export const ClassificationBody = Type.Object(
  { ...ScopeBody, data_classification: writeEnum(DATA_CLASSIFICATIONS, 'the classification'), reason: Reason },
  { additionalProperties: false },
);

const Owner = (what: string) =>
  Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], { description: `${what}; omitted keeps it, null clears it` }));

export const OwnershipBody = Type.Object(
  { ...ScopeBody, owner_team: Owner('owning team'), owner_principal: Owner('owning person or principal') },
  { additionalProperties: false, description: 'at least one of owner_team, owner_principal; setting either clears UNOWNED_ASSET' },
);

export const AssetPathParams = Type.Object({ assetId: Type.String({ minLength: 1, maxLength: 200 }) });

export const AssetQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

export const ListAssetsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: limitQuery(ASSET_PAGE),
    shadow: Type.Optional(Type.Boolean({ description: 'true: only discovered (undeclared) assets; false: only declared ones' })),
    risk_tier: repeatable('risk tier', RISK_TIERS),
    approval_state: repeatable('approval state', APPROVAL_STATES),
    data_classification: repeatable('data classification', DATA_CLASSIFICATIONS),
    owner_team: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'only assets of this exact team' })),
    owned: Type.Optional(Type.Boolean({ description: 'false: only assets with neither owner team nor owner principal' })),
  },
  { additionalProperties: false },
);

export const ListAssetsResponse = Type.Object({
  assets: Type.Array(Asset, { description: 'newest first (created_at desc, then id desc)' }),
  next_cursor: NextCursorField,
});

export const AssetVersion = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  change: stringEnum(['declared', 'discovered', 'review', 'classification', 'ownership', 'quarantine'], { description: 'what the write was' }),
  actor: Nullable(Type.String(), 'who wrote it (user:<id>, api_key:<id>, or system for discovery)'),
  occurred_at: Timestamp(),
  asset: Asset,
});

export const ListVersionsQuery = Type.Object({ ...ProjectSelectorQuery, ...PageQuery, limit: limitQuery(ASSET_PAGE) }, { additionalProperties: false });

export const ListVersionsResponse = Type.Object({
  versions: Type.Array(AssetVersion, { description: 'oldest first' }),
  next_cursor: NextCursorField,
});

const Credential = Type.Object({
  source: stringEnum(['api_key', 'bearer_token', 'dev_org_header']),
  api_key_id: Type.Optional(Type.String({ description: 'the non-secret key id, for source api_key' })),
  first_seen: Timestamp(),
  last_seen: Timestamp(),
  sighting_count: Count,
});

export const AttributionMapping = Type.Object({
  observation_key: Str,
  asset_id: Nullable(Type.String(), 'the current asset of the key; null when it maps to none (yet)'),
  credentials: Type.Optional(
    Type.Array(Credential, { description: 'present when availability is answered: empty means nothing was recorded' }),
  ),
  first_seen: Type.Optional(Timestamp()),
  last_seen: Type.Optional(Timestamp()),
  sighting_count: Type.Optional(Count),
});

export const AttributionResponse = Type.Object(
  {
    availability: stringEnum(['answered', 'unavailable'], {
      description: 'answered: the sightings were read (an empty credentials list is an answered empty match); unavailable: the telemetry store could not be read and no mapping carries credentials',
    }),
    unavailable_reason: Type.Optional(stringEnum(['telemetry_unreadable'], { description: 'why, when unavailable' })),
    asset_id: Type.Optional(Type.String({ description: 'the asset, on GET /assets/{assetId}/attribution' })),
    mappings: Type.Array(AttributionMapping, { description: 'one per observation key, in the order asked (by key for an asset)' }),
  },
  { description: 'Attribution entries: each observation key, its current asset, and the credentials that sent its telemetry' },
);

export const AttributionQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    observation_key: Type.Array(ObservationKey, {
      minItems: 1,
      maxItems: MAX_ATTRIBUTION_KEYS,
      description: `required, repeated (not comma-separated), at most ${MAX_ATTRIBUTION_KEYS}`,
    }),
  },
  { additionalProperties: false },
);

export const ReviewSignal = Type.Object(
  {
    id: Str,
    project_id: Str,
    kind: stringEnum(SIGNAL_KINDS),
    status: stringEnum(SIGNAL_STATUSES),
    severity: stringEnum(SIGNAL_SEVERITIES, { description: 'fixed per kind (docs/governance.md)' }),
    subject_ref: Type.String({ description: 'what it is about: the observation key (shadow asset), the asset id (unreviewed, unowned)' }),
    detail_code: Type.String({ description: 'short lowercase groupable code' }),
    asset_id: Nullable(Type.String(), 'the asset concerned'),
    evidence_ref: Nullable(Type.String(), 'a reference to the evidence, when the kind has one'),
    opened_at: Timestamp(),
    last_seen_at: Timestamp('moves forward while the thing stays active'),
    acknowledged_by: Nullable(Type.String(), 'who acknowledged it'),
    acknowledged_at: Nullable(Timestamp(), 'when'),
    resolved_by: Nullable(Type.String(), 'who closed it (resolved or dismissed); system for an auto-clear'),
    resolved_at: Nullable(Timestamp(), 'when it was closed'),
    resolution_code: Nullable(Type.String(), 'why it closed: reviewed, owner_set, dismissed'),
    resolution_reason: Nullable(Type.String(), 'the dismissal reason'),
  },
  { $id: 'ReviewSignal', description: 'Something in the agent inventory that needs a person' },
);

export const ListSignalsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: limitQuery(SIGNAL_PAGE),
    status: repeatable('status', SIGNAL_STATUSES),
    kind: repeatable('kind', SIGNAL_KINDS),
    severity: repeatable('severity', SIGNAL_SEVERITIES),
    asset_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'only signals about this asset' })),
  },
  { additionalProperties: false, description: 'AND across filters, OR within one' },
);

export const ListSignalsResponse = Type.Object({
  review_signals: Type.Array(ReviewSignal, { description: 'newest first by last_seen_at (then id)' }),
  next_cursor: NextCursorField,
});

export const SignalPathParams = Type.Object({ signalId: Type.String({ minLength: 1, maxLength: 200 }) });

export const DismissBody = Type.Object({ reason: Reason }, { additionalProperties: false });

export const OutboxEntry = Type.Object({
  id: Str,
  source: stringEnum(['review_signals']),
  event: stringEnum(['opened', 'resolved', 'dismissed']),
  signal_id: Str,
  kind: stringEnum(SIGNAL_KINDS),
  severity: stringEnum(SIGNAL_SEVERITIES),
  subject_ref: Str,
  asset_id: Nullable(Type.String(), 'the asset concerned'),
  occurred_at: Timestamp(),
  delivered_at: Nullable(Timestamp(), 'null until a notification channel delivered it (delivery is not built yet)'),
  signal: ReviewSignal,
});

export const ListOutboxQuery = Type.Object({ ...ProjectSelectorQuery, ...PageQuery, limit: limitQuery(SIGNAL_PAGE) }, { additionalProperties: false });

export const ListOutboxResponse = Type.Object({
  notifications: Type.Array(OutboxEntry, { description: 'in the order they were written, oldest first' }),
  next_cursor: NextCursorField,
});
