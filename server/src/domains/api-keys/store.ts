/** Storage port of the api-keys domain. */
export interface ApiKeyRecord {
  id: string;
  orgId: string;
  projectId: string | null;
  name: string;
  keyHash: string;
  keyPrefix: string;
  scopes: string[];
  status: 'active' | 'revoked';
  expiresAt: string;
  lastUsedAt: string | null;
  createdAt: string;
  revokedAt: string | null;
  userId: string | null;
  createdByApiKeyId: string | null;
  createdByState: 'api_key' | 'user' | 'orphaned_user' | 'system';
  /** Read with the key (findByHash): an active containment holds its telemetry writes (a freeze). */
  writeHeld?: boolean;
}

export interface ApiKeyListQuery {
  orgId: string;
  /** Restrict to keys bound to this project (a project-scoped caller sees only its project). */
  projectId?: string;
  after?: { createdAt: string; id: string };
  limit: number;
}

export interface ApiKeyStore {
  insert(rec: ApiKeyRecord): Promise<void>;
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  findById(orgId: string, id: string): Promise<ApiKeyRecord | undefined>;
  /** Newest first; returns up to `limit + 1` rows so the caller can tell whether more follow. */
  list(q: ApiKeyListQuery): Promise<ApiKeyRecord[]>;
  update(id: string, patch: Partial<Pick<ApiKeyRecord, 'name' | 'scopes' | 'status' | 'revokedAt' | 'lastUsedAt' | 'keyHash' | 'keyPrefix'>>): Promise<void>;
  revokeByProject(projectId: string, at: string): Promise<string[]>;
  /** The organization's active, unexpired, organization-wide keys other than `exceptId` (any scopes). */
  activeOrgWide(orgId: string, exceptId: string, nowIso: string): Promise<ApiKeyRecord[]>;
  /** Revokes the active keys of one person in one organization; returns them as they were. */
  revokeForUser(orgId: string, userId: string, at: string): Promise<ApiKeyRecord[]>;
}
