/**
 * Storage port of agent approvals (spec 1, "Agent approval (connected agent)") and of their
 * daily budgets and usage.
 */
export type ApprovalStatus = 'active' | 'revoked';

export interface AgentApprovalRecord {
  id: string;
  /** The workspace: the organization the approving person was signed in to. */
  orgId: string;
  userId: string;
  /** The project the approval is limited to; null for the whole organization. */
  projectId: string | null;
  /** The OAuth client the approval was given to (issued by us at registration). */
  clientId: string;
  /** Client-supplied labels, never verified. */
  clientName: string;
  clientHost: string | null;
  /** The permissions granted at approval time (the role may narrow them further per request). */
  scopes: string[];
  status: ApprovalStatus;
  /** The oidc-provider grant that every token of this approval belongs to. */
  grantId: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface AgentApprovalStore {
  insert(r: AgentApprovalRecord): Promise<void>;
  findById(orgId: string, id: string): Promise<AgentApprovalRecord | undefined>;
  findByGrantId(grantId: string): Promise<AgentApprovalRecord | undefined>;
  /** Newest first; `userId` restricts to one person's approvals; up to `limit + 1` rows after `offset`. */
  list(q: { orgId: string; userId?: string; limit: number; offset: number }): Promise<AgentApprovalRecord[]>;
  touch(id: string, at: string): Promise<void>;
  /** active -> revoked; false when it was revoked already. */
  markRevoked(id: string, at: string): Promise<boolean>;
  /** Revokes the active approvals limited to a project; returns them as they were. */
  revokeByProject(projectId: string, at: string): Promise<AgentApprovalRecord[]>;
  /** Revokes a person's active approvals in one organization; returns them as they were. */
  revokeForMember(orgId: string, userId: string, at: string): Promise<AgentApprovalRecord[]>;
}

export interface AgentBudgetRecord {
  connectionId: string;
  orgId: string;
  /** null: unlimited. */
  requestsPerDay: number | null;
  writeActionsPerDay: number | null;
  updatedAt: string;
  updatedByUserId: string | null;
}

export interface DailyUsage {
  requests: number;
  writeActions: number;
}

export interface AgentBudgetStore {
  find(connectionId: string): Promise<AgentBudgetRecord | undefined>;
  put(r: AgentBudgetRecord): Promise<void>;
  usage(connectionId: string, day: string): Promise<DailyUsage>;
  /**
   * Counts one request (and one write action when `write`) for the day, in one statement, only
   * while the counts stay within the limits (null: unlimited). Returns whether it was counted.
   */
  admit(connectionId: string, day: string, write: boolean, limits: { requests: number | null; writeActions: number | null }): Promise<boolean>;
}
