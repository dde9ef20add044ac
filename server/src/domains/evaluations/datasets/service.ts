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
import { ApiError, conflict, invalidRequest, notFound } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock } from '../../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../../storage/control/stores.js';
import { isUniqueViolation } from '../../../storage/control/unique.js';
import { principalRef } from '../../assets/signals.js';
import type { AgentRunsStore } from '../../agent-runs/store.js';
import { RUN_ID_PATTERN } from '../../agent-runs/request-rules.js';
import type { ContentClass } from '../../content/content-keys.js';
import type { Boundary } from '../../content-policy/model.js';
import type { Decided } from '../../content-policy/service.js';
import type { ProjectRecord } from '../../projects/store.js';
import type { AnnotationRecord } from '../annotations/store.js';
import { SUBJECT_KINDS } from '../model.js';
import type { SubjectFactsReader } from '../ports.js';
import { CASE_ID, caseId, freezeCase, recordedClasses, type DatasetCase } from './case.js';
import type { DatasetItemRow, DatasetItemWithCase, DatasetRecord, DatasetVersionRecord, ItemReview } from './store.js';

export const DATASET_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,127}$';
export const MAX_DISPLAY_NAME = 200;
export const MAX_DESCRIPTION = 4000;
/** Subjects one promotion may name. */
export const MAX_PROMOTION_SUBJECTS = 100;
/** Items one removal may name. */
export const MAX_REMOVAL_ITEMS = 1000;
/** Items one version may hold. */
export const MAX_VERSION_ITEMS = 10_000;
/** Versions one dataset may hold. */
export const MAX_DATASET_VERSIONS = 1000;
export const DATASET_PAGE = { default: 50, max: 200 };
export const ITEM_PAGE = { default: 50, max: 200 };
/** The largest version number a path may name (a 32-bit signed integer). */
export const MAX_VERSION_NUMBER = 2_147_483_647;
/** The one subject kind a dataset holds. */
export const PROMOTABLE_KIND = 'SUBJECT_KIND_AGENT_RUN';

const RUN_ID = new RegExp(RUN_ID_PATTERN);
const EXPORT: Boundary = 'export';

/** What the service reads beside the control store. */
export interface DatasetDeps {
  /** Recorded human judgments (the annotations service). */
  reviews: { find(projectId: string, annotationId: string): Promise<AnnotationRecord | undefined> };
  /** A run's facts (scoring/facts.ts); 404 when the project has no such run. */
  facts: Pick<SubjectFactsReader, 'run'>;
  /** A run's stored steps with their attributes (the agent-runs store). */
  steps: Pick<AgentRunsStore, 'steps'>;
  /** The content policy's decision for one class at one boundary. */
  policy: { decide(projectId: string, contentClass: ContentClass, boundary: Boundary): Promise<Decided> };
}

export interface PromotionSubject {
  subject_kind: string;
  subject_ref: string;
  review_annotation_id: string;
}

export interface DatasetWithVersions {
  dataset: DatasetRecord;
  versions: DatasetVersionRecord[];
  citedVersions: number[];
}

export interface SealAnswer {
  dataset: DatasetRecord;
  version: DatasetVersionRecord;
  sealed: boolean;
  /** Promotion: the item id of each subject, in request order, and whether it was new to the dataset. */
  subjects?: { subjectRef: string; itemId: string; added: boolean }[];
}

export function checkDatasetId(id: string, field = 'dataset_id'): string {
  if (typeof id !== 'string' || !new RegExp(DATASET_ID_PATTERN).test(id))
    throw invalidRequest(`${field} must match ${DATASET_ID_PATTERN} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
  return id;
}

function checkDisplayName(v: string): string {
  if (v.trim() === '') throw invalidRequest('display_name must not be blank');
  if (v.length > MAX_DISPLAY_NAME) throw invalidRequest(`display_name is at most ${MAX_DISPLAY_NAME} characters`);
  if (v.includes('\u0000')) throw invalidRequest('display_name must not contain the NUL character');
  return v;
}

function checkDescription(v: string): string {
  if (v.length > MAX_DESCRIPTION) throw invalidRequest(`description is at most ${MAX_DESCRIPTION} characters`);
  if (v.includes('\u0000')) throw invalidRequest('description must not contain the NUL character');
  return v;
}

/** A dataset version named in a path: an exact integer of at least 1 (no alias; 0 is no version). */
export function parseDatasetVersion(raw: string): number {
  if (raw === 'latest') throw invalidRequest('there is no "latest" alias: name an exact version (the dataset shows its latest_version)');
  if (raw === '0') throw invalidRequest('dataset versions start at 1: version 0 names no version');
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > MAX_VERSION_NUMBER) throw invalidRequest(`version must be an exact integer from 1 to ${MAX_VERSION_NUMBER}`);
  return Number(raw);
}

export function checkItemId(id: string, field = 'itemId'): string {
  if (typeof id !== 'string' || !CASE_ID.test(id)) throw invalidRequest(`${field} must be a case id: 64 lower-case hexadecimal characters`);
  return id;
}

/** Checks every subject (kind, run reference, review id form) before anything is read. */
function checkSubjects(subjects: readonly PromotionSubject[]): { runId: string; annotationId: string }[] {
  if (subjects.length === 0) throw invalidRequest('subjects must name at least one reviewed run');
  if (subjects.length > MAX_PROMOTION_SUBJECTS)
    throw invalidRequest(`subjects names ${subjects.length} runs; at most ${MAX_PROMOTION_SUBJECTS} may be promoted at once (split the request)`, {
      limit: MAX_PROMOTION_SUBJECTS,
    });
  const seen = new Map<string, number>();
  return subjects.map((s, i) => {
    if (s.subject_kind !== PROMOTABLE_KIND) {
      const known = (SUBJECT_KINDS as readonly string[]).includes(s.subject_kind);
      const what = s.subject_kind === 'SUBJECT_KIND_UNSPECIFIED' ? 'is unspecified' : known ? 'cannot be promoted' : 'is not recognized';
      throw invalidRequest(`subjects[${i}].subject_kind "${String(s.subject_kind).slice(0, 64)}" ${what}; the accepted value is ${PROMOTABLE_KIND} (a dataset holds reviewed agent runs)`, {
        accepted: [PROMOTABLE_KIND],
      });
    }
    if (!RUN_ID.test(s.subject_ref)) throw invalidRequest(`subjects[${i}].subject_ref must be a run id: 32 hexadecimal characters`);
    const runId = s.subject_ref.toLowerCase();
    const first = seen.get(runId);
    if (first !== undefined) throw invalidRequest(`subjects[${i}] names run ${runId} again (subjects[${first}]); name each run once`);
    seen.set(runId, i);
    if (s.review_annotation_id.trim() === '') throw invalidRequest(`subjects[${i}].review_annotation_id must name the judgment recorded on the run`);
    return { runId, annotationId: s.review_annotation_id };
  });
}

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
