/**
 * Metric names, labels and the recorded-content labels withheld from callers without the content scope.
 * The decisions behind these rules are listed in service.ts.
 */
import { permissionDenied } from '../../http/errors.js';
import { contentClassOf, isRecordedContentKey } from '../content/content-keys.js';
import { CONTENT_READ_SCOPE, metadataMarker, refuseContentDimensions, type ContentAccess } from '../content-policy/access.js';
import { METRIC_TYPES } from './request-rules.js';
import type { LabelValues, MetricMetadata, MetricNamesPage, MetricType } from './store.js';

/** `unit` and `description` as the instrument sent them; each absent when it sent none. */
export function metadataFields(m: MetricMetadata | null | undefined): { unit?: string; description?: string } {
  return { ...(m?.unit ? { unit: m.unit } : {}), ...(m?.description ? { description: m.description } : {}) };
}

/** Recorded content is classified by the one table of content keys (domains/content/content-keys.ts). */
export { isRecordedContentKey };

export { CONTENT_READ_SCOPE };

/**
 * Spec: a recorded-content label is shown only when the credential holds `agents:content:read` AND the
 * project's read policy permits its class (the reader's `ContentAccess`). `allow_metadata` keeps the
 * label with each value replaced by the marker naming its size; otherwise it is omitted with all its values.
 */
export function visibleLabels(access: ContentAccess, rows: LabelValues[]): LabelValues[] {
  const out: LabelValues[] = [];
  for (const l of rows) {
    const cls = contentClassOf(l.name);
    const d = cls === undefined ? 'allow' : access.of(cls);
    if (d !== 'allow') access.refused(cls!, d);
    if (d === 'allow') out.push(l);
    else if (d === 'allow_metadata') out.push({ ...l, values: [...new Set(l.values.map(metadataMarker))] });
  }
  return out;
}

/** A filter or group_by on a denied classified dimension is refused before querying. */
export function refuseRecordedContentKeys(access: ContentAccess, keys: string[]): void {
  refuseContentDimensions(access, keys, 'label');
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
