import type { SigningKeyRecord, SigningKeyStore } from '../../domains/signing/store.js';
import type { ControlDb } from './open.js';
import type { SigningKeysTable } from './schema.js';
import { isUniqueViolation } from './unique.js';

const CURRENT = 'current';

const toRecord = (r: SigningKeysTable): SigningKeyRecord => ({
  kid: r.kid,
  x: r.public_x,
  sealed: r.private_sealed,
  current: r.current_slot === CURRENT,
  createdAt: r.created_at,
  createdBy: r.created_by,
  retiredAt: r.retired_at,
  retiredBy: r.retired_by,
});

export class KyselySigningKeyStore implements SigningKeyStore {
  constructor(private readonly db: ControlDb) {}

  async current() {
    const r = await this.db.selectFrom('signing_keys').selectAll().where('current_slot', '=', CURRENT).executeTakeFirst();
    return r && toRecord(r);
  }

  async find(kid: string) {
    const r = await this.db.selectFrom('signing_keys').selectAll().where('kid', '=', kid).executeTakeFirst();
    return r && toRecord(r);
  }

  async all() {
    const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
    return rows.map(toRecord);
  }

  async rotate(next: SigningKeyRecord, retire: { kid: string; at: string; by: string } | null) {
    if (retire) {
      const res = await this.db
        .updateTable('signing_keys')
        .set({ current_slot: null, retired_at: retire.at, retired_by: retire.by })
        .where('kid', '=', retire.kid)
        .where('current_slot', '=', CURRENT)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return false;
    }
    try {
      await this.db
        .insertInto('signing_keys')
        .values({
          kid: next.kid,
          public_x: next.x,
          private_sealed: next.sealed,
          current_slot: CURRENT,
          created_at: next.createdAt,
          created_by: next.createdBy,
          retired_at: null,
          retired_by: null,
        })
        .execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }
}
