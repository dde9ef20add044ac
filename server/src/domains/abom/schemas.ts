/** Schemas of signed bills of materials (`/abom-manifests`; docs/signatures.md). */
import { Type } from '@sinclair/typebox';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { ASSET_KINDS, AUTHORITIES, DEFECTS, WRITABLE_ASSET_KINDS } from './model.js';

export const MAX_COMPONENTS = 1000;
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const OptionalId = (description: string) => Type.Optional(Type.String({ maxLength: 200, description: `${description}; "" or absent when none` }));
const Sha256Hex = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'lowercase hex SHA-256 of the component content' });

export const ComponentBody = Type.Object(
  {
    kind: stringEnum(WRITABLE_ASSET_KINDS, { description: 'AssetKind name; it enters the canonical form as its integer value (ASSET_KIND_UNSPECIFIED is refused)' }),
    ref: Type.String({ minLength: 1, maxLength: 512, description: 'what the component is (a model name, a tool name, a package, a URI)' }),
    version: Type.Optional(Type.String({ maxLength: 256, description: 'its version; "" (the default) when none' })),
    content_sha256: Sha256Hex,
    declared_by: Type.Optional(Type.String({ maxLength: 256, description: 'who declared this component (free text); "" by default' })),
  },
  { additionalProperties: false },
);

export const DeclareManifestBody = Type.Object(
  {
    scope: Type.Object(
      {
        project_id: Type.Optional(Type.String({ maxLength: 200, description: 'required for organization-level credentials' })),
        environment: Type.Optional(Type.String({ maxLength: 256, description: 'the deployment environment; "" when none' })),
      },
      { additionalProperties: false },
    ),
    asset_id: Id('the inventory asset the manifest describes (an asset of the project)'),
    asset_version_id: OptionalId('a version of the asset (its version number)'),
    deployment_id: OptionalId('a deployment of the asset in the project'),
    generated_at: Type.String({ minLength: 1, maxLength: 64, description: 'RFC 3339; kept with nine fractional digits in UTC' }),
    components: Type.Array(ComponentBody, { maxItems: MAX_COMPONENTS, description: `at most ${MAX_COMPONENTS}; sorted by the service; an exact repeat is refused` }),
    release: Type.Optional(
      Type.Union([Type.String({ maxLength: 256 }), Type.Null()], {
        description: 'the release label (the `gen_ai.agent.version` the agent puts on spans); null or absent: no release named; "": the empty label',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ManifestParams = Type.Object({ manifestId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const ManifestQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

const ComponentView = Type.Object({
  kind: stringEnum(ASSET_KINDS),
  ref: Type.String(),
  version: Type.String(),
  content_sha256: Type.String(),
  declared_by: Type.String(),
});

export const ManifestView = Type.Object(
  {
    manifest_id: Type.String(),
    schema: Type.Optional(Type.String({ description: '`svc.abom.v1`' })),
    scope: Type.Optional(Type.Object({ environment: Type.String(), org_id: Type.String(), project_id: Type.String() })),
    asset_id: Type.Optional(Type.String()),
    asset_version_id: Type.Optional(Type.String()),
    deployment_id: Type.Optional(Type.String()),
    generated_at: Type.Optional(Type.String({ description: 'UTC, nine fractional digits' })),
    release: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    authority: Type.Optional(stringEnum(AUTHORITIES, { description: '`declared`: the organization in scope submitted it and the service notarized it (accuracy is not proven)' })),
    signature_alg: Type.Optional(Type.String({ description: '`EdDSA` (Ed25519)' })),
    signing_key_id: Type.String({ description: 'the `kid` of the key in the published JWK Set' }),
    components: Type.Optional(Type.Array(ComponentView, { description: 'in canonical order; `kind` by name here, by integer value in the canonical form' })),
    canonical_form: Type.String({ description: 'the exact bytes signed (RFC 8785); verify against this string, not a re-serialization' }),
    manifest_sha256: Type.String({ description: 'lowercase hex SHA-256 of the canonical form' }),
    signature: Type.String({ description: 'Ed25519 over ASCII("svc.abom.signature.v1") || 0x00 || the raw digest; unpadded base64url' }),
    valid: Type.Boolean({ description: 'false comes with HTTP 200 and the manifest as stored' }),
    defect: stringEnum(DEFECTS, {
      description: '"" (matches the contract), `canonical_form_superseded` (signed under an earlier contract: sign a fresh manifest), `canonical_form_unreadable`, `digest_mismatch` (the digest or the signature does not match the bytes)',
    }),
  },
  { $id: 'AbomManifest', description: 'the members are read from the canonical form; absent when it cannot be read under the current contract' },
);
