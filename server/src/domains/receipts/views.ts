/** API views of receipts and their entries. */
import type { EntryRecord, ReceiptRecord } from './store.js';

const opt = <K extends string>(key: K, v: string | null) => (v !== null ? ({ [key]: v } as Record<K, string>) : {});

export function receiptView(r: ReceiptRecord) {
  return {
    action_id: r.actionId,
    project_id: r.projectId,
    chain_id: r.chainId,
    authority: r.authority,
    final_state: r.finalState,
    remediation: r.remediation ?? '',
    requester_principal: r.requesterPrincipal ?? '',
    conflicting_requester_principals: r.conflictingRequesterPrincipals,
    effect_class: r.effectClass,
    destructive: r.destructive,
    approver_principal: r.approverPrincipal ?? '',
    ...opt('approved_at', r.approvedAt),
    policy_id: r.policyId ?? '',
    policy_version: r.policyVersion ?? '',
    conflicting_policies: r.conflictingPolicies,
    malformed_policy_records: r.malformedPolicyRecords,
    normalizer_version: r.normalizerVersion,
    occurred_at: r.occurredAt,
    ...opt('run_id', r.runId),
    entry_count: r.entryCount,
  };
}

export function entryView(e: EntryRecord) {
  return {
    seq: e.seq,
    chain_seq: e.chainSeq,
    state: e.state,
    authority: e.authority,
    requester_principal: e.requesterPrincipal ?? '',
    approver_principal: e.approverPrincipal ?? '',
    reported_by: e.reportedBy ?? '',
    effect_class: e.effectClass,
    destructive: e.destructive,
    policy_id: e.policyId ?? '',
    policy_version: e.policyVersion ?? '',
    occurred_at: e.occurredAt,
    recorded_at: e.recordedAt,
    ...opt('run_id', e.runId),
    ...opt('trace_id', e.traceId),
    ...opt('span_id', e.spanId),
    ...opt('tool', e.tool),
    ...opt('purpose', e.purpose),
    ...opt('authority_edge_id', e.authorityEdgeId),
    ...opt('entry_id', e.entryId),
    entry_sha256: e.entrySha256,
  };
}
