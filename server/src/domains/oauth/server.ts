/**
 * One oidc-provider instance per process, built on first use (its keys come from the control
 * store), plus the few model reads our services need: resolving an access token, and the
 * artifacts of the consent step.
 */
import type Provider from 'oidc-provider';
import type { Config } from '../../config.js';
import type { KeyedHash } from '../../lib/keyed-hash.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { ControlStoreAdapter } from './adapter.js';
import { loadOrCreateKeys } from './keys.js';
import { createProvider, INTERACTIONS_PATH, OAUTH_PREFIX } from './provider.js';

/** Expired artifacts are deleted at most this often (by whichever node writes next). */
const PURGE_EVERY_MS = 60 * 60_000;

export interface ResolvedAccessToken {
  grantId: string;
  userId: string;
  clientId: string;
  scopes: string[];
}

export class OAuthServer {
  private ready?: Promise<Provider>;
  private lastPurge = 0;
  private readonly grantRevokedHooks: ((grantId: string) => Promise<void>)[] = [];

  constructor(
    private readonly store: ControlStore,
    private readonly config: Config,
    private readonly keyHash: KeyedHash,
  ) {}

  get issuer(): string {
    return `${this.config.publicUrl}${OAUTH_PREFIX}`;
  }

  /** Called when the library revokes a grant itself (an agent revoking its refresh token at /oauth/token/revocation). */
  onGrantRevoked(hook: (grantId: string) => Promise<void>): void {
    this.grantRevokedHooks.push(hook);
  }

  provider(): Promise<Provider> {
    // A failed start (store unreachable) is retried by the next request instead of being remembered.
    this.ready ??= this.build().catch((e) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  private async build(): Promise<Provider> {
    const keys = await loadOrCreateKeys(this.store.organizations);
    const provider = await createProvider({
      issuer: this.issuer,
      keys,
      adapter: (model) => {
        const adapter = new ControlStoreAdapter(model, this.store.oauthPayloads, this.keyHash);
        const upsert = adapter.upsert.bind(adapter);
        adapter.upsert = async (...args) => {
          await upsert(...args);
          this.maybePurge();
        };
        return adapter;
      },
      personExists: async (userId) => (await this.store.users.findById(userId)) !== undefined,
      interactionPath: (uid) => `${INTERACTIONS_PATH}/${uid}`,
    });
    provider.on('grant.revoked', (_ctx: unknown, grantId: string) => {
      for (const hook of this.grantRevokedHooks) void hook(grantId).catch(() => undefined);
    });
    return provider;
  }

  private maybePurge(): void {
    const now = Date.now();
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    void this.store.oauthPayloads.purgeExpired(new Date(now).toISOString()).catch(() => undefined);
  }

  /**
   * An access token as the library stored it: unknown, expired or revoked (deleted) tokens are
   * undefined. Refresh tokens and codes are other models, so they never resolve here.
   */
  async accessToken(token: string): Promise<ResolvedAccessToken | undefined> {
    if (!/^[A-Za-z0-9_-]{20,200}$/.test(token)) return undefined;
    const provider = await this.provider();
    const at = await provider.AccessToken.find(token);
    if (!at || at.isExpired || !at.grantId || !at.accountId || !at.clientId) return undefined;
    return { grantId: at.grantId, userId: at.accountId, clientId: at.clientId, scopes: (at.scope ?? '').split(' ').filter(Boolean) };
  }

  /** Deletes a grant and every token and code issued under it, with the given stores (a transaction's). */
  destroyGrant(stores: Pick<ControlStore, 'oauthPayloads'>, grantId: string): Promise<void> {
    return stores.oauthPayloads.destroyGrant(grantId);
  }
}
