/** Storage port of deployments and their configuration snapshots (docs/signatures.md). */

/** unregistered: no configuration registered yet; matching: the last one matches the manifest; drifted: it does not. */
export type ConfigState = 'unregistered' | 'matching' | 'drifted';
export const CONFIG_STATES: ConfigState[] = ['unregistered', 'matching', 'drifted'];

export interface DeploymentRecord {
  id: string;
  orgId: string;
  projectId: string;
  assetId: string;
  /** The attesting manifest. */
  manifestId: string;
  environment: string;
  release: string | null;
  configState: ConfigState;
  currentSnapshotId: string | null;
  /** The last snapshot that matched the manifest (a drift episode starts after it). */
  lastMatchSnapshotId: string | null;
  createdAt: string;
  createdBy: string | null;
  updatedAt: string;
}

/** A component as configured in the field (no `declared_by`: it is observed or registered, not declared). */
export interface ConfigComponent {
  kind: number;
  ref: string;
  version: string;
  content_sha256: string;
}

export type DriftReason = 'component_missing' | 'component_unexpected' | 'version_differs' | 'content_differs';

/** The first difference between a configuration and its manifest, in component order. */
export interface Drift {
  reason: DriftReason;
  /** The component as the manifest has it (absent when unexpected). */
  expected?: ConfigComponent;
  /** The component as configured (absent when missing). */
  found?: ConfigComponent;
}

export interface SnapshotRecord {
  id: string;
  orgId: string;
  projectId: string;
  deploymentId: string;
  components: ConfigComponent[];
  configSha256: string;
  matches: boolean;
  drift: Drift | null;
  registeredAt: string;
  registeredBy: string | null;
}

export interface DeploymentFilter {
  projectId: string;
  assetId?: string;
  environment?: string;
}

export interface DeploymentStore {
  insert(d: DeploymentRecord): Promise<void>;
  find(id: string): Promise<DeploymentRecord | undefined>;
  /** Newest first by (created_at desc, id desc); up to `limit + 1`. */
  list(f: DeploymentFilter, opts: { after?: { createdAt: string; id: string }; limit: number }): Promise<DeploymentRecord[]>;
  /** Writes the configuration columns when the current snapshot is still `expectedSnapshotId`; false otherwise. */
  setConfig(d: DeploymentRecord, expectedSnapshotId: string | null): Promise<boolean>;
  insertSnapshot(s: SnapshotRecord): Promise<void>;
  /** Snapshots of a deployment newest first by (registered_at desc, id desc); up to `limit + 1`. */
  snapshots(deploymentId: string, opts: { after?: { registeredAt: string; id: string }; limit: number }): Promise<SnapshotRecord[]>;
}
