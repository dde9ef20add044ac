/**
 * Datasets (docs/evaluations-datasets.md): editable metadata, sealed immutable versions of reviewed
 * cases, promotion, removal and deletion.
 *
 * - A dataset id is caller-chosen (a lower-case slug, at most 128). A new dataset has no version; the
 *   first promotion seals version 1. Versions are exact integers from 1; none is ever changed.
 * - Promotion: only human-reviewed runs. Every subject names a run and the id of a judgment recorded in
 *   the same project on that exact run. Every subject is checked (kind, reference, review) before any run
 *   is frozen; one bad subject refuses the whole request and nothing is written.
 * - Freezing a run copies the content classes the content settings allow at the `export` boundary;
 *   the others are named in the case's `withheld_classes` (case.ts).
 * - Promotion seals a new version holding the previous items and the new cases; a case already present
 *   keeps its item (and its first review) and is not added twice. A promotion that adds nothing seals
 *   nothing and answers the latest version with `sealed: false`.
 * - Removal seals a new version without the named items; an item the latest version does not hold is 400.
 * - A dataset with a version cited by a stored score (a dataset-item result under `<dataset>/<version>/`)
 *   cannot be deleted (409).
 * - Sealing is serialized per dataset (the dataset row is locked), so concurrent promotions take
 *   consecutive version numbers and neither loses the other's cases.
 */
import { ApiError, conflict, invalidRequest, notFound, permissionDenied } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock } from '../../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../../storage/control/stores.js';
import { isUniqueViolation } from '../../../storage/control/unique.js';
import { principalRef } from '../../assets/signals.js';
import type { ContentClass } from '../../content/content-keys.js';
import type { ProjectRecord } from '../../projects/store.js';
import { caseId, freezeCase, recordedClasses, type DatasetCase } from './case.js';
import type { DatasetItemRow, DatasetItemWithCase, DatasetRecord, DatasetVersionRecord, ItemReview } from './store.js';

import {
  DATASET_ID_PATTERN,
  MAX_REMOVAL_ITEMS,
  MAX_VERSION_ITEMS,
  MAX_DATASET_VERSIONS,
  EXPORT,
  type DatasetDeps,
  type PromotionSubject,
  type DatasetWithVersions,
  type SealAnswer,
  checkDatasetId,
  checkDisplayName,
  checkDescription,
  checkItemId,
  checkSubjects,
} from './rules.js';

export * from './rules.js';

export class DatasetService {
  constructor(
    private readonly control: ControlStore,
    private readonly deps: DatasetDeps,
    private readonly clock: Clock,
  ) {}

  private now() {
    return this.clock.now().toISOString();
  }

  // ---- metadata

