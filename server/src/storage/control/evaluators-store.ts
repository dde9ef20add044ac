/** Evaluators, their versions and sampling rules in the control store (one code path for SQLite and PostgreSQL). */
import { sql } from 'kysely';
import type {
  EvaluatorHead,
  EvaluatorListFilter,
  EvaluatorStore,
  SamplingRuleFilter,
  SamplingRuleStore,
  SamplingRuleWrite,
  StoredSamplingRule,
} from '../../domains/evaluations/evaluators/store.js';
import type { EvaluatorKind, EvaluatorVersionRecord, SubjectKind } from '../../domains/evaluations/model.js';
import type { ControlDb } from './open.js';
import type { EvaluatorsTable, EvaluatorVersionsTable, SamplingRulesTable } from './schema.js';

const toHead = (r: EvaluatorsTable): EvaluatorHead => ({
  orgId: r.org_id,
  projectId: r.project_id,
  evaluatorId: r.evaluator_id,
  kind: r.kind as EvaluatorKind,
  latestVersion: Number(r.latest_version),
  createdAt: r.created_at,
  createdBy: r.created_by,
});

const toVersion = (r: EvaluatorVersionsTable): EvaluatorVersionRecord => ({
  orgId: r.org_id,
  projectId: r.project_id,
  evaluatorId: r.evaluator_id,
  version: Number(r.version),
  displayName: r.display_name,
  metricName: r.metric_name,
  kind: r.kind as EvaluatorKind,
  configJson: r.config_json,
  createdAt: r.created_at,
  createdBy: r.created_by,
});

const versionRow = (r: EvaluatorVersionRecord): EvaluatorVersionsTable => ({
  project_id: r.projectId,
  evaluator_id: r.evaluatorId,
  version: r.version,
  org_id: r.orgId,
  display_name: r.displayName,
  metric_name: r.metricName,
  kind: r.kind,
  config_json: r.configJson,
  created_at: r.createdAt,
  created_by: r.createdBy,
});

export class KyselyEvaluatorStore implements EvaluatorStore {
  constructor(private readonly db: ControlDb) {}

  async create(head: EvaluatorHead, first: EvaluatorVersionRecord): Promise<void> {
    await this.db
      .insertInto('evaluators')
      .values({
        project_id: head.projectId,
        evaluator_id: head.evaluatorId,
        org_id: head.orgId,
        kind: head.kind,
        latest_version: head.latestVersion,
        created_at: head.createdAt,
        created_by: head.createdBy,
      })
      .execute();
    await this.db.insertInto('evaluator_versions').values(versionRow(first)).execute();
  }

  async lock(projectId: string, evaluatorId: string) {
    // A no-op update takes the row's write lock (PostgreSQL re-reads the row once a concurrent appender
    // commits, so the latest version returned is the committed one); SQLite has one writer at a time.
    const r = await this.db
      .updateTable('evaluators')
      .set({ latest_version: sql<number>`latest_version` })
      .where('project_id', '=', projectId)
      .where('evaluator_id', '=', evaluatorId)
      .returningAll()
      .executeTakeFirst();
    return r && toHead(r);
  }

  async append(r: EvaluatorVersionRecord): Promise<void> {
    await this.db.insertInto('evaluator_versions').values(versionRow(r)).execute();
    await this.db
      .updateTable('evaluators')
      .set({ latest_version: r.version })
      .where('project_id', '=', r.projectId)
      .where('evaluator_id', '=', r.evaluatorId)
      .execute();
  }

  async head(projectId: string, evaluatorId: string) {
    const r = await this.db.selectFrom('evaluators').selectAll().where('project_id', '=', projectId).where('evaluator_id', '=', evaluatorId).executeTakeFirst();
    return r && toHead(r);
  }

  async version(projectId: string, evaluatorId: string, version: number) {
    const r = await this.db
      .selectFrom('evaluator_versions')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('evaluator_id', '=', evaluatorId)
      .where('version', '=', version)
      .executeTakeFirst();
    return r && toVersion(r);
  }

