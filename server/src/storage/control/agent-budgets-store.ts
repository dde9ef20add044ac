import { sql } from 'kysely';
import type { AgentBudgetRecord, AgentBudgetStore } from '../../domains/agent-connections/store.js';
import type { ControlDb } from './open.js';

export class KyselyAgentBudgetStore implements AgentBudgetStore {
  constructor(private readonly db: ControlDb) {}

  async find(connectionId: string) {
    const r = await this.db.selectFrom('agent_budgets').selectAll().where('connection_id', '=', connectionId).executeTakeFirst();
    return (
      r && {
        connectionId: r.connection_id,
        orgId: r.org_id,
        requestsPerDay: r.requests_per_day,
        writeActionsPerDay: r.write_actions_per_day,
        updatedAt: r.updated_at,
        updatedByUserId: r.updated_by_user_id,
      }
    );
  }

  async put(b: AgentBudgetRecord) {
    const values = {
      org_id: b.orgId,
      requests_per_day: b.requestsPerDay,
      write_actions_per_day: b.writeActionsPerDay,
      updated_at: b.updatedAt,
      updated_by_user_id: b.updatedByUserId,
    };
    await this.db
      .insertInto('agent_budgets')
      .values({ connection_id: b.connectionId, ...values })
      .onConflict((oc) => oc.column('connection_id').doUpdateSet(values))
      .execute();
  }

  async usage(connectionId: string, day: string) {
    const r = await this.db.selectFrom('agent_usage').selectAll().where('connection_id', '=', connectionId).where('day', '=', day).executeTakeFirst();
    return { requests: r?.requests ?? 0, writeActions: r?.write_actions ?? 0 };
  }

  async admit(connectionId: string, day: string, write: boolean, limits: { requests: number | null; writeActions: number | null }) {
    // A limit of 0 refuses even the first request of the day, which the insert below would count.
    if (limits.requests === 0 || (write && limits.writeActions === 0)) return false;
    const w = write ? 1 : 0;
    // One statement: concurrent requests (also on other nodes) cannot both take the last unit.
    const rows = await this.db
      .insertInto('agent_usage')
      .values({ connection_id: connectionId, day, requests: 1, write_actions: w })
      .onConflict((oc) =>
        oc
          .columns(['connection_id', 'day'])
          .doUpdateSet({ requests: sql`agent_usage.requests + 1`, write_actions: sql`agent_usage.write_actions + ${w}` })
          .where((eb) =>
            eb.and([
              ...(limits.requests === null ? [] : [eb('agent_usage.requests', '<', limits.requests)]),
              ...(!write || limits.writeActions === null ? [] : [eb('agent_usage.write_actions', '<', limits.writeActions)]),
            ]),
          ),
      )
      .returning('requests')
      .execute();
    return rows.length === 1;
  }
}
