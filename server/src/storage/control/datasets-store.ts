/** Datasets, their sealed versions, items and frozen cases in the control store (one code path for SQLite and PostgreSQL). */
import { sql } from 'kysely';
import type { DatasetCase } from '../../domains/evaluations/datasets/case.js';
import type {
  DatasetItemRow,
  DatasetItemWithCase,
  DatasetRecord,
  DatasetStore,
  DatasetVersionRecord,
  SealInput,
  VersionChange,
} from '../../domains/evaluations/datasets/store.js';
import type { ControlDb } from './open.js';
import type { EvaluationDatasetItemsTable, EvaluationDatasetsTable, EvaluationDatasetVersionsTable } from './schema-evaluations.js';

/** Rows per multi-row insert (well under both engines' bound-parameter limits). */
const CHUNK = 500;
const DATASET_ITEM = 'SUBJECT_KIND_DATASET_ITEM';

const toDataset = (r: EvaluationDatasetsTable): DatasetRecord => ({
  orgId: r.org_id,
  projectId: r.project_id,
  datasetId: r.dataset_id,
  displayName: r.display_name,
  description: r.description,
  latestVersion: Number(r.latest_version),
  createdAt: r.created_at,
  createdBy: r.created_by,
  updatedAt: r.updated_at,
  updatedBy: r.updated_by,
});

const toVersion = (r: EvaluationDatasetVersionsTable): DatasetVersionRecord => ({
  projectId: r.project_id,
  datasetId: r.dataset_id,
  version: Number(r.version),
  itemCount: Number(r.item_count),
  change: r.change as VersionChange,
  changedCount: Number(r.changed_count),
  sealedAt: r.sealed_at,
  sealedBy: r.sealed_by,
});

const toItem = (r: Pick<EvaluationDatasetItemsTable, 'item_id' | 'position' | 'review_annotation_id' | 'reviewer_id' | 'reviewed_at'>): DatasetItemRow => ({
  itemId: r.item_id,
  position: Number(r.position),
  review: { annotationId: r.review_annotation_id, reviewerId: r.reviewer_id, reviewedAt: r.reviewed_at },
});

function chunks<T>(xs: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += CHUNK) out.push(xs.slice(i, i + CHUNK));
  return out;
}

export class KyselyDatasetStore implements DatasetStore {
  constructor(private readonly db: ControlDb) {}

  async create(r: DatasetRecord): Promise<void> {
    await this.db
      .insertInto('evaluation_datasets')
      .values({
        project_id: r.projectId,
        dataset_id: r.datasetId,
        org_id: r.orgId,
        display_name: r.displayName,
        description: r.description,
        latest_version: r.latestVersion,
        created_at: r.createdAt,
        created_by: r.createdBy,
        updated_at: r.updatedAt,
        updated_by: r.updatedBy,
      })
      .execute();
  }

  async get(projectId: string, datasetId: string) {
    const r = await this.db.selectFrom('evaluation_datasets').selectAll().where('project_id', '=', projectId).where('dataset_id', '=', datasetId).executeTakeFirst();
    return r && toDataset(r);
  }

  async lock(projectId: string, datasetId: string) {
    // A no-op update takes the row's write lock (PostgreSQL re-reads the row once a concurrent sealer
    // commits, so the latest version returned is the committed one); SQLite has one writer at a time.
    const r = await this.db
      .updateTable('evaluation_datasets')
      .set({ latest_version: sql<number>`latest_version` })
      .where('project_id', '=', projectId)
      .where('dataset_id', '=', datasetId)
      .returningAll()
      .executeTakeFirst();
    return r && toDataset(r);
  }

  async list(projectId: string, opts: { after?: string; limit: number }) {
    let sel = this.db.selectFrom('evaluation_datasets').selectAll().where('project_id', '=', projectId);
    if (opts.after !== undefined) sel = sel.where('dataset_id', '>', opts.after);
    return (await sel.orderBy('dataset_id', 'asc').limit(opts.limit + 1).execute()).map(toDataset);
  }

  async update(projectId: string, datasetId: string, set: { displayName?: string; description?: string; updatedAt: string; updatedBy: string }) {
    const r = await this.db
      .updateTable('evaluation_datasets')
      .set({
        ...(set.displayName !== undefined ? { display_name: set.displayName } : {}),
        ...(set.description !== undefined ? { description: set.description } : {}),
        updated_at: set.updatedAt,
        updated_by: set.updatedBy,
      })
      .where('project_id', '=', projectId)
      .where('dataset_id', '=', datasetId)
      .returningAll()
      .executeTakeFirst();
    return r && toDataset(r);
  }

  async versions(projectId: string, datasetId: string) {
    const rows = await this.db
      .selectFrom('evaluation_dataset_versions')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('dataset_id', '=', datasetId)
      .orderBy('version', 'asc')
      .execute();
    return rows.map(toVersion);
  }

  async version(projectId: string, datasetId: string, version: number) {
    const r = await this.db
      .selectFrom('evaluation_dataset_versions')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('dataset_id', '=', datasetId)
      .where('version', '=', version)
      .executeTakeFirst();
    return r && toVersion(r);
  }

  async itemRows(projectId: string, datasetId: string, version: number) {
    const rows = await this.db
      .selectFrom('evaluation_dataset_items')
      .select(['item_id', 'position', 'review_annotation_id', 'reviewer_id', 'reviewed_at'])
      .where('project_id', '=', projectId)
      .where('dataset_id', '=', datasetId)
      .where('version', '=', version)
      .orderBy('position', 'asc')
      .execute();
    return rows.map(toItem);
  }

