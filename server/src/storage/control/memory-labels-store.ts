/** Memory item labels in the control store (one code path for SQLite and PostgreSQL; docs/memory.md). */
import { sql } from 'kysely';
import type {
  MemoryItemClaim,
  MemoryLabelFilter,
  MemoryLabelPosition,
  MemoryLabelRecord,
  MemoryLabelStore,
  MemoryTrustLabel,
} from '../../domains/memory/store.js';
import type { ControlDb } from './open.js';
import type { MemoryLabelsTable } from './schema.js';

const toLabel = (r: MemoryLabelsTable): MemoryLabelRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  itemKey: r.item_key,
  revision: Number(r.revision),
  label: r.label as MemoryTrustLabel,
  reason: r.reason,
  labeledBy: r.labeled_by,
  labeledAt: r.labeled_at,
  signalOpened: Number(r.signal_opened) === 1,
  signalResolved: Number(r.signal_resolved) === 1,
});

export class KyselyMemoryLabelStore implements MemoryLabelStore {
  constructor(private readonly db: ControlDb) {}

  async claim(orgId: string, projectId: string, itemKey: string): Promise<MemoryItemClaim> {
    // The upsert takes the head row's lock (PostgreSQL) or runs in the one writing transaction (SQLite):
    // a second writer of the item waits here and then sees the first one's revision.
    const r = await this.db
      .insertInto('memory_items')
      .values({ project_id: projectId, item_key: itemKey, org_id: orgId, revision: 1, trusted_revision: 0, labeled_at: null })
      .onConflict((oc) => oc.columns(['project_id', 'item_key']).doUpdateSet({ revision: sql<number>`memory_items.revision + 1` }))
      .returning(['revision', 'trusted_revision', 'labeled_at'])
      .executeTakeFirstOrThrow();
    return { revision: Number(r.revision), previousLabeledAt: r.labeled_at, trustedRevision: Number(r.trusted_revision) };
  }

  async append(r: MemoryLabelRecord): Promise<void> {
    await this.db
      .insertInto('memory_labels')
      .values({
        id: r.id,
        org_id: r.orgId,
        project_id: r.projectId,
        item_key: r.itemKey,
        revision: r.revision,
        label: r.label,
        reason: r.reason,
        labeled_by: r.labeledBy,
        labeled_at: r.labeledAt,
        signal_opened: r.signalOpened ? 1 : 0,
        signal_resolved: r.signalResolved ? 1 : 0,
      })
      .execute();
    await this.db
      .updateTable('memory_items')
      .set({ labeled_at: r.labeledAt, ...(r.label === 'MEMORY_TRUST_LABEL_TRUSTED' ? { trusted_revision: r.revision } : {}) })
      .where('project_id', '=', r.projectId)
      .where('item_key', '=', r.itemKey)
      .execute();
  }

  /** The revisions of one item. */
  private ofItem(projectId: string, itemKey: string) {
    return this.db.selectFrom('memory_labels').selectAll().where('project_id', '=', projectId).where('item_key', '=', itemKey);
  }

  async current(projectId: string, itemKey: string) {
    const r = await this.ofItem(projectId, itemKey).orderBy('revision', 'desc').limit(1).executeTakeFirst();
    return r && toLabel(r);
  }

  async history(projectId: string, itemKey: string) {
    return (await this.ofItem(projectId, itemKey).orderBy('revision', 'asc').execute()).map(toLabel);
  }

  async list(f: MemoryLabelFilter, opts: { after?: MemoryLabelPosition; limit: number }) {
    let sel = this.db.selectFrom('memory_labels').selectAll().where('project_id', '=', f.projectId);
    if (f.itemKey !== undefined) sel = sel.where('item_key', '=', f.itemKey);
    if (f.labels) sel = sel.where('label', 'in', f.labels);
    if (opts.after) {
      const { labeledAt, id } = opts.after;
      sel = sel.where((eb) => eb.or([eb('labeled_at', '<', labeledAt), eb.and([eb('labeled_at', '=', labeledAt), eb('id', '<', id)])]));
    }
    const rows = await sel.orderBy('labeled_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toLabel);
  }
}
