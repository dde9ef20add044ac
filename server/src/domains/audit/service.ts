import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { Principal } from '../../http/principal.js';
import type { ControlStores } from '../../storage/control/stores.js';
import type { AuditQuery, AuditRecord } from './store.js';

type OptionalFields = 'projectId' | 'eventType' | 'toolName' | 'targetId' | 'targetApiKeyId';
/** What a caller records; the optional fields default to null, so a record names only what applies. */
export type AuditEntry = Omit<AuditRecord, 'id' | 'seq' | 'occurredAt' | 'actorKind' | 'actorId' | 'actorUserId' | 'orgId' | OptionalFields> &
  Partial<Pick<AuditRecord, OptionalFields>>;

/**
 * Who acted: a credential (only its identity is needed, so a signing-out session that no longer
 * authenticates can still be named), or the system itself. `userId` on 'system' names a person
 * who acted without a credential (accepting an invitation with its token).
 */
export type AuditActor = Pick<Principal, 'kind' | 'keyId' | 'signInId' | 'connectionId' | 'userId'> | 'system' | { kind: 'system'; userId: string };

export class AuditService {
  private lastSeq = 0;
  constructor(
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Microseconds since the epoch, strictly increasing within this process: orders "newest first". */
  private nextSeq(at: Date): number {
    this.lastSeq = Math.max(this.lastSeq + 1, at.getTime() * 1000);
    return this.lastSeq;
  }

  /** Records one entry with the given stores (pass the transaction's stores to make it atomic with the change). */
  async record(stores: ControlStores, actor: AuditActor, orgId: string, entry: AuditEntry): Promise<AuditRecord> {
    const at = this.clock.now();
    const who = actor === 'system' ? { kind: 'system' as const, userId: null } : actor;
    const rec: AuditRecord = {
      ...entry,
      projectId: entry.projectId ?? null,
      eventType: entry.eventType ?? null,
      toolName: entry.toolName ?? null,
      targetId: entry.targetId ?? null,
      targetApiKeyId: entry.targetApiKeyId ?? null,
      id: this.ids.uuid(),
      seq: this.nextSeq(at),
      orgId,
      occurredAt: at.toISOString(),
      actorKind: who.kind,
      actorId: who.kind === 'api_key' ? who.keyId : who.kind === 'session' ? who.signInId : who.kind === 'oauth' ? who.connectionId : null,
      actorUserId: who.userId,
    };
    await stores.audit.insert(rec);
    return rec;
  }

  list(stores: ControlStores, principal: Principal, q: Omit<AuditQuery, 'orgId' | 'projectId'>) {
    return stores.audit.list({ ...q, orgId: principal.orgId, projectId: principal.projectId ?? undefined });
  }
}

export function auditView(r: AuditRecord) {
  return {
    id: r.id,
    occurred_at: r.occurredAt,
    result: r.result,
    resource: r.resource,
    action: r.action,
    tool_name: r.toolName,
    affected_object: r.targetId,
    event_type: r.eventType,
    target_api_key_id: r.targetApiKeyId,
    project_id: r.projectId,
    actor: {
      kind: r.actorKind,
      id: r.actorId,
      api_key_id: r.actorKind === 'api_key' ? r.actorId : null,
      sign_in_id: r.actorKind === 'session' ? r.actorId : null,
      connection_id: r.actorKind === 'oauth' ? r.actorId : null,
      user_id: r.actorUserId,
    },
    metadata: r.metadata,
  };
}