  /** Creates the dataset (no version yet); 409 when the project has the id. */
  async create(caller: Principal, project: ProjectRecord, input: { dataset_id: string; display_name?: string; description?: string }): Promise<DatasetRecord> {
    const datasetId = checkDatasetId(input.dataset_id);
    const displayName = input.display_name === undefined ? datasetId : checkDisplayName(input.display_name);
    const description = input.description === undefined ? '' : checkDescription(input.description);
    const at = this.now();
    const by = principalRef(caller);
    const r: DatasetRecord = {
      orgId: project.orgId,
      projectId: project.id,
      datasetId,
      displayName,
      description,
      latestVersion: 0,
      createdAt: at,
      createdBy: by,
      updatedAt: at,
      updatedBy: by,
    };
    try {
      await this.control.datasets.create(r);
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`dataset ${datasetId} already exists in this project`);
      throw e;
    }
    return r;
  }

  /** Edits display_name and/or description (versions are untouched); 404 when missing. */
  async update(caller: Principal, project: ProjectRecord, datasetIdRaw: string, input: { display_name?: string; description?: string }): Promise<DatasetRecord> {
    const datasetId = checkDatasetId(datasetIdRaw, 'datasetId');
    if (input.display_name === undefined && input.description === undefined) throw invalidRequest('send display_name and/or description to change');
    const set = {
      ...(input.display_name !== undefined ? { displayName: checkDisplayName(input.display_name) } : {}),
      ...(input.description !== undefined ? { description: checkDescription(input.description) } : {}),
      updatedAt: this.now(),
      updatedBy: principalRef(caller),
    };
    const r = await this.control.datasets.update(project.id, datasetId, set);
    if (!r) throw notFound('dataset');
    return r;
  }

  async dataset(projectId: string, datasetIdRaw: string): Promise<DatasetRecord> {
    const datasetId = checkDatasetId(datasetIdRaw, 'datasetId');
    const r = await this.control.datasets.get(projectId, datasetId);
    if (!r) throw notFound('dataset');
    return r;
  }

  /** The dataset, every version (oldest first) and the versions a stored score cites. */
  async get(projectId: string, datasetIdRaw: string): Promise<DatasetWithVersions> {
    const dataset = await this.dataset(projectId, datasetIdRaw);
    const [versions, citedVersions] = await Promise.all([
      this.control.datasets.versions(projectId, dataset.datasetId),
      this.control.datasets.citedVersions(projectId, dataset.datasetId),
    ]);
    return { dataset, versions, citedVersions };
  }

  list(projectId: string, opts: { after?: string; limit: number }): Promise<DatasetRecord[]> {
    return this.control.datasets.list(projectId, opts);
  }

  // ---- versions and items (also the experiments' port)

  /** One sealed version; 404 (`dataset version`) when the dataset or the version is missing. */
  async version(projectId: string, datasetId: string, version: number): Promise<DatasetVersionRecord> {
    if (!new RegExp(DATASET_ID_PATTERN).test(datasetId) || !Number.isSafeInteger(version) || version < 1) throw notFound('dataset version');
    const v = await this.control.datasets.version(projectId, datasetId, version);
    if (!v) throw notFound('dataset version');
    return v;
  }

  /** Every item of a version with its case and review, by position; 404 when the version is missing. */
  async items(projectId: string, datasetId: string, version: number): Promise<Array<{ itemId: string; case: DatasetCase; review: ItemReview }>> {
    await this.version(projectId, datasetId, version);
    const out: DatasetItemWithCase[] = [];
    for (;;) {
      const page = await this.control.datasets.items(projectId, datasetId, version, { afterPosition: out.at(-1)?.position, limit: 1000 });
      out.push(...page);
      if (page.length < 1000) break;
    }
    return out.map((i) => ({ itemId: i.itemId, case: i.case, review: i.review }));
  }

  /** One page of a version's items (`limit + 1` rows to tell a next page). */
  async itemsPage(projectId: string, datasetId: string, version: number, opts: { afterPosition?: number; limit: number }): Promise<DatasetItemWithCase[]> {
    await this.version(projectId, datasetId, version);
    return this.control.datasets.items(projectId, datasetId, version, { afterPosition: opts.afterPosition, limit: opts.limit + 1 });
  }

  /** One item of a version; 404 (`dataset item`) when the version does not hold it. */
  async item(projectId: string, datasetId: string, version: number, itemId: string): Promise<DatasetItemWithCase> {
    await this.version(projectId, datasetId, version);
    const i = await this.control.datasets.item(projectId, datasetId, version, itemId);
    if (!i) throw notFound('dataset item');
    return i;
  }

  // ---- promotion and removal

  /**
   * Promotes reviewed runs. Order: every subject's form; every review (exists in the project, names that
   * exact run); the dataset exists; then each run is frozen; then one transaction seals the version.
   */
  async promote(caller: Principal, project: ProjectRecord, datasetIdRaw: string, subjects: readonly PromotionSubject[]): Promise<SealAnswer> {
    // Promotion admits human-reviewed runs for a person: never an API key, and judgment scope as well.
    if (caller.kind === 'api_key' || !caller.userId)
      throw permissionDenied('promotion is done by a signed-in person (a browser session or a person\'s OAuth access token); an API key cannot promote');
    if (!caller.scopes.has('scores:write')) throw permissionDenied('this request needs scope scores:write as well as evals:write');
    const datasetId = checkDatasetId(datasetIdRaw, 'datasetId');
    const named = checkSubjects(subjects);
    const reviews: ItemReview[] = [];
    for (const [i, s] of named.entries()) {
      const a = await this.deps.reviews.find(project.id, s.annotationId);
      if (!a)
        throw invalidRequest(`subjects[${i}].review_annotation_id names no judgment in this project: record a judgment on the run first and pass its id`, {
          reason: 'review_not_found',
          index: i,
        });
      if (a.runId !== s.runId)
        throw invalidRequest(`subjects[${i}].review_annotation_id is a judgment of another run: the review must name run ${s.runId}`, {
          reason: 'review_of_another_run',
          index: i,
        });
      reviews.push({ annotationId: a.id, reviewerId: a.authorId, reviewedAt: a.createdAt });
    }
    await this.dataset(project.id, datasetId);

    // Freeze every run (reads only); the content policy is asked once per class at `export`.
    const decisions = new Map<ContentClass, boolean>();
    const allowedOf = async (classes: ContentClass[]) => {
      for (const cls of classes) {
        if (!decisions.has(cls)) decisions.set(cls, (await this.deps.policy.decide(project.id, cls, EXPORT)).decision === 'allow');
      }
      return new Set(classes.filter((c) => decisions.get(c)));
    };
    const frozen: { subjectRef: string; itemId: string; case: DatasetCase; review: ItemReview }[] = [];
    for (const [i, s] of named.entries()) {
      const facts = await this.deps.facts.run(project.id, s.runId);
      const rows = await this.deps.steps.steps(project.id, s.runId);
      const c = freezeCase(facts, rows, await allowedOf(recordedClasses(rows)));
      frozen.push({ subjectRef: s.runId, itemId: caseId(c), case: c, review: reviews[i]! });
    }

    return this.control.transaction(async (tx) => {
      const ds = await tx.datasets.lock(project.id, datasetId);
      if (!ds) throw notFound('dataset');
      const previous = ds.latestVersion > 0 ? await tx.datasets.itemRows(project.id, datasetId, ds.latestVersion) : [];
      const held = new Set(previous.map((p) => p.itemId));
      const items: DatasetItemRow[] = [...previous];
      const subjectsOut: NonNullable<SealAnswer['subjects']> = [];
      const newCases = new Map<string, DatasetCase>();
      for (const f of frozen) {
        const added = !held.has(f.itemId);
        subjectsOut.push({ subjectRef: f.subjectRef, itemId: f.itemId, added });
        if (!added) continue;
        held.add(f.itemId);
        items.push({ itemId: f.itemId, position: (items.at(-1)?.position ?? 0) + 1, review: f.review });
        newCases.set(f.itemId, f.case);
      }
      if (newCases.size === 0) {
        const latest = await tx.datasets.version(project.id, datasetId, ds.latestVersion);
        if (!latest) throw new Error(`dataset ${datasetId} has no version ${ds.latestVersion}`);
        return { dataset: ds, version: latest, sealed: false, subjects: subjectsOut };
      }
      if (items.length > MAX_VERSION_ITEMS)
        throw conflict(`the new version would hold ${items.length} items; a version holds at most ${MAX_VERSION_ITEMS} (remove items or use another dataset)`);
      const sealed = await this.seal(tx, caller, ds, items, 'promotion', newCases.size, newCases);
      return { ...sealed, subjects: subjectsOut };
    });
  }

  /** Seals a version without the named items (each must be in the latest version). */
  async remove(caller: Principal, project: ProjectRecord, datasetIdRaw: string, itemIds: readonly string[]): Promise<SealAnswer> {
    const datasetId = checkDatasetId(datasetIdRaw, 'datasetId');
    if (itemIds.length === 0) throw invalidRequest('item_ids must name at least one item');
    if (itemIds.length > MAX_REMOVAL_ITEMS)
      throw invalidRequest(`item_ids names ${itemIds.length} items; at most ${MAX_REMOVAL_ITEMS} may be removed at once (split the request)`, { limit: MAX_REMOVAL_ITEMS });
    const seen = new Set<string>();
    itemIds.forEach((id, i) => {
      checkItemId(id, `item_ids[${i}]`);
      if (seen.has(id)) throw invalidRequest(`item_ids[${i}] names item ${id} twice; name each item once`);
      seen.add(id);
    });
    return this.control.transaction(async (tx) => {
      const ds = await tx.datasets.lock(project.id, datasetId);
      if (!ds) throw notFound('dataset');
      const previous = ds.latestVersion > 0 ? await tx.datasets.itemRows(project.id, datasetId, ds.latestVersion) : [];
      const held = new Set(previous.map((p) => p.itemId));
      const unknown = itemIds.filter((id) => !held.has(id));
      if (unknown.length > 0)
        throw invalidRequest(
          `${unknown.length} of the item_ids are not in the dataset's latest version (${ds.latestVersion === 0 ? 'it has no version yet' : `version ${ds.latestVersion}`}); nothing was removed`,
          { reason: 'unknown_items', unknown_item_ids: unknown.slice(0, 20), latest_version: ds.latestVersion },
        );
      const items = previous.filter((p) => !seen.has(p.itemId));
      return this.seal(tx, caller, ds, items, 'removal', itemIds.length, new Map());
    });
  }

  private async seal(
    tx: ControlStores,
    caller: Principal,
    ds: DatasetRecord,
    items: DatasetItemRow[],
    change: 'promotion' | 'removal',
    changedCount: number,
    newCases: Map<string, DatasetCase>,
  ): Promise<SealAnswer> {
    if (ds.latestVersion >= MAX_DATASET_VERSIONS)
      throw conflict(`dataset ${ds.datasetId} holds ${MAX_DATASET_VERSIONS} versions, the most one dataset may hold: create a new dataset`);
    const at = this.now();
    const by = principalRef(caller);
    const version: DatasetVersionRecord = {
      projectId: ds.projectId,
      datasetId: ds.datasetId,
      version: ds.latestVersion + 1,
      itemCount: items.length,
      change,
      changedCount,
      sealedAt: at,
      sealedBy: by,
    };
    const known = await tx.datasets.knownCases(ds.projectId, [...newCases.keys()]);
    const cases = [...newCases].filter(([id]) => !known.has(id)).map(([id, c]) => ({ caseId: id, case: c }));
    await tx.datasets.seal({ version, items, cases });
    return { dataset: { ...ds, latestVersion: version.version }, version, sealed: true };
  }

  // ---- deletion

  /** Deletes the dataset unless a stored score cites one of its versions (409 naming them); 404 when missing. */
  async delete(project: ProjectRecord, datasetIdRaw: string): Promise<void> {
    const datasetId = checkDatasetId(datasetIdRaw, 'datasetId');
    await this.control.transaction(async (tx) => {
      const ds = await tx.datasets.lock(project.id, datasetId);
      if (!ds) throw notFound('dataset');
      const cited = await tx.datasets.citedVersions(project.id, datasetId);
      if (cited.length > 0) {
        throw new ApiError(409, 'conflict', `dataset ${datasetId} cannot be deleted: stored scores cite its version${cited.length > 1 ? 's' : ''} ${cited.slice(0, 20).join(', ')}`, {
          cited_versions: cited.slice(0, 100),
        });
      }
      await tx.datasets.delete(project.id, datasetId);
    });
  }
}
