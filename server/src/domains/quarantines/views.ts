/** The API view of a containment. */
import type { Actor, CredentialOutcome, QuarantineRecord } from './store.js';

const actorView = (a: Actor) => ({ ...(a.userId !== null ? { user_id: a.userId } : {}), ...(a.apiKeyId !== null ? { api_key_id: a.apiKeyId } : {}) });

export function quarantineView(q: QuarantineRecord, outcomes: CredentialOutcome[]) {
  return {
    id: q.id,
    project_id: q.projectId,
    status: q.status,
    action: q.action,
    [q.targetKind]: q.target,
    reason: q.reason,
    ...(q.environment !== null ? { environment: q.environment } : {}),
    ...(q.requestId !== null ? { request_id: q.requestId } : {}),
    requested_by: actorView(q.requestedBy),
    requested_at: q.requestedAt,
    ...(q.approvedBy ? { approved_by: actorView(q.approvedBy), approved_at: q.approvedAt! } : {}),
    credentials: outcomes
      .filter((o) => o.quarantineId === q.id)
      .map((o) => ({
        api_key_id: o.apiKeyId,
        effect: o.effect,
        enforcement: o.state,
        ...(o.detailCode !== null ? { detail_code: o.detailCode } : {}),
        ...(o.releasedAt !== null ? { released_at: o.releasedAt } : {}),
      })),
    unenforceable_sightings: q.unenforceableSightings,
    ...(q.liftedBy ? { lift_reason: q.liftReason!, lifted_by: actorView(q.liftedBy), lifted_at: q.liftedAt! } : {}),
    ...(q.withdrawnBy ? { withdraw_reason: q.withdrawReason!, withdrawn_by: actorView(q.withdrawnBy), withdrawn_at: q.withdrawnAt! } : {}),
  };
}
