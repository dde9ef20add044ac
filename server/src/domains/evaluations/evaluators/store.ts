/**
 * Storage ports of evaluators and sampling rules (docs/evaluations.md "Evaluators", "Sampling rules").
 * Times are ISO 8601 text (UTC, milliseconds). Who acted is `user:<id>` or `api_key:<id>`.
 */
import type { EvaluatorKind, EvaluatorVersionRecord, SubjectKind } from '../model.js';
import type { SamplingRuleRecord } from '../ports.js';

/** The evaluator itself: its kind (fixed for life) and latest version. Versions are 1..latestVersion. */
export interface EvaluatorHead {
  orgId: string;
  projectId: string;
  evaluatorId: string;
  kind: EvaluatorKind;
  latestVersion: number;
  createdAt: string;
  createdBy: string;
}

export interface EvaluatorListFilter {
  projectId: string;
  /** OR within. */
  kinds?: string[];
}

/** An evaluator with its latest version, as the list shows it. */
export interface EvaluatorListRow {
  head: EvaluatorHead;
  latest: EvaluatorVersionRecord;
}

export interface EvaluatorStore {
  /** Writes the evaluator and its version 1; throws a unique violation when the project already has the id. */
  create(head: EvaluatorHead, first: EvaluatorVersionRecord): Promise<void>;
  /**
   * The evaluator, with its row locked until the transaction ends (PostgreSQL) or inside the one writing
   * transaction (SQLite): concurrent appenders of one evaluator are serialized here. Undefined when missing.
   * Call inside a transaction.
   */
  lock(projectId: string, evaluatorId: string): Promise<EvaluatorHead | undefined>;
  /** Writes the version and moves the evaluator's latest version to it. */
  append(r: EvaluatorVersionRecord): Promise<void>;
  head(projectId: string, evaluatorId: string): Promise<EvaluatorHead | undefined>;
  version(projectId: string, evaluatorId: string, version: number): Promise<EvaluatorVersionRecord | undefined>;
  /** Up to `limit + 1` evaluators after `after` (an evaluator id), by evaluator id ascending. */
  list(filter: EvaluatorListFilter, opts: { after?: string; limit: number }): Promise<EvaluatorListRow[]>;
}

/** A stored sampling rule with who created and last changed it. */
export interface StoredSamplingRule extends SamplingRuleRecord {
  createdBy: string;
  updatedBy: string;
}

export interface SamplingRuleFilter {
  projectId: string;
  evaluatorId?: string;
  enabled?: boolean;
}

/** The fields a PUT sets (the rest the store keeps or the clock gives). */
export interface SamplingRuleWrite {
  evaluator: { evaluator_id: string; version: number };
  subjectKind: SubjectKind;
  samplingRate: number;
  perTickLimit: number;
  enabled: boolean;
}

export interface SamplingRuleStore {
  /** Inserts the rule unless the project has its id; true when it inserted. Call inside a transaction. */
  insertIfMissing(r: StoredSamplingRule): Promise<boolean>;
  /** Replaces the settable fields and `updated_at`/`updated_by` of an existing rule. */
  update(projectId: string, ruleId: string, w: SamplingRuleWrite, updatedAt: string, updatedBy: string): Promise<void>;
  get(projectId: string, ruleId: string): Promise<StoredSamplingRule | undefined>;
  /** True when it deleted a rule. */
  delete(projectId: string, ruleId: string): Promise<boolean>;
  count(projectId: string): Promise<number>;
  /** Up to `limit + 1` rules after `after` (a rule id), by rule id ascending. */
  list(filter: SamplingRuleFilter, opts: { after?: string; limit: number }): Promise<StoredSamplingRule[]>;
  /** Rules that can select anything (enabled, rate above 0, per-tick limit above 0) of projects not deleted. */
  active(): Promise<StoredSamplingRule[]>;
}
