/**
 * The server's scope list, copied from server/src/domains/api-keys/scopes.ts (the CLI never
 * imports server code; keep the two in step). Used to check `--scope` before anything is sent.
 */
import { usageError } from './errors.js';

export const ALL_SCOPES = [
  'metrics:read',
  'metrics:delete',
  'traces:read',
  'traces:delete',
  'logs:read',
  'logs:delete',
  'ingest:write',
  'analytics:write',
  'agents:read',
  'agents:write',
  'agents:content:read',
  'quarantine:request',
  'quarantine:approve',
  'governance:read',
  'governance:write',
  'api_key:write',
  'audit:read',
  'activity:read',
  'members:write',
  'oauth:connections',
  'alerts:acknowledge',
  'errors:write',
  'docs:read',
  'evals:read',
  'evals:write',
  'scores:read',
  'scores:write',
  'projects:read',
  'projects:write',
  'llm:read',
  'llm:write',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (ALL_SCOPES as readonly string[]).includes(s);
}

/** `--scope` values (repeatable, also comma-separated), each known, without repeats; an unknown one is a usage error. */
export function checkScopes(values: string[]): Scope[] {
  const list = values.flatMap((v) => v.split(',')).map((s) => s.trim());
  const unknown = list.filter((s) => !isScope(s));
  if (unknown.length) throw usageError(`unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; known scopes: ${ALL_SCOPES.join(', ')}`);
  return [...new Set(list as Scope[])];
}
