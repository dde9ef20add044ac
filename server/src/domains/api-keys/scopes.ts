/** Every scope named by the spec (document 1 "Scopes named in this document", document 3 "Authentication"). */
export const ALL_SCOPES = [
  'metrics:read',
  'metrics:delete',
  // Not named by the spec (it leaves the scopes of traces and logs open): our own (documented in docs/reference.md).
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
  // Not named by the spec; our own for project administration (documented in docs/reference.md).
  'projects:read',
  'projects:write',
  // Not named by the spec either: the LLM model price table under /llm (documented in docs/reference.md).
  'llm:read',
  'llm:write',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (ALL_SCOPES as readonly string[]).includes(s);
}
