/**
 * Signed bills of materials (docs/signatures.md). A manifest is declared by the organization in its
 * scope (`authority: declared`): the service checks what it names exists in the project, fills the
 * members it owns (`manifest_id`, `schema`, `signature_alg`, `signing_key_id`, `authority`), signs the
 * canonical form and keeps it. Reading one re-checks it against the current contract and the keys.
 * Minting needs `agents:write` and the owner or admin role.
 */
import { conflict, invalidRequest, notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { principalRef } from '../assets/signals.js';
import type { Role } from '../people/roles.js';
import type { ProjectRecord } from '../projects/store.js';
import { sha256, SIGNING_DOMAINS } from '../signing/byte-contract.js';
import { KeyRotatedError, type SigningKeyService } from '../signing/keys.js';
import { SIGNATURE_ALG } from '../signing/signer.js';
import {
  ABOM_SCHEMA,
  abomCanonicalForm,
  type AbomMembers,
  type AssetKind,
  type CanonicalComponent,
  compareComponents,
  contractTime,
  type Defect,
  kindValue,
  readAbom,
} from './model.js';
import type { ManifestRecord } from './store.js';

export interface ComponentInput {
  kind: AssetKind;
  ref: string;
  version?: string;
  content_sha256: string;
  declared_by?: string;
}

export interface DeclareInput {
  scope: { project_id?: string; environment?: string };
  asset_id: string;
  asset_version_id?: string;
  deployment_id?: string;
  generated_at: string;
  components: ComponentInput[];
  release?: string | null;
}

export interface CheckedManifest {
  record: ManifestRecord;
  members?: AbomMembers;
  valid: boolean;
  defect: Defect;
}

export class AbomService {
  constructor(
    private readonly control: ControlStore,
    private readonly signer: SigningKeyService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly roleOf: (p: Principal) => Promise<Role>,
  ) {}

  async declare(caller: Principal, project: ProjectRecord, input: DeclareInput): Promise<CheckedManifest> {
    const role = await this.roleOf(caller);
    if (role !== 'owner' && role !== 'admin') throw permissionDenied('declaring a bill of materials needs the owner or admin role');
    const generatedAt = contractTime(input.generated_at);
    if (generatedAt === undefined) throw invalidRequest('generated_at must be an RFC 3339 timestamp (at most nine fractional digits)');
    const asset = await this.control.assets.find(input.asset_id);
    if (!asset || asset.orgId !== caller.orgId || asset.projectId !== project.id) throw notFound('asset');
    const assetVersionId = input.asset_version_id ?? '';
    if (assetVersionId !== '' && !(/^[1-9]\d{0,9}$/.test(assetVersionId) && Number(assetVersionId) <= asset.version))
      throw notFound('asset version');
    const deploymentId = input.deployment_id ?? '';
    if (deploymentId !== '') {
      const d = await this.control.deployments.find(deploymentId);
      if (!d || d.orgId !== caller.orgId || d.projectId !== project.id) throw notFound('deployment');
      if (d.assetId !== asset.id) throw invalidRequest('deployment_id names a deployment of another asset');
    }
    const components = canonicalComponents(input.components);
    const id = this.ids.uuid();
    for (let attempt = 0; ; attempt++) {
      const kid = await this.signer.currentKeyId();
      const members: AbomMembers = {
        asset_id: asset.id,
        asset_version_id: assetVersionId,
        authority: 'declared',
        components,
        deployment_id: deploymentId,
        generated_at: generatedAt,
        manifest_id: id,
        release: input.release === undefined ? null : input.release,
        schema: ABOM_SCHEMA,
        scope: { environment: input.scope.environment ?? '', org_id: caller.orgId, project_id: project.id },
        signature_alg: SIGNATURE_ALG,
        signing_key_id: kid,
      };
      const canonical = abomCanonicalForm(members);
      let signed;
      try {
        signed = await this.signer.sign(SIGNING_DOMAINS.abom, canonical, kid);
      } catch (e) {
        // The key was rotated between reading it and signing: sign again under the new one.
        if (e instanceof KeyRotatedError && attempt < 2) continue;
        if (e instanceof KeyRotatedError) throw conflict('the signing key is being rotated; retry');
        throw e;
      }
      const record: ManifestRecord = {
        id,
        orgId: caller.orgId,
        projectId: project.id,
        assetId: asset.id,
        canonicalForm: canonical,
        manifestSha256: signed.sha256,
        signature: signed.signature,
        signingKeyId: kid,
        createdAt: this.clock.now().toISOString(),
        createdBy: principalRef(caller),
      };
      await this.control.manifests.insert(record);
      return { record, members, valid: true, defect: '' };
    }
  }

  /** A manifest of the project (404 for one of another project or organization, as for a missing one), checked. */
  async get(caller: Principal, project: ProjectRecord, id: string): Promise<CheckedManifest> {
    const r = await this.control.manifests.find(id);
    if (!r || r.orgId !== caller.orgId || r.projectId !== project.id) throw notFound('manifest');
    return this.check(r);
  }

  /**
   * The verdict on a stored manifest: its canonical form readable and under the current contract, the
   * recorded digest that of those bytes, the bytes those of this record, and the signature good under the
   * key named inside them. A failing digest or signature are both `digest_mismatch`.
   */
  async check(r: ManifestRecord): Promise<CheckedManifest> {
    const read = readAbom(r.canonicalForm);
    if (!read.ok) return { record: r, valid: false, defect: read.defect };
    const m = read.members;
    const digest = sha256(r.canonicalForm);
    const ours = m.manifest_id === r.id && m.scope.org_id === r.orgId && m.scope.project_id === r.projectId;
    const good =
      ours && digest.toString('hex') === r.manifestSha256 && (await this.signer.verify(SIGNING_DOMAINS.abom, digest, r.signature, m.signing_key_id));
    return { record: r, members: m, valid: good, defect: good ? '' : 'digest_mismatch' };
  }
}

/** The components as they enter the canonical form (sorted); an exact repeat is refused. */
export function canonicalComponents(input: ComponentInput[]): CanonicalComponent[] {
  const out = input
    .map((c, index) => ({
      index,
      c: { content_sha256: c.content_sha256, declared_by: c.declared_by ?? '', kind: kindValue(c.kind), ref: c.ref, version: c.version ?? '' },
    }))
    .sort((a, b) => compareComponents(a.c, b.c));
  for (let i = 1; i < out.length; i++)
    if (compareComponents(out[i - 1].c, out[i].c) === 0) throw invalidRequest(`components[${out[i].index}] repeats components[${out[i - 1].index}]`);
  return out.map((x) => x.c);
}
