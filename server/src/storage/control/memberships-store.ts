import type { MemberEntry, MembershipRecord, MembershipStore } from '../../domains/people/store.js';
import type { Role } from '../../domains/people/roles.js';
import type { MembershipsTable } from './schema.js';
import type { ControlDb } from './open.js';

const toRecord = (r: MembershipsTable): MembershipRecord => ({
  orgId: r.org_id,
  userId: r.user_id,
  role: r.role as Role,
  createdAt: r.created_at,
});

export class KyselyMembershipStore implements MembershipStore {
  constructor(
    private readonly db: ControlDb,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  async insert(m: MembershipRecord) {
    await this.db.insertInto('memberships').values({ org_id: m.orgId, user_id: m.userId, role: m.role, created_at: m.createdAt }).execute();
  }

  async find(orgId: string, userId: string) {
    const r = await this.db.selectFrom('memberships').selectAll().where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
    return r && toRecord(r);
  }

  async listForUser(userId: string) {
    const rows = await this.db.selectFrom('memberships').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('org_id').execute();
    return rows.map(toRecord);
  }

  async list(orgId: string, opts: { after?: { createdAt: string; userId: string }; limit: number }): Promise<MemberEntry[]> {
    let sel = this.db
      .selectFrom('memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.org_id', 'm.user_id', 'm.role', 'm.created_at', 'u.email', 'u.name'])
      .where('m.org_id', '=', orgId);
    if (opts.after) {
      const { createdAt, userId } = opts.after;
      sel = sel.where((eb) => eb.or([eb('m.created_at', '>', createdAt), eb.and([eb('m.created_at', '=', createdAt), eb('m.user_id', '>', userId)])]));
    }
    const rows = await sel.orderBy('m.created_at', 'asc').orderBy('m.user_id', 'asc').limit(opts.limit + 1).execute();
    return rows.map((r) => ({ ...toRecord(r), email: r.email, name: r.name }));
  }

  async lockOwners(orgId: string) {
    const sel = this.db.selectFrom('memberships').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner');
    const rows = await (this.dialect === 'postgres' ? sel.forUpdate() : sel).execute();
    return rows.map((r) => r.user_id);
  }

  async updateRole(orgId: string, userId: string, role: Role) {
    await this.db.updateTable('memberships').set({ role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
  }

  async delete(orgId: string, userId: string) {
    await this.db.deleteFrom('memberships').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
  }
}
