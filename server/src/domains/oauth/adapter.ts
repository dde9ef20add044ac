/**
 * The oidc-provider Adapter over the control store: every artifact the library keeps (tokens,
 * codes, grants, interactions, registered clients, its sessions) is one row, so any API node can
 * continue a flow another node started.
 *
 * Expiry uses the wall clock, not the injected one: the library itself stamps and checks its
 * artifacts with Date.now().
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthPayloadStore } from './store.js';

const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export class ControlStoreAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly store: OAuthPayloadStore,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const consumed = (payload as { consumed?: number }).consumed;
    await this.store.upsert({
      model: this.model,
      id,
      payload: payload as Record<string, unknown>,
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
    return this.present(await this.store.find(this.model, id));
  }

  async findByUserCode(userCode: string) {
    return this.present(await this.store.findByUserCode(this.model, userCode));
  }

  async findByUid(uid: string) {
    return this.present(await this.store.findByUid(this.model, uid));
  }

  async consume(id: string) {
    await this.store.consume(this.model, id, new Date().toISOString());
  }

  async destroy(id: string) {
    await this.store.destroy(this.model, id);
  }

  async revokeByGrantId(grantId: string) {
    await this.store.revokeByGrantId(this.model, grantId);
  }
}
