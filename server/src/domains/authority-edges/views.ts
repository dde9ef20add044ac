/** The API view of an authority edge. */
import type { AuthorityEdgeRecord } from './store.js';

export function edgeView(e: AuthorityEdgeRecord) {
  return {
    id: e.id,
    project_id: e.projectId,
    from_principal: e.principal,
    tool: e.tool,
    purpose: e.purpose,
    source_kind: e.sourceKind,
    source_id: e.sourceId,
    created_at: e.createdAt,
    sighting_count: e.sightingCount,
    ...(e.lastExercisedAt !== null ? { last_exercised_at: e.lastExercisedAt } : {}),
    revoked: e.revokedAt !== null,
    ...(e.revokedAt !== null ? { revocation: { reason: e.revokeReason ?? '', revoked_by: e.revokedBy ?? '', revoked_at: e.revokedAt } } : {}),
  };
}
