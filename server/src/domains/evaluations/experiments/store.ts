/**
 * The experiments store port (docs/evaluations-experiments.md): experiments (a dataset version and the
 * exact evaluator versions that score it) and their trials (the arms compared over it), plus the bulk read
 * of what the one runner has already stored for a set of subjects (results and unscored subjects).
 * Times are ISO 8601 text (UTC, milliseconds); who acted is `user:<id>`, `api_key:<id>` or `oauth:<id>`.
 */
import type { EvaluatorRef } from '../model.js';

export const TRIAL_ROLES = ['TRIAL_ROLE_BASELINE', 'TRIAL_ROLE_CANDIDATE'] as const;
export type TrialRole = (typeof TRIAL_ROLES)[number];

export interface ExperimentRecord {
  orgId: string;
  projectId: string;
  experimentId: string;
  displayName: string;
  datasetId: string;
  datasetVersion: number;
  /** Exact versions, in the order they were given (1 to 8, no duplicates). */
  evaluators: EvaluatorRef[];
  createdAt: string;
  createdBy: string;
}

export interface TrialRecord {
  projectId: string;
  experimentId: string;
  trialId: string;
  role: TrialRole;
  label: string;
  /** The release the arm stands for, as the caller named it (descriptive); null when not named. */
  release: string | null;
  /** item id -> run id (lower case); null: the trial scores the frozen cases themselves. */
  runs: Record<string, string> | null;
  createdAt: string;
  createdBy: string;
}

export interface ExperimentListFilter {
  projectId: string;
  datasetId?: string;
}

/** What the runner stored for one subject under one evaluator version. */
export type StoredOutcome =
  | { state: 'scored'; numericValue: number | null; label: string | null; mode: string }
  | { state: 'unmeasured'; reason: string }
  | { state: 'withheld'; reason: string };

export interface ExperimentStore {
  /** Throws a unique violation when the project already has the experiment id. */
  create(r: ExperimentRecord): Promise<void>;
  get(projectId: string, experimentId: string): Promise<ExperimentRecord | undefined>;
  /**
   * The experiment, its row locked until the transaction ends (PostgreSQL) or inside the one writing
   * transaction (SQLite): concurrent trial writers of one experiment are serialized here. Call inside a transaction.
   */
  lock(projectId: string, experimentId: string): Promise<ExperimentRecord | undefined>;
  /** Up to `limit + 1` experiments after `after` (an experiment id), by experiment id ascending. */
  list(f: ExperimentListFilter, o: { after?: string; limit: number }): Promise<ExperimentRecord[]>;
  /** Throws a unique violation when the experiment already has the trial id. */
  addTrial(r: TrialRecord): Promise<void>;
  /** Every trial of the experiment, in creation order (then trial id). */
  trials(projectId: string, experimentId: string): Promise<TrialRecord[]>;
  /**
   * For each subject ref (of one kind, under one exact evaluator version) that has a stored result or an
   * unscored record, what it came to. A scored result wins over a stale unscored record.
   */
  outcomes(projectId: string, evaluator: EvaluatorRef, subjectKind: string, subjectRefs: string[]): Promise<Map<string, StoredOutcome>>;
}
