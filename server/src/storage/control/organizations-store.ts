import type { OrganizationRecord, OrganizationStore } from '../../domains/organizations/store.js';
import type { ControlDb } from './open.js';

export class KyselyOrganizationStore implements OrganizationStore {
  constructor(private readonly db: ControlDb) {}

  async insert(o: OrganizationRecord) {
    await this.db.insertInto('organizations').values({ id: o.id, name: o.name, created_at: o.createdAt }).execute();
  }

  async find(id: string) {
    const r = await this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return r && { id: r.id, name: r.name, createdAt: r.created_at };
  }

  async getMeta(key: string) {
    const r = await this.db.selectFrom('svc_meta').select('value').where('key', '=', key).executeTakeFirst();
    return r?.value;
  }

  async setMeta(key: string, value: string) {
    await this.db.insertInto('svc_meta').values({ key, value }).execute();
  }
}
