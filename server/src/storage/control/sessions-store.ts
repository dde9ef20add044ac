import type { SessionStore, SignInCredentialRecord, SignInRecord } from '../../domains/sessions/store.js';
import type { ControlDb } from './open.js';

export class KyselySessionStore implements SessionStore {
  constructor(private readonly db: ControlDb) {}

  async insertSignIn(s: SignInRecord) {
    await this.db
      .insertInto('sign_ins')
      .values({ id: s.id, user_id: s.userId, org_id: s.orgId, created_at: s.createdAt, revoked_at: s.revokedAt })
      .execute();
  }

  async insertCredential(c: SignInCredentialRecord) {
    await this.db
      .insertInto('sign_in_credentials')
      .values({
        id: c.id,
        sign_in_id: c.signInId,
        kind: c.kind,
        token_hash: c.tokenHash,
        status: c.status,
        created_at: c.createdAt,
        expires_at: c.expiresAt,
      })
      .execute();
  }

  async findCredential(hash: string) {
    const r = await this.db
      .selectFrom('sign_in_credentials as c')
      .innerJoin('sign_ins as s', 's.id', 'c.sign_in_id')
      .select([
        'c.id', 'c.sign_in_id', 'c.kind', 'c.token_hash', 'c.status', 'c.created_at', 'c.expires_at',
        's.user_id', 's.org_id', 's.created_at as sign_in_created_at', 's.revoked_at',
      ])
      .where('c.token_hash', '=', hash)
      .executeTakeFirst();
    if (!r) return undefined;
    return {
      credential: {
        id: r.id,
        signInId: r.sign_in_id,
        kind: r.kind as SignInCredentialRecord['kind'],
        tokenHash: r.token_hash,
        status: r.status as SignInCredentialRecord['status'],
        createdAt: r.created_at,
        expiresAt: r.expires_at,
      },
      signIn: { id: r.sign_in_id, userId: r.user_id, orgId: r.org_id, createdAt: r.sign_in_created_at, revokedAt: r.revoked_at },
    };
  }

  async markRotated(credentialId: string) {
    const r = await this.db
      .updateTable('sign_in_credentials')
      .set({ status: 'rotated' })
      .where('id', '=', credentialId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async retireAccess(signInId: string) {
    await this.db
      .updateTable('sign_in_credentials')
      .set({ status: 'rotated' })
      .where('sign_in_id', '=', signInId)
      .where('kind', '=', 'access')
      .where('status', '=', 'active')
      .execute();
  }

  async revokeFamily(signInId: string, at: string) {
    await this.db.updateTable('sign_ins').set({ revoked_at: at }).where('id', '=', signInId).where('revoked_at', 'is', null).execute();
    await this.db.updateTable('sign_in_credentials').set({ status: 'revoked' }).where('sign_in_id', '=', signInId).where('status', '!=', 'revoked').execute();
  }

  async revokeForMember(orgId: string, userId: string, at: string) {
    const rows = await this.db
      .updateTable('sign_ins')
      .set({ revoked_at: at })
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute();
    const ids = rows.map((r) => r.id);
    if (ids.length > 0)
      await this.db.updateTable('sign_in_credentials').set({ status: 'revoked' }).where('sign_in_id', 'in', ids).where('status', '!=', 'revoked').execute();
    return ids;
  }
}