  private withCases(projectId: string, datasetId: string, version: number) {
    return this.db
      .selectFrom('evaluation_dataset_items as i')
      .innerJoin('evaluation_dataset_cases as c', (j) => j.onRef('c.project_id', '=', 'i.project_id').onRef('c.case_id', '=', 'i.item_id'))
      .select(['i.item_id', 'i.position', 'i.review_annotation_id', 'i.reviewer_id', 'i.reviewed_at', 'c.case_json'])
      .where('i.project_id', '=', projectId)
      .where('i.dataset_id', '=', datasetId)
      .where('i.version', '=', version);
  }

  async items(projectId: string, datasetId: string, version: number, opts: { afterPosition?: number; limit: number }): Promise<DatasetItemWithCase[]> {
    let sel = this.withCases(projectId, datasetId, version);
    if (opts.afterPosition !== undefined) sel = sel.where('i.position', '>', opts.afterPosition);
    const rows = await sel.orderBy('i.position', 'asc').limit(opts.limit).execute();
    return rows.map((r) => ({ ...toItem(r), case: JSON.parse(r.case_json) as DatasetCase }));
  }

  async item(projectId: string, datasetId: string, version: number, itemId: string) {
    const r = await this.withCases(projectId, datasetId, version).where('i.item_id', '=', itemId).executeTakeFirst();
    return r && { ...toItem(r), case: JSON.parse(r.case_json) as DatasetCase };
  }

  async knownCases(projectId: string, caseIds: string[]) {
    const out = new Set<string>();
    for (const part of chunks(caseIds)) {
      const rows = await this.db.selectFrom('evaluation_dataset_cases').select('case_id').where('project_id', '=', projectId).where('case_id', 'in', part).execute();
      for (const r of rows) out.add(r.case_id);
    }
    return out;
  }

  async seal(s: SealInput): Promise<void> {
    const v = s.version;
    for (const part of chunks(s.cases)) {
      await this.db
        .insertInto('evaluation_dataset_cases')
        .values(part.map((c) => ({ project_id: v.projectId, case_id: c.caseId, case_json: JSON.stringify(c.case) })))
        .execute();
    }
    await this.db
      .insertInto('evaluation_dataset_versions')
      .values({
        project_id: v.projectId,
        dataset_id: v.datasetId,
        version: v.version,
        item_count: v.itemCount,
        change: v.change,
        changed_count: v.changedCount,
        sealed_at: v.sealedAt,
        sealed_by: v.sealedBy,
      })
      .execute();
    for (const part of chunks(s.items)) {
      await this.db
        .insertInto('evaluation_dataset_items')
        .values(
          part.map((i) => ({
            project_id: v.projectId,
            dataset_id: v.datasetId,
            version: v.version,
            item_id: i.itemId,
            position: i.position,
            review_annotation_id: i.review.annotationId,
            reviewer_id: i.review.reviewerId,
            reviewed_at: i.review.reviewedAt,
          })),
        )
        .execute();
    }
    await this.db
      .updateTable('evaluation_datasets')
      .set({ latest_version: v.version })
      .where('project_id', '=', v.projectId)
      .where('dataset_id', '=', v.datasetId)
      .execute();
  }

  async citedVersions(projectId: string, datasetId: string) {
    // A version is cited when a dataset-item result's reference starts with `<datasetId>/<version>/`
    // (compared with substr, so no character of the id acts as a pattern).
    const prefix = `${datasetId}/`;
    const rows = await this.db
      .selectFrom('evaluation_dataset_versions as v')
      .select('v.version')
      .where('v.project_id', '=', projectId)
      .where('v.dataset_id', '=', datasetId)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('evaluation_results as r')
            .select(sql`1`.as('one'))
            .whereRef('r.project_id', '=', 'v.project_id')
            .where('r.subject_kind', '=', DATASET_ITEM)
            .where(
              sql`substr(r.subject_ref, 1, length(cast(${prefix} as text)) + length(cast(v.version as text)) + 1)`,
              '=',
              sql`cast(${prefix} as text) || cast(v.version as text) || '/'`,
            ),
        ),
      )
      .orderBy('v.version', 'asc')
      .execute();
    return rows.map((r) => Number(r.version));
  }

  async delete(projectId: string, datasetId: string): Promise<void> {
    const held = await this.db
      .selectFrom('evaluation_dataset_items')
      .select('item_id')
      .distinct()
      .where('project_id', '=', projectId)
      .where('dataset_id', '=', datasetId)
      .execute();
    await this.db.deleteFrom('evaluation_dataset_items').where('project_id', '=', projectId).where('dataset_id', '=', datasetId).execute();
    await this.db.deleteFrom('evaluation_dataset_versions').where('project_id', '=', projectId).where('dataset_id', '=', datasetId).execute();
    await this.db.deleteFrom('evaluation_datasets').where('project_id', '=', projectId).where('dataset_id', '=', datasetId).execute();
    // Cases no other dataset of the project holds go too.
    for (const part of chunks(held.map((h) => h.item_id))) {
      await this.db
        .deleteFrom('evaluation_dataset_cases as c')
        .where('c.project_id', '=', projectId)
        .where('c.case_id', 'in', part)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('evaluation_dataset_items as i').select(sql`1`.as('one')).whereRef('i.project_id', '=', 'c.project_id').whereRef('i.item_id', '=', 'c.case_id'))),
        )
        .execute();
    }
  }
}
