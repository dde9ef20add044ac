import type { AuditQuery, AuditRecord, AuditStore } from '../../domains/audit/store.js';
import type { AuditEventsTable } from './schema.js';
import type { ControlDb } from './open.js';

const toRecord = (r: AuditEventsTable): AuditRecord => ({
  id: r.id,
  seq: Number(r.seq),
  orgId: r.org_id,
  projectId: r.project_id,
  occurredAt: r.occurred_at,
  actorKind: r.actor_kind as AuditRecord['actorKind'],
  actorId: r.actor_id,
  actorUserId: r.actor_user_id,
  eventType: r.event_type as AuditRecord['eventType'],
  resource: r.resource,
  action: r.action,
  result: r.result as AuditRecord['result'],
  toolName: r.tool_name,
  targetId: r.target_id,
  targetApiKeyId: r.target_api_key_id,
  metadata: JSON.parse(r.metadata),
});

export class KyselyAuditStore implements AuditStore {
  constructor(private readonly db: ControlDb) {}

  async insert(r: AuditRecord) {
    await this.db
      .insertInto('audit_events')
      .values({
        id: r.id,
        seq: r.seq,
        org_id: r.orgId,
        project_id: r.projectId,
        occurred_at: r.occurredAt,
        actor_kind: r.actorKind,
        actor_id: r.actorId,
        actor_user_id: r.actorUserId,
        event_type: r.eventType,
        resource: r.resource,
        action: r.action,
        result: r.result,
        tool_name: r.toolName,
        target_id: r.targetId,
        target_api_key_id: r.targetApiKeyId,
        metadata: JSON.stringify(r.metadata),
      })
      .execute();
  }

  async list(q: AuditQuery) {
    let sel = this.db.selectFrom('audit_events').selectAll().where('org_id', '=', q.orgId);
    if (q.projectId) sel = sel.where('project_id', '=', q.projectId);
    if (q.targetApiKeyId) sel = sel.where('target_api_key_id', '=', q.targetApiKeyId);
    if (q.eventTypes?.length) sel = sel.where('event_type', 'in', q.eventTypes);
    if (q.resources?.length) sel = sel.where('resource', 'in', q.resources);
    if (q.actions?.length) sel = sel.where('action', 'in', q.actions);
    if (q.results?.length) sel = sel.where('result', 'in', q.results);
    if (q.beforeSeq !== undefined) sel = sel.where('seq', '<', q.beforeSeq);
    const rows = await sel.orderBy('seq', 'desc').limit(q.limit + 1).execute();
    return rows.map(toRecord);
  }
}
