/**
 * The server's scope list, copied from server/src/domains/api-keys/scopes.ts (the CLI never
 * imports server code; keep the two in step). Used to check `--scope` before anything is sent.
 */
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
