/** Who is calling, resolved from the credential and nothing else. */
import type { Role } from '../domains/people/roles.js';

export interface Principal {
  /** An API key, a browser session of a signed-in person, or a person's OAuth access token held by an agent. */
  kind: 'api_key' | 'session' | 'oauth';
  /** The key, when the credential is an API key. */
  keyId: string | null;
  /** The sign-in (refresh family), when the credential is a browser session. */
  signInId: string | null;
  /** The agent approval (connection) the OAuth access token belongs to. */
  connectionId: string | null;
  orgId: string;
  /** The project the key is bound to; null for an organization-wide credential (sessions always are). */
  projectId: string | null;
  scopes: ReadonlySet<string>;
  /** The person behind the credential: the signed-in person, or the person who minted the key (or minted the key that minted it). */
  userId: string | null;
  /** The signed-in person's current role; null for API keys (their authority is their scopes). */
  role: Role | null;
  /** An API key whose telemetry writes an active containment holds (freeze_writes): ingest refuses it as revoked. */
  writeFrozen?: boolean;
}

export function hasScope(p: Principal, scope: string): boolean {
  return p.scopes.has(scope);
}
