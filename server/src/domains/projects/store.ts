/** Storage port of the projects domain. */
export interface ProjectRecord {
  id: string;
  orgId: string;
  name: string;
  samplingRate: number;
  createdAt: string;
  deletedAt: string | null;
}

export interface ProjectStore {
  insert(p: ProjectRecord): Promise<void>;
  /** Live (not deleted) project of the organization. */
  find(orgId: string, id: string): Promise<ProjectRecord | undefined>;
  /** Oldest first; up to `limit + 1` rows after the position. */
  list(orgId: string, opts: { onlyId?: string; after?: { createdAt: string; id: string }; limit: number }): Promise<ProjectRecord[]>;
  update(id: string, patch: { name?: string; samplingRate?: number }): Promise<void>;
  markDeleted(id: string, at: string): Promise<void>;
}
