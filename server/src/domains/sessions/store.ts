/**
 * Storage port of browser sessions. A sign-in is one refresh family: it is bound to one person
 * in one organization, and owns every access and refresh credential issued to it.
 */
export interface SignInRecord {
  id: string;
  userId: string;
  orgId: string;
  createdAt: string;
  revokedAt: string | null;
}

export type CredentialKind = 'access' | 'refresh';
export type CredentialStatus = 'active' | 'rotated' | 'revoked';

export interface SignInCredentialRecord {
  id: string;
  signInId: string;
  kind: CredentialKind;
  tokenHash: string;
  status: CredentialStatus;
  createdAt: string;
  expiresAt: string;
}

export interface SessionStore {
  insertSignIn(s: SignInRecord): Promise<void>;
  insertCredential(c: SignInCredentialRecord): Promise<void>;
  /** The credential with that hash and its sign-in, whatever their states. */
  findCredential(hash: string): Promise<{ credential: SignInCredentialRecord; signIn: SignInRecord } | undefined>;
  /** active -> rotated; false when the credential was no longer active (a concurrent rotation won). */
  markRotated(credentialId: string): Promise<boolean>;
  /** Retires the sign-in's active access credentials (a rotation replaces them). */
  retireAccess(signInId: string): Promise<void>;
  /** Revokes the sign-in and every credential of its family. */
  revokeFamily(signInId: string, at: string): Promise<void>;
  /** Revokes every live sign-in of a person in one organization; returns their ids. */
  revokeForMember(orgId: string, userId: string, at: string): Promise<string[]>;
}
