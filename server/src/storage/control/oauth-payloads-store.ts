import type { OAuthPayloadRow, OAuthPayloadStore } from '../../domains/oauth/store.js';
import type { ControlDb } from './open.js';
import type { OAuthPayloadsTable } from './schema.js';

const toRow = (r: OAuthPayloadsTable): OAuthPayloadRow => ({
  model: r.model,
  id: r.id,
  payload: JSON.parse(r.payload),
  grantId: r.grant_id,
  userCode: r.user_code,
  uid: r.uid,
  expiresAt: r.expires_at,
  consumedAt: r.consumed_at,
});

export class KyselyOAuthPayloadStore implements OAuthPayloadStore {
  constructor(private readonly db: ControlDb) {}

  async upsert(row: OAuthPayloadRow) {
    const values = {
      payload: JSON.stringify(row.payload),
      grant_id: row.grantId,
      user_code: row.userCode,
      uid: row.uid,
      expires_at: row.expiresAt,
      consumed_at: row.consumedAt,
    };
    await this.db
      .insertInto('oauth_payloads')
      .values({ model: row.model, id: row.id, ...values })
      .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(values))
      .execute();
  }

  async find(model: string, id: string) {
    const r = await this.db.selectFrom('oauth_payloads').selectAll().where('model', '=', model).where('id', '=', id).executeTakeFirst();
    return r && toRow(r);
  }

  async findByUserCode(model: string, userCode: string) {
    const r = await this.db.selectFrom('oauth_payloads').selectAll().where('model', '=', model).where('user_code', '=', userCode).executeTakeFirst();
    return r && toRow(r);
  }

  async findByUid(model: string, uid: string) {
    const r = await this.db.selectFrom('oauth_payloads').selectAll().where('model', '=', model).where('uid', '=', uid).executeTakeFirst();
    return r && toRow(r);
  }

  async consume(model: string, id: string, at: string) {
    await this.db.updateTable('oauth_payloads').set({ consumed_at: at }).where('model', '=', model).where('id', '=', id).execute();
  }

  async destroy(model: string, id: string) {
    await this.db.deleteFrom('oauth_payloads').where('model', '=', model).where('id', '=', id).execute();
  }

  async revokeByGrantId(model: string, grantId: string) {
    await this.db.deleteFrom('oauth_payloads').where('model', '=', model).where('grant_id', '=', grantId).execute();
  }

  async destroyGrant(grantId: string) {
    await this.db.deleteFrom('oauth_payloads').where('grant_id', '=', grantId).execute();
    await this.db.deleteFrom('oauth_payloads').where('model', '=', 'Grant').where('id', '=', grantId).execute();
  }

  async purgeExpired(before: string) {
    const r = await this.db.deleteFrom('oauth_payloads').where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
