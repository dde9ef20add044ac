import type { AgentApprovalRecord, AgentApprovalStore } from '../../domains/agent-connections/store.js';
import type { ControlDb } from './open.js';
import type { AgentApprovalsTable } from './schema.js';

const toRecord = (r: AgentApprovalsTable): AgentApprovalRecord => ({
  id: r.id,
  orgId: r.org_id,
  userId: r.user_id,
  projectId: r.project_id,
  clientId: r.client_id,
  clientName: r.client_name,
  clientHost: r.client_host,
  scopes: JSON.parse(r.scopes),
  status: r.status as AgentApprovalRecord['status'],
  grantId: r.grant_id,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export class KyselyAgentApprovalStore implements AgentApprovalStore {
  constructor(private readonly db: ControlDb) {}

  async insert(a: AgentApprovalRecord) {
    await this.db
      .insertInto('agent_approvals')
      .values({
        id: a.id,
        org_id: a.orgId,
        user_id: a.userId,
        project_id: a.projectId,
        client_id: a.clientId,
        client_name: a.clientName,
        client_host: a.clientHost,
        scopes: JSON.stringify(a.scopes),
        status: a.status,
        grant_id: a.grantId,
        created_at: a.createdAt,
        last_used_at: a.lastUsedAt,
        revoked_at: a.revokedAt,
      })
      .execute();
  }

  async findById(orgId: string, id: string) {
    const r = await this.db.selectFrom('agent_approvals').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async findByGrantId(grantId: string) {
    const r = await this.db.selectFrom('agent_approvals').selectAll().where('grant_id', '=', grantId).executeTakeFirst();
    return r && toRecord(r);
  }

  async list(q: { orgId: string; userId?: string; limit: number; offset: number }) {
    let query = this.db.selectFrom('agent_approvals').selectAll().where('org_id', '=', q.orgId);
    if (q.userId !== undefined) query = query.where('user_id', '=', q.userId);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit + 1).offset(q.offset).execute();
    return rows.map(toRecord);
  }

  async touch(id: string, at: string) {
    await this.db.updateTable('agent_approvals').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  async markRevoked(id: string, at: string) {
    const r = await this.db
      .updateTable('agent_approvals')
      .set({ status: 'revoked', revoked_at: at })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async revokeByProject(projectId: string, at: string) {
    const rows = await this.db
      .updateTable('agent_approvals')
      .set({ status: 'revoked', revoked_at: at })
      .where('project_id', '=', projectId)
      .where('status', '=', 'active')
      .returningAll()
      .execute();
    return rows.map(toRecord);
  }

  async revokeForMember(orgId: string, userId: string, at: string) {
    const rows = await this.db
      .updateTable('agent_approvals')
      .set({ status: 'revoked', revoked_at: at })
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .where('status', '=', 'active')
      .returningAll()
      .execute();
    return rows.map(toRecord);
  }
}
