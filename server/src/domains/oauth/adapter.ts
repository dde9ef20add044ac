/**
 * The oidc-provider Adapter over the control store: every artifact the library keeps (tokens,
 * codes, grants, interactions, registered clients, its sessions) is one row, so any API node can
 * continue a flow another node started.
 *
 * Expiry uses the wall clock, not the injected one: the library itself stamps and checks its
 * artifacts with Date.now().
 *
 * The id of a token a client presents (access and refresh tokens, authorization codes,
 * registration access tokens) is the token itself: those rows are stored under the keyed hash of
 * the id (HMAC under the server secret) and without the library's `jti` copy of it, so a copy of
 * the database holds no usable token. Rows stored in clear before this keep working until they
 * expire or rotate.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { KeyedHash } from '../../lib/keyed-hash.js';
import type { OAuthPayloadStore } from './store.js';

const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** Models whose id is a bearer secret and that are only ever looked up by that id. */
export const BEARER_MODELS = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'RegistrationAccessToken', 'ClientCredentials']);

export class ControlStoreAdapter implements Adapter {
  private readonly hashed: boolean;

  constructor(
    private readonly model: string,
    private readonly store: OAuthPayloadStore,
    private readonly keyHash: KeyedHash,
  ) {
    this.hashed = BEARER_MODELS.has(model);
  }

  /** The id a row is stored under. */
  private key(id: string): string {
    return this.hashed ? this.keyHash.hash(id) : id;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const consumed = (payload as { consumed?: number }).consumed;
    let stored = payload as Record<string, unknown>;
    if (this.hashed) {
      const { jti: _jti, ...rest } = stored;
      stored = rest;
    }
    await this.store.upsert({
      model: this.model,
      id: this.key(id),
      payload: stored,
      grantId: payload.grantId ?? null,
      userCode: payload.userCode ?? null,
      uid: payload.uid ?? null,
      expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
      consumedAt: consumed ? new Date(consumed * 1000).toISOString() : null,
    });
  }

  private present(row: Awaited<ReturnType<OAuthPayloadStore['find']>>): AdapterPayload | undefined {
    if (!row) return undefined;
    if (row.expiresAt !== null && Date.parse(row.expiresAt) <= Date.now()) return undefined;
    return { ...(row.payload as AdapterPayload), ...(row.consumedAt ? { consumed: epoch(row.consumedAt) } : {}) };
  }

  async find(id: string) {
    if (!this.hashed) return this.present(await this.store.find(this.model, id));
    const row = (await this.store.find(this.model, this.key(id))) ?? (await this.store.find(this.model, id));
    const found = this.present(row);
    return found && { ...found, jti: id };
  }

  async findByUserCode(userCode: string) {
    return this.present(await this.store.findByUserCode(this.model, userCode));
  }

  async findByUid(uid: string) {
    return this.present(await this.store.findByUid(this.model, uid));
  }

  async consume(id: string) {
    const at = new Date().toISOString();
    await this.store.consume(this.model, this.key(id), at);
    if (this.hashed) await this.store.consume(this.model, id, at); // a row stored in clear before
  }

  async destroy(id: string) {
    await this.store.destroy(this.model, this.key(id));
    if (this.hashed) await this.store.destroy(this.model, id);
  }

  async revokeByGrantId(grantId: string) {
    await this.store.revokeByGrantId(this.model, grantId);
  }
}