  async list(f: EvaluatorListFilter, opts: { after?: string; limit: number }) {
    let sel = this.db
      .selectFrom('evaluators as e')
      .innerJoin('evaluator_versions as v', (j) =>
        j.onRef('v.project_id', '=', 'e.project_id').onRef('v.evaluator_id', '=', 'e.evaluator_id').onRef('v.version', '=', 'e.latest_version'),
      )
      .selectAll('v')
      .select(['e.latest_version', 'e.created_at as head_created_at', 'e.created_by as head_created_by'])
      .where('e.project_id', '=', f.projectId);
    if (f.kinds) sel = sel.where('e.kind', 'in', f.kinds);
    if (opts.after !== undefined) sel = sel.where('e.evaluator_id', '>', opts.after);
    const rows = await sel.orderBy('e.evaluator_id', 'asc').limit(opts.limit + 1).execute();
    return rows.map((r) => ({
      head: toHead({ ...r, latest_version: r.latest_version, created_at: r.head_created_at, created_by: r.head_created_by }),
      latest: toVersion(r),
    }));
  }
}

const toRule = (r: SamplingRulesTable): StoredSamplingRule => ({
  ruleId: r.rule_id,
  orgId: r.org_id,
  projectId: r.project_id,
  evaluator: { evaluator_id: r.evaluator_id, version: Number(r.evaluator_version) },
  subjectKind: r.subject_kind as SubjectKind,
  samplingRate: Number(r.sampling_rate),
  perTickLimit: Number(r.per_tick_limit),
  enabled: Number(r.enabled) === 1,
  createdAt: r.created_at,
  createdBy: r.created_by,
  updatedAt: r.updated_at,
  updatedBy: r.updated_by,
});

const settable = (w: SamplingRuleWrite) => ({
  evaluator_id: w.evaluator.evaluator_id,
  evaluator_version: w.evaluator.version,
  subject_kind: w.subjectKind,
  sampling_rate: w.samplingRate,
  per_tick_limit: w.perTickLimit,
  enabled: w.enabled ? 1 : 0,
});

export class KyselySamplingRuleStore implements SamplingRuleStore {
  constructor(private readonly db: ControlDb) {}

  async insertIfMissing(r: StoredSamplingRule): Promise<boolean> {
    const inserted = await this.db
      .insertInto('sampling_rules')
      .values({
        project_id: r.projectId,
        rule_id: r.ruleId,
        org_id: r.orgId,
        ...settable(r),
        created_at: r.createdAt,
        created_by: r.createdBy,
        updated_at: r.updatedAt,
        updated_by: r.updatedBy,
      })
      .onConflict((oc) => oc.columns(['project_id', 'rule_id']).doNothing())
      .returning('rule_id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async update(projectId: string, ruleId: string, w: SamplingRuleWrite, updatedAt: string, updatedBy: string): Promise<void> {
    await this.db
      .updateTable('sampling_rules')
      .set({ ...settable(w), updated_at: updatedAt, updated_by: updatedBy })
      .where('project_id', '=', projectId)
      .where('rule_id', '=', ruleId)
      .execute();
  }

  async get(projectId: string, ruleId: string) {
    const r = await this.db.selectFrom('sampling_rules').selectAll().where('project_id', '=', projectId).where('rule_id', '=', ruleId).executeTakeFirst();
    return r && toRule(r);
  }

  async delete(projectId: string, ruleId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('sampling_rules').where('project_id', '=', projectId).where('rule_id', '=', ruleId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async count(projectId: string): Promise<number> {
    const r = await this.db.selectFrom('sampling_rules').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async list(f: SamplingRuleFilter, opts: { after?: string; limit: number }) {
    let sel = this.db.selectFrom('sampling_rules').selectAll().where('project_id', '=', f.projectId);
    if (f.evaluatorId !== undefined) sel = sel.where('evaluator_id', '=', f.evaluatorId);
    if (f.enabled !== undefined) sel = sel.where('enabled', '=', f.enabled ? 1 : 0);
    if (opts.after !== undefined) sel = sel.where('rule_id', '>', opts.after);
    return (await sel.orderBy('rule_id', 'asc').limit(opts.limit + 1).execute()).map(toRule);
  }

  async active() {
    const rows = await this.db
      .selectFrom('sampling_rules as r')
      .innerJoin('projects as p', 'p.id', 'r.project_id')
      .selectAll('r')
      .where('r.enabled', '=', 1)
      .where('r.sampling_rate', '>', 0)
      .where('r.per_tick_limit', '>', 0)
      .where('p.deleted_at', 'is', null)
      .orderBy('r.project_id')
      .orderBy('r.rule_id')
      .execute();
    return rows.map(toRule);
  }
}
