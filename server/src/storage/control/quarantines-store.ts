import type {
  Actor,
  CredentialOutcome,
  QuarantineListQuery,
  QuarantineRecord,
  QuarantineStore,
  Transition,
} from '../../domains/quarantines/store.js';
import type { CredentialEffect, EnforcementState, QuarantineAction, QuarantineStatus, TargetKind } from '../../domains/quarantines/model.js';
import type { ControlDb } from './open.js';
import type { QuarantinesTable } from './schema.js';
import { isUniqueViolation } from './unique.js';

const OPEN: QuarantineStatus[] = ['pending', 'active'];
const openTarget = (r: Pick<QuarantineRecord, 'targetKind' | 'target'>) => `${r.targetKind}:${r.target}`;
const actor = (userId: string | null, apiKeyId: string | null, when: string | null): Actor | null => (when === null ? null : { userId, apiKeyId });

const toRecord = (r: QuarantinesTable): QuarantineRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  status: r.status as QuarantineStatus,
  action: r.action as QuarantineAction,
  targetKind: r.target_kind as TargetKind,
  target: r.target,
  reason: r.reason,
  environment: r.environment,
  requestId: r.request_id,
  requestedBy: { userId: r.requested_by_user_id, apiKeyId: r.requested_by_api_key_id },
  requestedAt: r.requested_at,
  approvedBy: actor(r.approved_by_user_id, r.approved_by_api_key_id, r.approved_at),
  approvedAt: r.approved_at,
  liftedBy: actor(r.lifted_by_user_id, r.lifted_by_api_key_id, r.lifted_at),
  liftedAt: r.lifted_at,
  liftReason: r.lift_reason,
  withdrawnBy: actor(r.withdrawn_by_user_id, r.withdrawn_by_api_key_id, r.withdrawn_at),
  withdrawnAt: r.withdrawn_at,
  withdrawReason: r.withdraw_reason,
  unenforceableSightings: Number(r.unenforceable_sightings),
});

export class KyselyQuarantineStore implements QuarantineStore {
  constructor(private readonly db: ControlDb) {}

  async insert(r: QuarantineRecord, agent?: string) {
    try {
      await this.db
        .insertInto('quarantines')
        .values({
          id: r.id,
          org_id: r.orgId,
          project_id: r.projectId,
          status: r.status,
          action: r.action,
          target_kind: r.targetKind,
          target: r.target,
          reason: r.reason,
          environment: r.environment,
          request_id: r.requestId,
          open_target: OPEN.includes(r.status) ? (agent ?? openTarget(r)) : null,
          requested_by_user_id: r.requestedBy.userId,
          requested_by_api_key_id: r.requestedBy.apiKeyId,
          requested_at: r.requestedAt,
          approved_by_user_id: null,
          approved_by_api_key_id: null,
          approved_at: null,
          lifted_by_user_id: null,
          lifted_by_api_key_id: null,
          lifted_at: null,
          lift_reason: null,
          withdrawn_by_user_id: null,
          withdrawn_by_api_key_id: null,
          withdrawn_at: null,
          withdraw_reason: null,
          unenforceable_sightings: r.unenforceableSightings,
        })
        .execute();
      return 'inserted' as const;
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      if (r.requestId !== null && (await this.findByRequestId(r.orgId, r.requestId))) return 'request_id_taken' as const;
      return 'target_taken' as const;
    }
  }

