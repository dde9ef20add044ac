/**
 * The store port of release series and release gates (docs/evaluations-gates.md): aggregates of one
 * evaluator version's stored results by release (computed by the database, never row by row here), the
 * gates, and their appended decisions.
 */

/**
 * How a stored result counts for a release series or a gate. Only `admissible` is evidence: a scored
 * (numeric) result of the exact evaluator version, produced on demand or by sampling on a production
 * run or step, with an execution record whose job ended COMPLETED or PARTIAL. Every other class is
 * counted and reported, never averaged.
 */
export const EVIDENCE_CLASSES = [
  'admissible',
  /** Recorded before evaluators existed (version 0, a `legacy/` evaluator id, or the legacy mode). */
  'legacy',
  /** Written before the execution record existed. */
  'no_execution',
  'failed',
  'cancelled',
  /** An execution record with a job status outside the known ones. */
  'job_status_unknown',
  /** Produced by an experiment over a dataset, not on production traffic. */
  'experiment',
  /** A session, turn or dataset item: a release series reads runs and steps. */
  'not_run_or_step',
  /** A label without a numeric value: nothing to average. */
  'not_scored',
  /** Another version of the same evaluator: not this version's evidence (never makes a reading INADMISSIBLE). */
  'other_evaluator_version',
] as const;
export type EvidenceClass = (typeof EVIDENCE_CLASSES)[number];
export type ExcludedCounts = Partial<Record<Exclude<EvidenceClass, 'admissible'>, number>>;

/** Which results a series reads: one exact evaluator version of a project, optionally one metric and a window on occurred_at. */
export interface VersionScope {
  projectId: string;
  evaluatorId: string;
  evaluatorVersion: number;
  metricName?: string;
  /** Half-open window on `occurred_at` (ISO text of the stored format). */
  start?: string;
  end?: string;
}

/** The admissible results of one release (or of the runs that declared none). */
export interface ReleaseAggregate {
  /** Null: the runs that declared no release. */
  release: string | null;
  sampleCount: number;
  mean: number;
  firstObservedAt: string;
  lastObservedAt: string;
}

export interface GateRecord {
  orgId: string;
  projectId: string;
  gateId: string;
  displayName: string;
  evaluatorId: string;
  evaluatorVersion: number;
  metricName: string;
  release: string;
  baselineRelease: string | null;
  minSamples: number;
  minMean: number | null;
  maxMean: number | null;
  maxMeanDrop: number | null;
  maxMeanRise: number | null;
  createdAt: string;
  createdBy: string;
}

export interface GateListFilter {
  projectId: string;
  release?: string;
  evaluatorId?: string;
}

export interface DecisionRecord {
  decisionId: string;
  projectId: string;
  gateId: string;
  /** 1, 2, ... per gate, in the order decisions were appended (set by the store). */
  seq: number;
  idempotencyKey: string;
  decidedAt: string;
  decidedBy: string;
  outcome: string;
  reading: string;
  reasons: { code: string; message: string }[];
  evidence: Record<string, unknown>;
}

export interface ReleaseGateStore {
  /** The admissible results of declared releases, grouped by release: the `limit` most recently first-observed. */
  releasePoints(s: VersionScope, limit: number): Promise<ReleaseAggregate[]>;
  /** The admissible results of runs that declared no release, as one aggregate; undefined when there are none. */
  unreleased(s: VersionScope): Promise<ReleaseAggregate | undefined>;
  /** How many of the version's results in scope are not evidence, by class. */
  excluded(s: VersionScope): Promise<ExcludedCounts>;
  /**
   * What a gate reads for one release: the admissible results of the exact version, and counts of the
   * results that are not evidence (the version's unusable ones, other versions of the evaluator, and
   * legacy results of the version's metric).
   */
  releaseEvidence(s: { projectId: string; evaluatorId: string; evaluatorVersion: number; metricName: string }, release: string): Promise<{ admissible?: ReleaseAggregate; excluded: ExcludedCounts }>;

  /** Inserts the gate; false when the project already has its id (a concurrent create included). */
  createGate(g: GateRecord): Promise<boolean>;
  getGate(projectId: string, gateId: string): Promise<GateRecord | undefined>;
  /** Up to `limit + 1` gates after `after` (a gate id), by gate id ascending. */
  listGates(f: GateListFilter, o: { after?: string; limit: number }): Promise<GateRecord[]>;

  findDecision(projectId: string, gateId: string, idempotencyKey: string): Promise<DecisionRecord | undefined>;
  /**
   * Appends the decision with the gate's next `seq`. When a decision of the same idempotency key exists
   * (a concurrent identical request stored first) nothing is written and that one is answered.
   */
  appendDecision(d: Omit<DecisionRecord, 'seq'>): Promise<{ decision: DecisionRecord; created: boolean }>;
  /** The newest `limit` decisions of a gate, newest first. */
  decisions(projectId: string, gateId: string, limit: number): Promise<DecisionRecord[]>;
  countDecisions(projectId: string, gateId: string): Promise<number>;
}
