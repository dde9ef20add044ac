/**
 * Metric names, labels and the recorded-content labels withheld from callers without the content scope.
 * The decisions behind these rules are listed in service.ts.
 */
import { permissionDenied } from '../../http/errors.js';
import { isRecordedContentKey } from '../content/content-keys.js';
import type { Principal } from '../../http/principal.js';
import { METRIC_TYPES } from './request-rules.js';
import type { LabelValues, MetricMetadata, MetricNamesPage, MetricType } from './store.js';

/** `unit` and `description` as the instrument sent them; each absent when it sent none. */
export function metadataFields(m: MetricMetadata | null | undefined): { unit?: string; description?: string } {
  return { ...(m?.unit ? { unit: m.unit } : {}), ...(m?.description ? { description: m.description } : {}) };
}

/** Recorded content is classified by the one table of content keys (domains/content/content-keys.ts). */
export { isRecordedContentKey };

export const CONTENT_READ_SCOPE = 'agents:content:read';

/**
 * Spec: recorded content is shown only when the credential holds `agents:content:read` AND the project's
 * read policy permits it. Projects have no content read policy yet, so the policy is taken to permit
 * whenever the scope is held; when content policies land, this is the one place to consult them.
 */
export function mayReadRecordedContent(caller: Principal, _projectId: string): boolean {
  return caller.scopes.has(CONTENT_READ_SCOPE);
}

/** A recorded-content label is omitted with all its values unless the caller may read the content. */
export function visibleLabels(caller: Principal, projectId: string, rows: LabelValues[]): LabelValues[] {
  const showContent = mayReadRecordedContent(caller, projectId);
  return rows.filter((l) => showContent || !isRecordedContentKey(l.name));
}

/** A filter or group_by on a denied classified dimension is refused before querying. */
export function refuseRecordedContentKeys(caller: Principal, projectId: string, keys: string[]): void {
  if (mayReadRecordedContent(caller, projectId)) return;
  const denied = keys.find(isRecordedContentKey);
  if (denied !== undefined) throw permissionDenied(`label "${denied}" holds recorded content; filtering or grouping on it needs ${CONTENT_READ_SCOPE}`);
}

/** A stored type outside the API's list is left out rather than reported as something it is not. */
export function metricNameList(page: MetricNamesPage, retrievedAt: Date) {
  const metrics = page.names.map((n) => ({
    name: n.name,
    ...(n.type !== null && (METRIC_TYPES as readonly string[]).includes(n.type) ? { type: n.type as MetricType } : {}),
    ...metadataFields(n.metadata),
  }));
  return {
    metrics,
    total_count: page.totalCount,
    ...(page.totalCount > metrics.length ? { truncated: true as const } : {}),
    retrieved_at: retrievedAt.toISOString(),
  };
}
