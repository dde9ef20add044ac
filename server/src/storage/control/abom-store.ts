import type { ManifestRecord, ManifestStore } from '../../domains/abom/store.js';
import type { ControlDb } from './open.js';

export class KyselyManifestStore implements ManifestStore {
  constructor(private readonly db: ControlDb) {}

  async insert(r: ManifestRecord) {
    await this.db
      .insertInto('abom_manifests')
      .values({
        id: r.id,
        org_id: r.orgId,
        project_id: r.projectId,
        asset_id: r.assetId,
        canonical_form: r.canonicalForm,
        manifest_sha256: r.manifestSha256,
        signature: r.signature,
        signing_key_id: r.signingKeyId,
        created_at: r.createdAt,
        created_by: r.createdBy,
      })
      .execute();
  }

  async find(id: string) {
    const r = await this.db.selectFrom('abom_manifests').selectAll().where('id', '=', id).executeTakeFirst();
    return (
      r && {
        id: r.id,
        orgId: r.org_id,
        projectId: r.project_id,
        assetId: r.asset_id,
        canonicalForm: r.canonical_form,
        manifestSha256: r.manifest_sha256,
        signature: r.signature,
        signingKeyId: r.signing_key_id,
        createdAt: r.created_at,
        createdBy: r.created_by,
      }
    );
  }
}
