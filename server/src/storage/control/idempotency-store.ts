import type { IdempotencyRecord, IdempotencyStore, SealedResponse } from '../../domains/idempotency/store.js';
import type { ControlDb } from './open.js';
import type { IdempotencyRecordsTable } from './schema.js';

function fromRow(r: IdempotencyRecordsTable): IdempotencyRecord {
  return {
    credential: r.credential,
    key: r.idempotency_key,
    fingerprint: r.fingerprint,
    state: r.state as IdempotencyRecord['state'],
    response: r.status === null ? null : { status: r.status, sealed: r.body ?? '' },
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  };
}

export class KyselyIdempotencyStore implements IdempotencyStore {
  constructor(private readonly db: ControlDb) {}

  async claim(r: IdempotencyRecord, now: string, abandonedBefore: string): Promise<'claimed' | IdempotencyRecord> {
    const where = this.db
      .deleteFrom('idempotency_records')
      .where('credential', '=', r.credential)
      .where('idempotency_key', '=', r.key)
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb.and([eb('state', '=', 'pending'), eb('created_at', '<', abandonedBefore)])]));
    await where.execute();
    const inserted = await this.db
      .insertInto('idempotency_records')
      .values({
        credential: r.credential,
        idempotency_key: r.key,
        fingerprint: r.fingerprint,
        state: 'pending',
        status: null,
        headers: null,
        body: null,
        created_at: r.createdAt,
        expires_at: r.expiresAt,
      })
      .onConflict((oc) => oc.columns(['credential', 'idempotency_key']).doNothing())
      .returning('credential')
      .execute();
    if (inserted.length === 1) return 'claimed' as const;
    const existing = await this.db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('credential', '=', r.credential)
      .where('idempotency_key', '=', r.key)
      .executeTakeFirst();
    // Gone between the insert and the select (released by its request): the caller may try again.
    return existing ? fromRow(existing) : this.claim(r, now, abandonedBefore);
  }

  async complete(credential: string, key: string, createdAt: string, response: SealedResponse) {
    await this.db
      .updateTable('idempotency_records')
      // The headers travel inside the sealed body; the column stays empty.
      .set({ state: 'done', status: response.status, headers: null, body: response.sealed })
      .where('credential', '=', credential)
      .where('idempotency_key', '=', key)
      .where('created_at', '=', createdAt)
      .where('state', '=', 'pending')
      .execute();
  }

  async release(credential: string, key: string, createdAt: string) {
    await this.db
      .deleteFrom('idempotency_records')
      .where('credential', '=', credential)
      .where('idempotency_key', '=', key)
      .where('created_at', '=', createdAt)
      .where('state', '=', 'pending')
      .execute();
  }

  async purgeExpired(now: string) {
    const r = await this.db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
