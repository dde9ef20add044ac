/** Schemas of deployments and configuration snapshots (`/deployments`, `/config-snapshots`; docs/signatures.md). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { ASSET_KINDS, WRITABLE_ASSET_KINDS } from '../abom/model.js';
import { MAX_COMPONENTS } from '../abom/schemas.js';
import { CONFIG_STATES } from './store.js';

export const DEPLOYMENT_PAGE = { default: 100, max: 200 };
export const SNAPSHOT_PAGE = { default: 100, max: 200 };

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const Limit = (rule: { default: number; max: number }) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${rule.default}, at most ${rule.max}; 0 is refused` }));

export const CreateDeploymentBody = Type.Object(
  {
    asset_id: Id('the asset deployed (an asset of the project)'),
    manifest_id: Id('the attesting bill of materials: a valid manifest of the same asset'),
    environment: Type.String({ minLength: 1, maxLength: 256, description: "where it runs; must equal the manifest's scope environment when that is not empty" }),
    release: Type.Optional(
      Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: "the release label; absent: the manifest's; must equal the manifest's when it names one" }),
    ),
  },
  { additionalProperties: false },
);

export const ConfigComponentBody = Type.Object(
  {
    kind: stringEnum(WRITABLE_ASSET_KINDS, { description: 'AssetKind name (ASSET_KIND_UNSPECIFIED is refused)' }),
    ref: Type.String({ minLength: 1, maxLength: 512 }),
    version: Type.Optional(Type.String({ maxLength: 256, description: '"" by default' })),
    content_sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'lowercase hex SHA-256 of the content as configured' }),
  },
  { additionalProperties: false },
);

export const RegisterConfigBody = Type.Object(
  {
    deployment_id: Id('the deployment whose configuration this is'),
    components: Type.Array(ConfigComponentBody, { maxItems: MAX_COMPONENTS, description: `the components as configured in the field, at most ${MAX_COMPONENTS}` }),
  },
  { additionalProperties: false },
);

export const DeploymentParams = Type.Object({ deploymentId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const ProjectOnlyQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

export const ListDeploymentsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    asset_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    environment: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    cursor: PageQuery.cursor,
    limit: Limit(DEPLOYMENT_PAGE),
  },
  { additionalProperties: false },
);

export const ListSnapshotsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    deployment_id: Id('the deployment (required)'),
    cursor: PageQuery.cursor,
    limit: Limit(SNAPSHOT_PAGE),
  },
  { additionalProperties: false },
);

const ComponentView = Type.Object({ kind: stringEnum(ASSET_KINDS), ref: Type.String(), version: Type.String(), content_sha256: Type.String() });

const DriftView = Type.Object(
  {
    reason: stringEnum(['component_missing', 'component_unexpected', 'version_differs', 'content_differs'] as const),
    detail_code: Type.String({ description: '`<reason>:<kind>`, the detail code of the ABOM_DRIFT signal' }),
    expected: Type.Optional(ComponentView),
    found: Type.Optional(ComponentView),
  },
  { description: 'the first difference from the manifest, in component order' },
);

export const SnapshotView = Type.Object(
  {
    id: Type.String(),
    deployment_id: Type.String(),
    components: Type.Array(ComponentView, { description: 'sorted by (kind, ref, version, content_sha256)' }),
    config_sha256: Type.String({ description: 'hex SHA-256 of the RFC 8785 form of the sorted components (kind as integer)' }),
    matches: Type.Boolean({ description: "true when the components equal the attesting manifest's (declared_by aside)" }),
    drift: Type.Optional(DriftView),
    registered_at: Type.String({ format: 'date-time' }),
    registered_by: Type.String({ description: 'from the credential' }),
  },
  { $id: 'ConfigSnapshot' },
);

export const DeploymentView = Type.Object(
  {
    id: Type.String(),
    project_id: Type.String(),
    asset_id: Type.String(),
    manifest_id: Type.String(),
    environment: Type.String(),
    release: Type.Union([Type.String(), Type.Null()]),
    config_state: stringEnum(CONFIG_STATES, { description: '`unregistered` (no configuration yet), `matching` or `drifted` (the last registered configuration)' }),
    current_snapshot_id: Type.Union([Type.String(), Type.Null()]),
    drift: Type.Optional(DriftView),
    created_at: Type.String({ format: 'date-time' }),
    created_by: Type.String({ description: 'from the credential' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Deployment' },
);

export const ListDeploymentsResponse = Type.Object({ deployments: Type.Array(DeploymentView), next_cursor: NextCursorField });
export const ListSnapshotsResponse = Type.Object({ config_snapshots: Type.Array(SnapshotView), next_cursor: NextCursorField });
export const RegisterConfigResponse = Type.Object({ ...SnapshotView.properties, deployment: DeploymentView });
