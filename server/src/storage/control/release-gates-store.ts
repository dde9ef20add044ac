/**
 * Release series aggregates, release gates and their decisions in the control store (one code path for
 * SQLite and PostgreSQL; docs/evaluations-gates.md). Results are grouped by the database (GROUP BY); the
 * only engine difference is how the execution record's job status is read out of its JSON text.
 */
import { sql, type RawBuilder } from 'kysely';
import type {
  DecisionRecord,
  EvidenceClass,
  ExcludedCounts,
  GateListFilter,
  GateRecord,
  ReleaseAggregate,
  ReleaseGateStore,
  VersionScope,
} from '../../domains/evaluations/releases/store.js';
import type { ControlDb } from './open.js';
import type { ReleaseGateDecisionsTable, ReleaseGatesTable } from './schema.js';
import { isUniqueViolation } from './unique.js';

const toGate = (r: ReleaseGatesTable): GateRecord => ({
  orgId: r.org_id,
  projectId: r.project_id,
  gateId: r.gate_id,
  displayName: r.display_name,
  evaluatorId: r.evaluator_id,
  evaluatorVersion: Number(r.evaluator_version),
  metricName: r.metric_name,
  release: r.release,
  baselineRelease: r.baseline_release,
  minSamples: Number(r.min_samples),
  minMean: r.min_mean === null ? null : Number(r.min_mean),
  maxMean: r.max_mean === null ? null : Number(r.max_mean),
  maxMeanDrop: r.max_mean_drop === null ? null : Number(r.max_mean_drop),
  maxMeanRise: r.max_mean_rise === null ? null : Number(r.max_mean_rise),
  createdAt: r.created_at,
  createdBy: r.created_by,
});

const toDecision = (r: ReleaseGateDecisionsTable): DecisionRecord => ({
  decisionId: r.decision_id,
  projectId: r.project_id,
  gateId: r.gate_id,
  seq: Number(r.seq),
  idempotencyKey: r.idempotency_key,
  decidedAt: r.decided_at,
  decidedBy: r.decided_by,
  outcome: r.outcome,
  reading: r.reading,
  reasons: JSON.parse(r.reasons) as DecisionRecord['reasons'],
  evidence: JSON.parse(r.evidence) as Record<string, unknown>,
});

interface AggregateRow {
  subject_release: string | null;
  n: number | string;
  mean: number | string | null;
  first_at: string;
  last_at: string;
}

const toAggregate = (r: AggregateRow): ReleaseAggregate => ({
  release: r.subject_release,
  sampleCount: Number(r.n),
  mean: Number(r.mean),
  firstObservedAt: r.first_at,
  lastObservedAt: r.last_at,
});

const toExcluded = (rows: { cls: string; n: number | string }[]): ExcludedCounts => {
  const out: ExcludedCounts = {};
  for (const r of rows) if (r.cls !== 'admissible') out[r.cls as Exclude<EvidenceClass, 'admissible'>] = Number(r.n);
  return out;
};

