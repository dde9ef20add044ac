import type { UserRecord, UserStore } from '../../domains/people/store.js';
import type { UsersTable } from './schema.js';
import type { ControlDb } from './open.js';

const toRecord = (r: UsersTable): UserRecord => ({
  id: r.id,
  email: r.email,
  name: r.name,
  passwordHash: r.password_hash,
  createdAt: r.created_at,
});

export class KyselyUserStore implements UserStore {
  constructor(private readonly db: ControlDb) {}

  async insert(u: UserRecord) {
    await this.db
      .insertInto('users')
      .values({ id: u.id, email: u.email, name: u.name, password_hash: u.passwordHash, created_at: u.createdAt })
      .execute();
  }

  async findById(id: string) {
    const r = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async findByEmail(email: string) {
    const r = await this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    return r && toRecord(r);
  }
}
