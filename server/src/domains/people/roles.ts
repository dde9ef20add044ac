/**
 * Roles of a person in an organization, and the scopes each role holds (issue 3; spec 1
 * "Account and audit": the audit trail is read under `audit:read`, held by owners and admins).
 *
 * | Role   | Scopes |
 * |--------|--------|
 * | owner  | every scope (ALL_SCOPES in domains/api-keys/scopes.ts) |
 * | admin  | every scope, like an owner; but an admin cannot invite an owner, make someone an owner, or change or remove an owner |
 * | member | metrics:read, traces:read, logs:read, ingest:write, analytics:write, agents:read, governance:read, evals:read, scores:read, scores:write, quarantine:request, activity:read, oauth:connections, docs:read, projects:read, alerts:acknowledge, errors:write, llm:read |
 *
 * Members therefore lack, among others, `audit:read`, `members:write`, `api_key:write`,
 * `metrics:delete`, `traces:delete`, `logs:delete` and every approve/write scope of governance and agents. An organization
 * always keeps at least one owner.
 *
 * The scopes are read from this table on every request of a browser session, so a role change
 * applies to the person's next request.
 */
import { ALL_SCOPES } from '../api-keys/scopes.js';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

const MEMBER_SCOPES = [
  'metrics:read',
  'traces:read',
  'logs:read',
  'ingest:write',
  'analytics:write',
  'agents:read',
  'governance:read',
  'evals:read',
  'scores:read',
  'scores:write',
  'quarantine:request',
  'activity:read',
  'oauth:connections',
  'docs:read',
  'projects:read',
  'alerts:acknowledge',
  'errors:write',
  'llm:read',
] as const satisfies readonly (typeof ALL_SCOPES)[number][];

export const ROLE_SCOPES: Readonly<Record<Role, readonly string[]>> = {
  owner: ALL_SCOPES,
  admin: ALL_SCOPES,
  member: MEMBER_SCOPES,
};

export function isRole(s: string): s is Role {
  return (ROLES as readonly string[]).includes(s);
}