export class KyselyReleaseGateStore implements ReleaseGateStore {
  constructor(
    private readonly db: ControlDb,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  /** The evidence class of a row (see EVIDENCE_CLASSES); `version` is the version the reader is pinned to. */
  private evidenceClass(version: number): RawBuilder<string> {
    const job = this.dialect === 'postgres' ? sql`(execution::json ->> 'job_status')` : sql`json_extract(execution, '$.job_status')`;
    return sql<string>`case
      when evaluator_version = 0 or mode = 'EVALUATION_MODE_LEGACY' or evaluator_id like 'legacy/%' then 'legacy'
      when evaluator_version <> ${version} then 'other_evaluator_version'
      when execution is null then 'no_execution'
      when ${job} = 'FAILED' then 'failed'
      when ${job} = 'CANCELLED' then 'cancelled'
      when ${job} is null or ${job} not in ('COMPLETED', 'PARTIAL') then 'job_status_unknown'
      when mode not in ('EVALUATION_MODE_ON_DEMAND', 'EVALUATION_MODE_SAMPLED') then 'experiment'
      when subject_kind not in ('SUBJECT_KIND_AGENT_RUN', 'SUBJECT_KIND_AGENT_STEP') then 'not_run_or_step'
      when numeric_value is null then 'not_scored'
      else 'admissible' end`;
  }

  /** The version's results in scope, each with its evidence class. */
  private scoped(s: VersionScope) {
    let q = this.db
      .selectFrom('evaluation_results')
      .select(['subject_release', 'numeric_value', 'occurred_at', this.evidenceClass(s.evaluatorVersion).as('cls')])
      .where('project_id', '=', s.projectId)
      .where('evaluator_id', '=', s.evaluatorId)
      .where('evaluator_version', '=', s.evaluatorVersion);
    if (s.metricName !== undefined) q = q.where('metric_name', '=', s.metricName);
    if (s.start !== undefined) q = q.where('occurred_at', '>=', s.start);
    if (s.end !== undefined) q = q.where('occurred_at', '<', s.end);
    return q;
  }

  private aggregateOf(inner: ReturnType<KyselyReleaseGateStore['scoped']>) {
    return this.db
      .selectFrom(inner.as('c'))
      .select([
        'c.subject_release',
        sql<number>`count(*)`.as('n'),
        sql<number>`avg(c.numeric_value)`.as('mean'),
        sql<string>`min(c.occurred_at)`.as('first_at'),
        sql<string>`max(c.occurred_at)`.as('last_at'),
      ])
      .where('c.cls', '=', 'admissible');
  }

  async releasePoints(s: VersionScope, limit: number): Promise<ReleaseAggregate[]> {
    const rows = await this.aggregateOf(this.scoped(s))
      .where('c.subject_release', 'is not', null)
      .groupBy('c.subject_release')
      .orderBy(sql`min(c.occurred_at)`, 'desc')
      .orderBy('c.subject_release', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => toAggregate(r as AggregateRow));
  }

  async unreleased(s: VersionScope): Promise<ReleaseAggregate | undefined> {
    const r = await this.aggregateOf(this.scoped(s)).where('c.subject_release', 'is', null).groupBy('c.subject_release').executeTakeFirst();
    return r && toAggregate(r as AggregateRow);
  }

  async excluded(s: VersionScope): Promise<ExcludedCounts> {
    const rows = await this.db
      .selectFrom(this.scoped(s).as('c'))
      .select(['c.cls', sql<number>`count(*)`.as('n')])
      .where('c.cls', '<>', 'admissible')
      .groupBy('c.cls')
      .execute();
    return toExcluded(rows);
  }

  async releaseEvidence(
    s: { projectId: string; evaluatorId: string; evaluatorVersion: number; metricName: string },
    release: string,
  ): Promise<{ admissible?: ReleaseAggregate; excluded: ExcludedCounts }> {
    // Every version of the evaluator (other versions are counted, not read), and legacy results of its metric.
    const inner = this.db
      .selectFrom('evaluation_results')
      .select(['subject_release', 'numeric_value', 'occurred_at', this.evidenceClass(s.evaluatorVersion).as('cls')])
      .where('project_id', '=', s.projectId)
      .where('subject_release', '=', release)
      .where((eb) =>
        eb.or([
          eb('evaluator_id', '=', s.evaluatorId),
          eb.and([eb('metric_name', '=', s.metricName), eb.or([eb('evaluator_version', '=', 0), eb('mode', '=', 'EVALUATION_MODE_LEGACY'), eb('evaluator_id', 'like', 'legacy/%')])]),
        ]),
      );
    const rows = await this.db
      .selectFrom(inner.as('c'))
      .select([
        'c.cls',
        sql<number>`count(*)`.as('n'),
        sql<number>`avg(c.numeric_value)`.as('mean'),
        sql<string>`min(c.occurred_at)`.as('first_at'),
        sql<string>`max(c.occurred_at)`.as('last_at'),
      ])
      .groupBy('c.cls')
      .execute();
    const ok = rows.find((r) => r.cls === 'admissible');
    return {
      ...(ok ? { admissible: toAggregate({ subject_release: release, n: ok.n, mean: ok.mean, first_at: ok.first_at, last_at: ok.last_at }) } : {}),
      excluded: toExcluded(rows),
    };
  }

  async createGate(g: GateRecord): Promise<boolean> {
    const r = await this.db
      .insertInto('release_gates')
      .values({
        project_id: g.projectId,
        gate_id: g.gateId,
        org_id: g.orgId,
        display_name: g.displayName,
        evaluator_id: g.evaluatorId,
        evaluator_version: g.evaluatorVersion,
        metric_name: g.metricName,
        release: g.release,
        baseline_release: g.baselineRelease,
        min_samples: g.minSamples,
        min_mean: g.minMean,
        max_mean: g.maxMean,
        max_mean_drop: g.maxMeanDrop,
        max_mean_rise: g.maxMeanRise,
        created_at: g.createdAt,
        created_by: g.createdBy,
      })
      .onConflict((oc) => oc.columns(['project_id', 'gate_id']).doNothing())
      .returning('gate_id')
      .executeTakeFirst();
    return r !== undefined;
  }

  async getGate(projectId: string, gateId: string): Promise<GateRecord | undefined> {
    const r = await this.db.selectFrom('release_gates').selectAll().where('project_id', '=', projectId).where('gate_id', '=', gateId).executeTakeFirst();
    return r && toGate(r);
  }

  async listGates(f: GateListFilter, o: { after?: string; limit: number }): Promise<GateRecord[]> {
    let q = this.db.selectFrom('release_gates').selectAll().where('project_id', '=', f.projectId);
    if (f.release !== undefined) q = q.where('release', '=', f.release);
    if (f.evaluatorId !== undefined) q = q.where('evaluator_id', '=', f.evaluatorId);
    if (o.after !== undefined) q = q.where('gate_id', '>', o.after);
    return (await q.orderBy('gate_id', 'asc').limit(o.limit + 1).execute()).map(toGate);
  }

  async findDecision(projectId: string, gateId: string, idempotencyKey: string): Promise<DecisionRecord | undefined> {
    const r = await this.db
      .selectFrom('release_gate_decisions')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('gate_id', '=', gateId)
      .where('idempotency_key', '=', idempotencyKey)
      .executeTakeFirst();
    return r && toDecision(r);
  }

  async appendDecision(d: Omit<DecisionRecord, 'seq'>): Promise<{ decision: DecisionRecord; created: boolean }> {
    // The next seq is read and written in one statement; two concurrent appends may still pick the same
    // one (unique): the loser tries again, unless its idempotency key was taken, which answers that decision.
    for (let attempt = 0; attempt < 20; attempt++) {
      const existing = await this.findDecision(d.projectId, d.gateId, d.idempotencyKey);
      if (existing) return { decision: existing, created: false };
      const next = this.db
        .selectFrom('release_gate_decisions')
        .select([
          sql<string>`${d.decisionId}`.as('decision_id'),
          sql<string>`${d.projectId}`.as('project_id'),
          sql<string>`${d.gateId}`.as('gate_id'),
          sql<number>`coalesce(max(seq), 0) + 1`.as('seq'),
          sql<string>`${d.idempotencyKey}`.as('idempotency_key'),
          sql<string>`${d.decidedAt}`.as('decided_at'),
          sql<string>`${d.decidedBy}`.as('decided_by'),
          sql<string>`${d.outcome}`.as('outcome'),
          sql<string>`${d.reading}`.as('reading'),
          sql<string>`${JSON.stringify(d.reasons)}`.as('reasons'),
          sql<string>`${JSON.stringify(d.evidence)}`.as('evidence'),
        ])
        .where('project_id', '=', d.projectId)
        .where('gate_id', '=', d.gateId);
      try {
        const row = await this.db
          .insertInto('release_gate_decisions')
          .columns(['decision_id', 'project_id', 'gate_id', 'seq', 'idempotency_key', 'decided_at', 'decided_by', 'outcome', 'reading', 'reasons', 'evidence'])
          .expression(next)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { decision: toDecision(row), created: true };
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
      }
    }
    throw new Error(`could not append a decision to gate ${d.gateId}: its sequence kept moving`);
  }

  async decisions(projectId: string, gateId: string, limit: number): Promise<DecisionRecord[]> {
    const rows = await this.db
      .selectFrom('release_gate_decisions')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('gate_id', '=', gateId)
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toDecision);
  }

  async countDecisions(projectId: string, gateId: string): Promise<number> {
    const r = await this.db
      .selectFrom('release_gate_decisions')
      .select(sql<number>`count(*)`.as('n'))
      .where('project_id', '=', projectId)
      .where('gate_id', '=', gateId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
