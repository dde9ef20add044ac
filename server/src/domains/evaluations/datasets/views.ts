/** Records -> response shapes of the dataset routes. */
import type { DatasetWithVersions, SealAnswer } from './service.js';
import type { DatasetItemWithCase, DatasetRecord, DatasetVersionRecord } from './store.js';

export function datasetSummaryView(d: DatasetRecord) {
  return {
    project_id: d.projectId,
    dataset_id: d.datasetId,
    display_name: d.displayName,
    description: d.description,
    latest_version: d.latestVersion,
    created_at: d.createdAt,
    created_by: d.createdBy,
    updated_at: d.updatedAt,
    updated_by: d.updatedBy,
  };
}

export function versionView(v: DatasetVersionRecord, cited: boolean) {
  return {
    version: v.version,
    item_count: v.itemCount,
    change: v.change,
    changed_count: v.changedCount,
    sealed_at: v.sealedAt,
    sealed_by: v.sealedBy,
    cited,
  };
}

export function datasetView(d: DatasetWithVersions) {
  const cited = new Set(d.citedVersions);
  return { ...datasetSummaryView(d.dataset), versions: d.versions.map((v) => versionView(v, cited.has(v.version))) };
}

/** A freshly sealed version is not cited yet; an answered existing one may be. */
export function sealView(a: SealAnswer, cited: boolean) {
  return {
    dataset: datasetSummaryView(a.dataset),
    version: versionView(a.version, cited),
    sealed: a.sealed,
    ...(a.subjects ? { subjects: a.subjects.map((s) => ({ subject_ref: s.subjectRef, item_id: s.itemId, added: s.added })) } : {}),
  };
}

export function itemView(i: DatasetItemWithCase) {
  return {
    item_id: i.itemId,
    position: i.position,
    review: { annotation_id: i.review.annotationId, reviewer_id: i.review.reviewerId, reviewed_at: i.review.reviewedAt },
    case: i.case,
  };
}
