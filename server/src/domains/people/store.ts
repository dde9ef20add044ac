/** Storage port of people: users, their memberships in organizations, and invitations. */
import type { Role } from './roles.js';

export interface UserRecord {
  id: string;
  /** Lower-cased; unique across the service. */
  email: string;
  name: string;
  passwordHash: string;
  createdAt: string;
}

export interface MembershipRecord {
  orgId: string;
  userId: string;
  role: Role;
  createdAt: string;
}

export interface MemberEntry extends MembershipRecord {
  email: string;
  name: string;
}

/** Stored states; `expired` is derived from `expiresAt` when reading. */
export type StoredInvitationStatus = 'pending' | 'accepted' | 'revoked';

export interface InvitationRecord {
  id: string;
  orgId: string;
  email: string;
  role: Role;
  tokenHash: string;
  status: StoredInvitationStatus;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  acceptedUserId: string | null;
  revokedAt: string | null;
  /** Who invited: the person (when there is one) and the key (when a key did it). */
  createdByUserId: string | null;
  createdByApiKeyId: string | null;
}

export interface UserStore {
  insert(u: UserRecord): Promise<void>;
  findById(id: string): Promise<UserRecord | undefined>;
  findByEmail(email: string): Promise<UserRecord | undefined>;
}

export interface MembershipStore {
  insert(m: MembershipRecord): Promise<void>;
  find(orgId: string, userId: string): Promise<MembershipRecord | undefined>;
  listForUser(userId: string): Promise<MembershipRecord[]>;
  /** Oldest first, with the person's email and name; up to `limit + 1` rows after the position. */
  list(orgId: string, opts: { after?: { createdAt: string; userId: string }; limit: number }): Promise<MemberEntry[]>;
  /**
   * The organization's owners, read so that a concurrent change of another owner waits for this
   * transaction (row locks on PostgreSQL; SQLite transactions are serialized already).
   */
  lockOwners(orgId: string): Promise<string[]>;
  updateRole(orgId: string, userId: string, role: Role): Promise<void>;
  delete(orgId: string, userId: string): Promise<void>;
}

export interface InvitationStore {
  insert(i: InvitationRecord): Promise<void>;
  findById(orgId: string, id: string): Promise<InvitationRecord | undefined>;
  findByTokenHash(hash: string): Promise<InvitationRecord | undefined>;
  /** Newest first; up to `limit + 1` rows after the position. */
  list(orgId: string, opts: { after?: { createdAt: string; id: string }; limit: number }): Promise<InvitationRecord[]>;
  /** Moves a pending invitation to accepted; false when it was no longer pending (single use). */
  markAccepted(id: string, at: string, userId: string): Promise<boolean>;
  markRevoked(id: string, at: string): Promise<void>;
}
