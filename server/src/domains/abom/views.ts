/** The API view of a bill of materials: the members read from its canonical form, the signed bytes, the verdict. */
import { kindName } from './model.js';
import type { CheckedManifest } from './service.js';

export function manifestView({ record: r, members: m, valid, defect }: CheckedManifest) {
  return {
    manifest_id: r.id,
    ...(m
      ? {
          schema: m.schema,
          scope: m.scope,
          asset_id: m.asset_id,
          asset_version_id: m.asset_version_id,
          deployment_id: m.deployment_id,
          generated_at: m.generated_at,
          release: m.release,
          authority: m.authority,
          signature_alg: m.signature_alg,
          components: m.components.map((c) => ({ kind: kindName(c.kind)!, ref: c.ref, version: c.version, content_sha256: c.content_sha256, declared_by: c.declared_by })),
        }
      : {}),
    signing_key_id: m?.signing_key_id ?? r.signingKeyId,
    canonical_form: r.canonicalForm,
    manifest_sha256: r.manifestSha256,
    signature: r.signature,
    valid,
    defect,
  };
}
