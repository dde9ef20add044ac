/** The organization's evaluation budget and its daily spend in the control store (one code path for SQLite and PostgreSQL). */
import { sql } from 'kysely';
import type { BudgetRecord, DaySpend, EvaluationBudgetStore } from '../../domains/evaluations/sampling/store.js';
import type { ControlDb } from './open.js';
import type { EvaluationBudgetsTable } from './schema.js';

const toBudget = (r: EvaluationBudgetsTable): BudgetRecord => ({
  orgId: r.org_id,
  dailyLimitNanoUsd: Number(r.daily_limit_nano_usd),
  dailyEvaluationLimit: r.daily_evaluation_limit === null ? null : Number(r.daily_evaluation_limit),
  updatedAt: r.updated_at,
  updatedBy: r.updated_by,
  version: Number(r.version),
});

export class KyselyEvaluationBudgetStore implements EvaluationBudgetStore {
  constructor(private readonly db: ControlDb) {}

  async find(orgId: string) {
    const r = await this.db.selectFrom('evaluation_budgets').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    return r && toBudget(r);
  }

  async put(b: Omit<BudgetRecord, 'version'>) {
    const set = { daily_limit_nano_usd: b.dailyLimitNanoUsd, daily_evaluation_limit: b.dailyEvaluationLimit, updated_at: b.updatedAt, updated_by: b.updatedBy };
    // One statement: two writers of one organization each get their own version (the second waits on the row).
    const r = await this.db
      .insertInto('evaluation_budgets')
      .values({ org_id: b.orgId, ...set, version: 1 })
      .onConflict((oc) => oc.column('org_id').doUpdateSet({ ...set, version: sql<number>`evaluation_budgets.version + 1` }))
      .returningAll()
      .executeTakeFirstOrThrow();
    return toBudget(r);
  }

  async spend(orgId: string, day: string): Promise<DaySpend> {
    const r = await this.db.selectFrom('evaluation_budget_days').selectAll().where('org_id', '=', orgId).where('day', '=', day).executeTakeFirst();
    return { spentNanoUsd: Number(r?.spent_nano_usd ?? 0), evaluations: Number(r?.evaluations ?? 0) };
  }

  async charge(orgId: string, day: string, add: DaySpend) {
    await this.db
      .insertInto('evaluation_budget_days')
      .values({ org_id: orgId, day, spent_nano_usd: add.spentNanoUsd, evaluations: add.evaluations })
      .onConflict((oc) =>
        oc.columns(['org_id', 'day']).doUpdateSet({
          spent_nano_usd: sql`evaluation_budget_days.spent_nano_usd + excluded.spent_nano_usd`,
          evaluations: sql`evaluation_budget_days.evaluations + excluded.evaluations`,
        }),
      )
      .execute();
  }
}
