/** API views of deployments and configuration snapshots. */
import { kindName } from '../abom/model.js';
import { driftCode } from './service.js';
import type { ConfigComponent, DeploymentRecord, Drift, SnapshotRecord } from './store.js';

const componentView = (c: ConfigComponent) => ({ kind: kindName(c.kind)!, ref: c.ref, version: c.version, content_sha256: c.content_sha256 });

const driftView = (d: Drift) => ({
  reason: d.reason,
  detail_code: driftCode(d),
  ...(d.expected ? { expected: componentView(d.expected) } : {}),
  ...(d.found ? { found: componentView(d.found) } : {}),
});

export function snapshotView(s: SnapshotRecord) {
  return {
    id: s.id,
    deployment_id: s.deploymentId,
    components: s.components.map(componentView),
    config_sha256: s.configSha256,
    matches: s.matches,
    ...(s.drift ? { drift: driftView(s.drift) } : {}),
    registered_at: s.registeredAt,
    registered_by: s.registeredBy ?? '',
  };
}

/** `current`: the deployment's current snapshot, when it has one (its drift is shown). */
export function deploymentView(d: DeploymentRecord, current?: SnapshotRecord) {
  return {
    id: d.id,
    project_id: d.projectId,
    asset_id: d.assetId,
    manifest_id: d.manifestId,
    environment: d.environment,
    release: d.release,
    config_state: d.configState,
    current_snapshot_id: d.currentSnapshotId,
    ...(current?.drift ? { drift: driftView(current.drift) } : {}),
    created_at: d.createdAt,
    created_by: d.createdBy ?? '',
    updated_at: d.updatedAt,
  };
}
