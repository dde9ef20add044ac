/** Storage port of the OAuth authorization server: the artifacts oidc-provider asks its adapter to keep. */

/** One stored artifact. `model` is the library's model name (AccessToken, Grant, Interaction, Client ...). */
export interface OAuthPayloadRow {
  model: string;
  id: string;
  payload: Record<string, unknown>;
  /** Lets every token of one grant be revoked at once. */
  grantId: string | null;
  /** The device flow looks a DeviceCode up by the code a person types. */
  userCode: string | null;
  /** A Session is looked up by its uid. */
  uid: string | null;
  /** null: kept until destroyed. */
  expiresAt: string | null;
  consumedAt: string | null;
}

export interface OAuthPayloadStore {
  upsert(row: OAuthPayloadRow): Promise<void>;
  /** The row whatever its expiry; the adapter decides what an expired row means. */
  find(model: string, id: string): Promise<OAuthPayloadRow | undefined>;
  findByUserCode(model: string, userCode: string): Promise<OAuthPayloadRow | undefined>;
  findByUid(model: string, uid: string): Promise<OAuthPayloadRow | undefined>;
  consume(model: string, id: string, at: string): Promise<void>;
  destroy(model: string, id: string): Promise<void>;
  /** Deletes the artifacts of one model issued under a grant. */
  revokeByGrantId(model: string, grantId: string): Promise<void>;
  /** Deletes a grant and every artifact issued under it (all models). */
  destroyGrant(grantId: string): Promise<void>;
  /** Deletes rows that expired before `before`; returns how many. */
  purgeExpired(before: string): Promise<number>;
}