  async find(orgId: string, id: string) {
    const r = await this.db.selectFrom('quarantines').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async findByRequestId(orgId: string, requestId: string) {
    const r = await this.db.selectFrom('quarantines').selectAll().where('org_id', '=', orgId).where('request_id', '=', requestId).executeTakeFirst();
    return r && toRecord(r);
  }

  async list(q: QuarantineListQuery) {
    let s = this.db.selectFrom('quarantines').selectAll().where('org_id', '=', q.orgId);
    if (q.projectId !== undefined) s = s.where('project_id', '=', q.projectId);
    if (q.statuses?.length) s = s.where('status', 'in', q.statuses);
    if (q.after) {
      const a = q.after;
      s = s.where((eb) => eb.or([eb('requested_at', '<', a.requestedAt), eb.and([eb('requested_at', '=', a.requestedAt), eb('id', '<', a.id)])]));
    }
    const rows = await s.orderBy('requested_at', 'desc').orderBy('id', 'desc').limit(q.limit + 1).execute();
    return rows.map(toRecord);
  }

  async transition(id: string, from: QuarantineStatus, t: Transition) {
    const by = t.by;
    const set =
      t.to === 'active'
        ? { status: 'active', approved_by_user_id: by.userId, approved_by_api_key_id: by.apiKeyId, approved_at: t.at }
        : t.to === 'lifted'
          ? { status: 'lifted', open_target: null, lifted_by_user_id: by.userId, lifted_by_api_key_id: by.apiKeyId, lifted_at: t.at, lift_reason: t.reason }
          : { status: 'withdrawn', open_target: null, withdrawn_by_user_id: by.userId, withdrawn_by_api_key_id: by.apiKeyId, withdrawn_at: t.at, withdraw_reason: t.reason };
    // The state is part of the condition: of two concurrent moves from one state, exactly one wins.
    const res = await this.db.updateTable('quarantines').set(set).where('id', '=', id).where('status', '=', from).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async openOfProject(projectId: string) {
    const rows = await this.db.selectFrom('quarantines').selectAll().where('project_id', '=', projectId).where('open_target', 'is not', null).execute();
    return rows.map(toRecord);
  }

  async activeKills(projectId: string) {
    const rows = await this.db
      .selectFrom('quarantines')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('open_target', 'is not', null)
      .where('status', '=', 'active')
      .where('action', '=', 'kill')
      .execute();
    return rows.map(toRecord);
  }

  async setUnenforceableSightings(id: string, n: number) {
    await this.db.updateTable('quarantines').set({ unenforceable_sightings: n }).where('id', '=', id).execute();
  }

  async putOutcome(o: CredentialOutcome) {
    const values = { effect: o.effect, state: o.state, detail_code: o.detailCode, enforced_at: o.enforcedAt, released_at: o.releasedAt };
    await this.db
      .insertInto('quarantine_credentials')
      .values({ quarantine_id: o.quarantineId, api_key_id: o.apiKeyId, ...values })
      .onConflict((oc) => oc.columns(['quarantine_id', 'api_key_id']).doUpdateSet(values))
      .execute();
  }

  async outcomes(quarantineIds: string[]) {
    if (quarantineIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('quarantine_credentials')
      .selectAll()
      .where('quarantine_id', 'in', quarantineIds)
      .orderBy('quarantine_id')
      .orderBy('api_key_id')
      .execute();
    return rows.map((r) => ({
      quarantineId: r.quarantine_id,
      apiKeyId: r.api_key_id,
      effect: r.effect as CredentialEffect,
      state: r.state as EnforcementState,
      detailCode: r.detail_code,
      enforcedAt: r.enforced_at,
      releasedAt: r.released_at,
    }));
  }

  async releaseHolds(quarantineId: string, at: string) {
    const held = await this.db
      .updateTable('quarantine_credentials')
      .set({ released_at: at })
      .where('quarantine_id', '=', quarantineId)
      .where('effect', '=', 'freeze')
      .where('released_at', 'is', null)
      .returning('api_key_id')
      .execute();
    return held.map((r) => r.api_key_id);
  }

  async otherHolds(apiKeyIds: string[], exceptQuarantineId: string) {
    if (apiKeyIds.length === 0) return new Set<string>();
    const rows = await this.db
      .selectFrom('quarantine_credentials')
      .select('api_key_id')
      .where('api_key_id', 'in', apiKeyIds)
      .where('quarantine_id', '<>', exceptQuarantineId)
      .where('effect', '=', 'freeze')
      .where('state', '<>', 'failed')
      .where('released_at', 'is', null)
      .execute();
    return new Set(rows.map((r) => r.api_key_id));
  }
}
