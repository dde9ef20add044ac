import type { InvitationRecord, InvitationStore } from '../../domains/people/store.js';
import type { Role } from '../../domains/people/roles.js';
import type { InvitationsTable } from './schema.js';
import type { ControlDb } from './open.js';

const toRecord = (r: InvitationsTable): InvitationRecord => ({
  id: r.id,
  orgId: r.org_id,
  email: r.email,
  role: r.role as Role,
  tokenHash: r.token_hash,
  status: r.status as InvitationRecord['status'],
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  acceptedAt: r.accepted_at,
  acceptedUserId: r.accepted_user_id,
  revokedAt: r.revoked_at,
  createdByUserId: r.created_by_user_id,
  createdByApiKeyId: r.created_by_api_key_id,
});

export class KyselyInvitationStore implements InvitationStore {
  constructor(private readonly db: ControlDb) {}

  async insert(i: InvitationRecord) {
    await this.db
      .insertInto('invitations')
      .values({
        id: i.id,
        org_id: i.orgId,
        email: i.email,
        role: i.role,
        token_hash: i.tokenHash,
        status: i.status,
        created_at: i.createdAt,
        expires_at: i.expiresAt,
        accepted_at: i.acceptedAt,
        accepted_user_id: i.acceptedUserId,
        revoked_at: i.revokedAt,
        created_by_user_id: i.createdByUserId,
        created_by_api_key_id: i.createdByApiKeyId,
      })
      .execute();
  }

  async findById(orgId: string, id: string) {
    const r = await this.db.selectFrom('invitations').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async findByTokenHash(hash: string) {
    const r = await this.db.selectFrom('invitations').selectAll().where('token_hash', '=', hash).executeTakeFirst();
    return r && toRecord(r);
  }

  async list(orgId: string, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    let sel = this.db.selectFrom('invitations').selectAll().where('org_id', '=', orgId);
    if (opts.after) {
      const { createdAt, id } = opts.after;
      sel = sel.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await sel.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toRecord);
  }

  async markAccepted(id: string, at: string, userId: string) {
    const r = await this.db
      .updateTable('invitations')
      .set({ status: 'accepted', accepted_at: at, accepted_user_id: userId })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async markRevoked(id: string, at: string) {
    await this.db.updateTable('invitations').set({ status: 'revoked', revoked_at: at }).where('id', '=', id).execute();
  }
}
