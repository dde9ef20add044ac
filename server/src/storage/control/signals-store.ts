/** Review signals and the notification outbox in the control store (one code path for SQLite and PostgreSQL). */
import type { OutboxRecord, OutboxStore, SignalFilter, SignalKind, SignalPosition, SignalRecord, SignalStatus, SignalStore } from '../../domains/assets/store.js';
import type { ControlDb } from './open.js';
import type { NotificationOutboxTable, ReviewSignalsTable } from './schema.js';

const signalRow = (s: SignalRecord): ReviewSignalsTable => ({
  id: s.id,
  org_id: s.orgId,
  project_id: s.projectId,
  dedup_key: s.dedupKey,
  kind: s.kind,
  status: s.status,
  severity: s.severity,
  subject_ref: s.subjectRef,
  detail_code: s.detailCode,
  asset_id: s.assetId,
  evidence_ref: s.evidenceRef,
  opened_at: s.openedAt,
  last_seen_at: s.lastSeenAt,
  acknowledged_by: s.acknowledgedBy,
  acknowledged_at: s.acknowledgedAt,
  resolved_by: s.resolvedBy,
  resolved_at: s.resolvedAt,
  resolution_code: s.resolutionCode,
  resolution_reason: s.resolutionReason,
});

const toSignal = (r: ReviewSignalsTable): SignalRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  dedupKey: r.dedup_key,
  kind: r.kind as SignalRecord['kind'],
  status: r.status as SignalRecord['status'],
  severity: r.severity as SignalRecord['severity'],
  subjectRef: r.subject_ref,
  detailCode: r.detail_code,
  assetId: r.asset_id,
  evidenceRef: r.evidence_ref,
  openedAt: r.opened_at,
  lastSeenAt: r.last_seen_at,
  acknowledgedBy: r.acknowledged_by,
  acknowledgedAt: r.acknowledged_at,
  resolvedBy: r.resolved_by,
  resolvedAt: r.resolved_at,
  resolutionCode: r.resolution_code,
  resolutionReason: r.resolution_reason,
});

const ACTIVE: SignalStatus[] = ['REVIEW_SIGNAL_STATUS_OPEN', 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED'];

export class KyselySignalStore implements SignalStore {
  constructor(private readonly db: ControlDb) {}

  async insertIfNew(s: SignalRecord) {
    const r = await this.db
      .insertInto('review_signals')
      .values(signalRow(s))
      .onConflict((oc) => oc.columns(['project_id', 'dedup_key']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async findByDedup(projectId: string, dedupKey: string) {
    const r = await this.db.selectFrom('review_signals').selectAll().where('project_id', '=', projectId).where('dedup_key', '=', dedupKey).executeTakeFirst();
    return r && toSignal(r);
  }

  async find(id: string) {
    const r = await this.db.selectFrom('review_signals').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toSignal(r);
  }

  async touch(id: string, lastSeenAt: string) {
    await this.db
      .updateTable('review_signals')
      .set({ last_seen_at: lastSeenAt })
      .where('id', '=', id)
      .where('status', 'in', ACTIVE)
      .where('last_seen_at', '<', lastSeenAt)
      .execute();
  }

  async activeCounts(projectId: string, assetIds: string[]) {
    if (assetIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('review_signals')
      .select(['asset_id', 'severity'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .where('asset_id', 'in', assetIds)
      .where('status', 'in', ACTIVE)
      .groupBy(['asset_id', 'severity'])
      .execute();
    return rows.map((r) => ({ assetId: String(r.asset_id), severity: r.severity, n: Number(r.n) }));
  }

  async activeOfAsset(assetId: string, kinds: readonly SignalKind[]) {
    const rows = await this.db
      .selectFrom('review_signals')
      .selectAll()
      .where('asset_id', '=', assetId)
      .where('kind', 'in', [...kinds])
      .where('status', 'in', ACTIVE)
      .orderBy('id')
      .execute();
    return rows.map(toSignal);
  }

  async transition(s: SignalRecord, from: readonly SignalStatus[]) {
    const r = await this.db
      .updateTable('review_signals')
      .set({
        status: s.status,
        acknowledged_by: s.acknowledgedBy,
        acknowledged_at: s.acknowledgedAt,
        resolved_by: s.resolvedBy,
        resolved_at: s.resolvedAt,
        resolution_code: s.resolutionCode,
        resolution_reason: s.resolutionReason,
      })
      .where('id', '=', s.id)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async list(f: SignalFilter, opts: { after?: SignalPosition; limit: number }) {
    let sel = this.db.selectFrom('review_signals').selectAll().where('project_id', '=', f.projectId);
    if (f.statuses) sel = sel.where('status', 'in', f.statuses);
    if (f.kinds) sel = sel.where('kind', 'in', f.kinds);
    if (f.severities) sel = sel.where('severity', 'in', f.severities);
    if (f.assetId !== undefined) sel = sel.where('asset_id', '=', f.assetId);
    if (opts.after) {
      const { lastSeenAt, id } = opts.after;
      sel = sel.where((eb) => eb.or([eb('last_seen_at', '<', lastSeenAt), eb.and([eb('last_seen_at', '=', lastSeenAt), eb('id', '<', id)])]));
    }
    const rows = await sel.orderBy('last_seen_at', 'desc').orderBy('id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toSignal);
  }
}

const toOutbox = (r: NotificationOutboxTable): OutboxRecord => ({
  id: r.id,
  seq: Number(r.seq),
  orgId: r.org_id,
  projectId: r.project_id,
  source: r.source as OutboxRecord['source'],
  event: r.event as OutboxRecord['event'],
  signalId: r.signal_id,
  kind: r.kind as OutboxRecord['kind'],
  severity: r.severity as OutboxRecord['severity'],
  subjectRef: r.subject_ref,
  assetId: r.asset_id,
  occurredAt: r.occurred_at,
  payload: JSON.parse(r.payload) as SignalRecord,
  deliveredAt: r.delivered_at,
});

export class KyselyOutboxStore implements OutboxStore {
  constructor(private readonly db: ControlDb) {}

  async append(r: OutboxRecord) {
    await this.db
      .insertInto('notification_outbox')
      .values({
        id: r.id,
        seq: r.seq,
        org_id: r.orgId,
        project_id: r.projectId,
        source: r.source,
        event: r.event,
        signal_id: r.signalId,
        kind: r.kind,
        severity: r.severity,
        subject_ref: r.subjectRef,
        asset_id: r.assetId,
        occurred_at: r.occurredAt,
        payload: JSON.stringify(r.payload),
        delivered_at: r.deliveredAt,
      })
      .execute();
  }

  async list(projectId: string, opts: { after?: { seq: number; id: string }; limit: number }) {
    let sel = this.db.selectFrom('notification_outbox').selectAll().where('project_id', '=', projectId);
    if (opts.after) {
      const { seq, id } = opts.after;
      sel = sel.where((eb) => eb.or([eb('seq', '>', seq), eb.and([eb('seq', '=', seq), eb('id', '>', id)])]));
    }
    const rows = await sel.orderBy('seq', 'asc').orderBy('id', 'asc').limit(opts.limit + 1).execute();
    return rows.map(toOutbox);
  }
}
