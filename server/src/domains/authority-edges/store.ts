/** Storage port of authority edges: delegations from a principal, through a tool, for a purpose. */
export interface AuthorityEdgeRecord {
  id: string;
  orgId: string;
  projectId: string;
  /** Who delegated: the approver of a mediated authorization, else the requester (or the reporting credential). */
  principal: string;
  tool: string;
  purpose: string;
  /** What first evidenced the edge (`quarantine` and its id, or `receipt` and the action id). */
  sourceKind: string;
  sourceId: string;
  createdAt: string;
  sightingCount: number;
  lastExercisedAt: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  revokeReason: string | null;
}

export interface EdgeFilter {
  orgId: string;
  projectId: string;
  principal?: string;
  includeRevoked: boolean;
}

export interface AuthorityEdgeStore {
  find(id: string): Promise<AuthorityEdgeRecord | undefined>;
  /** The oldest edge of (project, principal, tool, purpose), revoked or not. */
  findMatch(projectId: string, principal: string, tool: string, purpose: string): Promise<AuthorityEdgeRecord | undefined>;
  insert(e: AuthorityEdgeRecord): Promise<void>;
  /** One more sighting; `last_exercised_at` only moves forward. */
  exercise(id: string, at: string): Promise<void>;
  /** Records the revocation unless one is recorded already; false then. */
  revoke(id: string, by: string, at: string, reason: string): Promise<boolean>;
  /** Newest first (created_at, then id); up to `limit + 1` rows after the position. */
  list(f: EdgeFilter, opts: { after?: { createdAt: string; id: string }; limit: number }): Promise<AuthorityEdgeRecord[]>;
}
