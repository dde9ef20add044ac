/** Records -> the API's JSON (docs/content-policy.md). */
import { deniedGrid, rulesOf } from './model.js';
import type { Actor, PolicyRecord, RefusalCount, RetentionWindow } from './store.js';

const actorView = (a: Actor) => ({ ...(a.userId !== null ? { user_id: a.userId } : {}), ...(a.apiKeyId !== null ? { api_key_id: a.apiKeyId } : {}) });

/** A project's policy; a project without one is the fully denied grid at version 0, with no updated_by. */
export function policyView(projectId: string, p: PolicyRecord | null) {
  if (p === null) return { project_id: projectId, version: 0, rules: rulesOf(deniedGrid()) };
  return { project_id: projectId, version: p.version, rules: rulesOf(p.grid), updated_by: actorView(p.updatedBy), updated_at: p.updatedAt };
}

export function retentionView(projectId: string, windows: RetentionWindow[]) {
  return {
    project_id: projectId,
    windows: windows.map((w) => ({ content_class: w.contentClass, retention_days: w.retentionDays, updated_by: actorView(w.updatedBy), updated_at: w.updatedAt })),
  };
}

export const refusalView = (r: RefusalCount) => ({
  minute: r.minute,
  content_class: r.contentClass,
  boundary: r.boundary,
  decided_by: r.decider,
  decision: r.decision,
  count: r.count,
});
