/** Stored judgments -> API objects. */
import type { AnnotationView } from './schemas.js';
import type { AnnotationRecord } from './store.js';

export function annotationView(a: AnnotationRecord): AnnotationView {
  return {
    annotation_id: a.id,
    project_id: a.projectId,
    run_id: a.runId,
    metric_name: a.metricName,
    ...(a.numericValue !== null ? { numeric_value: a.numericValue } : {}),
    ...(a.label !== null ? { label: a.label } : {}),
    comment: a.comment,
    author_id: a.authorId,
    created_at: a.createdAt,
  };
}
