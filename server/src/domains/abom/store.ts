/** Storage port of signed bills of materials. Every member of a manifest is read from its canonical form. */

export interface ManifestRecord {
  id: string;
  orgId: string;
  projectId: string;
  assetId: string;
  /** The exact signed bytes, as stored. */
  canonicalForm: string;
  /** Lowercase hex SHA-256 recorded beside the canonical form. */
  manifestSha256: string;
  signature: string;
  signingKeyId: string;
  createdAt: string;
  createdBy: string | null;
}

export interface ManifestStore {
  insert(r: ManifestRecord): Promise<void>;
  find(id: string): Promise<ManifestRecord | undefined>;
}
