/** Records -> the API's JSON (docs/retention.md). */
import type { Actor, RetentionWindowRecord } from './store.js';

const actorView = (a: Actor) => ({ ...(a.userId !== null ? { user_id: a.userId } : {}), ...(a.apiKeyId !== null ? { api_key_id: a.apiKeyId } : {}) });

export function retentionView(projectId: string, windows: RetentionWindowRecord[]) {
  return {
    project_id: projectId,
    windows: windows.map((w) => ({ signal: w.signal, retention_days: w.retentionDays, updated_by: actorView(w.updatedBy), updated_at: w.updatedAt })),
  };
}
