/**
 * The datasets port (docs/evaluations-datasets.md). A dataset has editable metadata and sealed,
 * immutable versions 1, 2, ...; each version is a set of items, each item one case (stored once per
 * project, shared by every version holding it) with the review that admitted it. Times are ISO 8601
 * text (UTC, milliseconds).
 */
import type { DatasetCase } from './case.js';

export interface DatasetRecord {
  orgId: string;
  projectId: string;
  datasetId: string;
  displayName: string;
  description: string;
  /** 0 until the first version is sealed. */
  latestVersion: number;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
}

/** What sealed a version. */
export const VERSION_CHANGES = ['promotion', 'removal'] as const;
export type VersionChange = (typeof VERSION_CHANGES)[number];

export interface DatasetVersionRecord {
  projectId: string;
  datasetId: string;
  version: number;
  itemCount: number;
  change: VersionChange;
  /** Items the change added (promotion) or removed (removal). */
  changedCount: number;
  sealedAt: string;
  sealedBy: string;
}

/** The review that admitted a case to a dataset (not part of the case). */
export interface ItemReview {
  annotationId: string;
  reviewerId: string;
  reviewedAt: string;
}

/** One item of a version, as stored: the case is kept once per project by its id. */
export interface DatasetItemRow {
  /** The case id (an item id is its case id: a version holds a case at most once). */
  itemId: string;
  /** 1-based position within the version (kept from version to version; new items are appended). */
  position: number;
  review: ItemReview;
}

export interface DatasetItemWithCase extends DatasetItemRow {
  case: DatasetCase;
}

export interface SealInput {
  version: DatasetVersionRecord;
  /** Every item of the new version. */
  items: DatasetItemRow[];
  /** Cases not yet stored (stored unless the project already has the id). */
  cases: { caseId: string; case: DatasetCase }[];
}

export interface DatasetStore {
  /** Inserts the dataset; a unique violation when the project has the id. */
  create(r: DatasetRecord): Promise<void>;
  get(projectId: string, datasetId: string): Promise<DatasetRecord | undefined>;
  /**
   * The dataset with its row locked until the transaction ends (PostgreSQL) or inside the one writing
   * transaction (SQLite): concurrent sealers of one dataset are serialized. Call inside a transaction.
   */
  lock(projectId: string, datasetId: string): Promise<DatasetRecord | undefined>;
  /** By dataset id, after `after`, at most `limit` (+1 to tell a next page). */
  list(projectId: string, opts: { after?: string; limit: number }): Promise<DatasetRecord[]>;
  /** Sets the editable metadata; undefined when missing. */
  update(projectId: string, datasetId: string, set: { displayName?: string; description?: string; updatedAt: string; updatedBy: string }): Promise<DatasetRecord | undefined>;
  /** Every version, oldest first. */
  versions(projectId: string, datasetId: string): Promise<DatasetVersionRecord[]>;
  version(projectId: string, datasetId: string, version: number): Promise<DatasetVersionRecord | undefined>;
  /** Every item of the version (no case bodies), by position. */
  itemRows(projectId: string, datasetId: string, version: number): Promise<DatasetItemRow[]>;
  /** Items with their cases, by position, after `afterPosition`; at most `limit`. */
  items(projectId: string, datasetId: string, version: number, opts: { afterPosition?: number; limit: number }): Promise<DatasetItemWithCase[]>;
  /** One item with its case. */
  item(projectId: string, datasetId: string, version: number, itemId: string): Promise<DatasetItemWithCase | undefined>;
  /** Which of these case ids the project already stores. */
  knownCases(projectId: string, caseIds: string[]): Promise<Set<string>>;
  /** Writes the version, its items and new cases, and moves the dataset's latest version. Call inside a transaction after `lock`. */
  seal(s: SealInput): Promise<void>;
  /** Versions of the dataset cited by a stored score (a dataset-item result `<datasetId>/<version>/...`), ascending. */
  citedVersions(projectId: string, datasetId: string): Promise<number[]>;
  /** Deletes the dataset, its versions and items (cases no version holds any more are deleted too). Call inside a transaction. */
  delete(projectId: string, datasetId: string): Promise<void>;
}
