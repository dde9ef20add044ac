/** Storage port of the audit trail. */
export const AUDIT_RESULTS = ['success', 'denied', 'previewed', 'throttled', 'error', 'unknown'] as const;
export type AuditResult = (typeof AUDIT_RESULTS)[number];
export const AUDIT_EVENT_TYPES = ['api_key_created', 'api_key_updated', 'api_key_revoked'] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export type AuditActorKind = 'api_key' | 'session' | 'oauth' | 'system';

export interface AuditRecord {
  id: string;
  seq: number;
  orgId: string;
  projectId: string | null;
  occurredAt: string;
  actorKind: AuditActorKind;
  /** The key (api_key), the sign-in (session) or the agent connection (oauth) that acted; null for the system. */
  actorId: string | null;
  /** The person behind the actor, when there is one. */
  actorUserId: string | null;
  eventType: AuditEventType | null;
  resource: string;
  action: string;
  result: AuditResult;
  toolName: string | null;
  targetId: string | null;
  targetApiKeyId: string | null;
  metadata: Record<string, unknown>;
}

export interface AuditQuery {
  orgId: string;
  projectId?: string;
  targetApiKeyId?: string;
  eventTypes?: string[];
  resources?: string[];
  actions?: string[];
  results?: string[];
  beforeSeq?: number;
  limit: number;
}

export interface AuditStore {
  insert(r: AuditRecord): Promise<void>;
  /** Newest first; up to `limit + 1` rows. */
  list(q: AuditQuery): Promise<AuditRecord[]>;
}
