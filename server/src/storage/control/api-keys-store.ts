import { sql } from 'kysely';
import type { ApiKeyListQuery, ApiKeyRecord, ApiKeyStore } from '../../domains/api-keys/store.js';
import type { ApiKeysTable } from './schema.js';
import type { ControlDb } from './open.js';

function toRecord(r: ApiKeysTable): ApiKeyRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    projectId: r.project_id,
    name: r.name,
    keyHash: r.key_hash,
    keyPrefix: r.key_prefix,
    scopes: JSON.parse(r.scopes),
    status: r.status as ApiKeyRecord['status'],
    expiresAt: r.expires_at,
    lastUsedAt: r.last_used_at,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    userId: r.user_id,
    createdByApiKeyId: r.created_by_api_key_id,
    createdByState: r.created_by_state as ApiKeyRecord['createdByState'],
  };
}

export class KyselyApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: ControlDb) {}

  async insert(k: ApiKeyRecord): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: k.id,
        org_id: k.orgId,
        project_id: k.projectId,
        name: k.name,
        key_hash: k.keyHash,
        key_prefix: k.keyPrefix,
        scopes: JSON.stringify(k.scopes),
        status: k.status,
        expires_at: k.expiresAt,
        last_used_at: k.lastUsedAt,
        created_at: k.createdAt,
        revoked_at: k.revokedAt,
        user_id: k.userId,
        created_by_api_key_id: k.createdByApiKeyId,
        created_by_state: k.createdByState,
      })
      .execute();
  }

  async findByHash(hash: string) {
    // Read with the key on every request: whether a containment holds its writes (no cache to go stale).
    // Raw SQL: this runs on every authenticated request, and building it with the query builder costs more
    // than the read itself.
    const { rows } = await sql<ApiKeysTable & { write_held: number | boolean }>`
      SELECT k.*, EXISTS (
        SELECT 1 FROM quarantine_credentials h
        WHERE h.api_key_id = k.id AND h.effect = 'freeze' AND h.state <> 'failed' AND h.released_at IS NULL
      ) AS write_held
      FROM api_keys k WHERE k.key_hash = ${hash}`.execute(this.db);
    const r = rows[0];
    return r && { ...toRecord(r), writeHeld: Boolean(r.write_held) };
  }

  async findById(orgId: string, id: string) {
    const r = await this.db.selectFrom('api_keys').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async list(q: ApiKeyListQuery) {
    let sel = this.db.selectFrom('api_keys').selectAll().where('org_id', '=', q.orgId);
    if (q.projectId) sel = sel.where('project_id', '=', q.projectId);
    if (q.after) {
      const { createdAt, id } = q.after;
      sel = sel.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await sel.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit + 1).execute();
    return rows.map(toRecord);
  }

  async activeOrgWide(orgId: string, exceptId: string, nowIso: string) {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('status', '=', 'active')
      .where('project_id', 'is', null)
      .where('id', '!=', exceptId)
      .where('expires_at', '>', nowIso)
      .execute();
    return rows.map(toRecord);
  }

  async revokeForUser(orgId: string, userId: string, at: string) {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .where('status', '=', 'active')
      .execute();
    if (rows.length === 0) return [];
    await this.db
      .updateTable('api_keys')
      .set({ status: 'revoked', revoked_at: at })
      .where('id', 'in', rows.map((r) => r.id))
      .where('status', '=', 'active')
      .execute();
    return rows.map(toRecord);
  }

  async update(id: string, p: Partial<Pick<ApiKeyRecord, 'name' | 'scopes' | 'status' | 'revokedAt' | 'lastUsedAt' | 'keyHash' | 'keyPrefix'>>) {
    const values: Partial<ApiKeysTable> = {};
    if (p.name !== undefined) values.name = p.name;
    if (p.scopes !== undefined) values.scopes = JSON.stringify(p.scopes);
    if (p.status !== undefined) values.status = p.status;
    if (p.revokedAt !== undefined) values.revoked_at = p.revokedAt;
    if (p.lastUsedAt !== undefined) values.last_used_at = p.lastUsedAt;
    if (p.keyHash !== undefined) values.key_hash = p.keyHash;
    if (p.keyPrefix !== undefined) values.key_prefix = p.keyPrefix;
    await this.db.updateTable('api_keys').set(values).where('id', '=', id).execute();
  }

  async revokeByProject(projectId: string, at: string) {
    const rows = await this.db
      .updateTable('api_keys')
      .set({ status: 'revoked', revoked_at: at })
      .where('project_id', '=', projectId)
      .where('status', '=', 'active')
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }
}
