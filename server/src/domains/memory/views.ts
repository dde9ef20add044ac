/** Records -> response shapes of the memory label and propagation routes. */
import { isoMicros } from '../traces/query-rules.js';
import type { Propagation } from './service.js';
import type { MemoryLabelRecord, MemoryLabelState, MemoryTrustLabel } from './store.js';

export function labelView(r: MemoryLabelRecord) {
  return {
    id: r.id,
    project_id: r.projectId,
    memory_item_key: r.itemKey,
    label: r.label,
    reason: r.reason,
    revision: r.revision,
    labeled_by: r.labeledBy,
    labeled_at: r.labeledAt,
    review_signal_opened: r.signalOpened,
    review_signal_resolved: r.signalResolved,
  };
}

const stateOf = (r: MemoryLabelRecord | undefined): MemoryLabelState => (r ? 'MEMORY_LABEL_STATE_LABELED' : 'MEMORY_LABEL_STATE_UNLABELED');

export function propagationView(projectId: string, itemKey: string, p: Propagation) {
  return {
    memory_item_key: itemKey,
    project_id: projectId,
    entries: p.entries.map(({ op, inForce }) => ({
      session_key: op.sessionKey,
      turn_id: op.turnId,
      run_id: op.inRun ? op.traceId : null,
      trace_id: op.traceId,
      span_id: op.spanId,
      occurred_at: isoMicros(op.startUs),
      canonical_operation: op.canonicalOperation,
      store: op.store,
      item_provenance: op.provenance,
      declared_trust_label: op.declaredTrustLabel as MemoryTrustLabel | null,
      label_state: stateOf(inForce),
      label_in_force: inForce?.label ?? null,
      label_revision: inForce?.revision ?? null,
      label_id: inForce?.id ?? null,
      label_in_force_since: inForce?.labeledAt ?? null,
    })),
    distinct_session_count: p.distinctSessions,
    current_label: p.current?.label ?? null,
    current_label_state: stateOf(p.current),
    current_label_record: p.current ? labelView(p.current) : null,
    truncated: p.truncated,
  };
}
