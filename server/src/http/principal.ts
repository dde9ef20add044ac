/** Who is calling, resolved from the credential and nothing else. */
export interface Principal {
  kind: 'api_key';
  keyId: string;
  orgId: string;
  /** The project the key is bound to; null for an organization-wide key. */
  projectId: string | null;
  scopes: ReadonlySet<string>;
  /** The person behind the key, when one minted it (or minted the key that minted it). */
  userId: string | null;
}

export function hasScope(p: Principal, scope: string): boolean {
  return p.scopes.has(scope);
}
