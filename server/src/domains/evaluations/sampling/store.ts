/**
 * Storage ports of the evaluation budget and the sampling job (docs/evaluations-sampling.md). No SQL here:
 * the adapters are storage/control/evaluation-budget-store.ts and evaluation-sampling-store.ts.
 */
import type { RunPosition } from '../../agent-runs/store.js';

export interface BudgetRecord {
  orgId: string;
  dailyLimitNanoUsd: number;
  /** Null: no count cap. */
  dailyEvaluationLimit: number | null;
  updatedAt: string;
  updatedBy: string;
  version: number;
}

export interface DaySpend {
  spentNanoUsd: number;
  evaluations: number;
}

export interface EvaluationBudgetStore {
  find(orgId: string): Promise<BudgetRecord | undefined>;
  /** Writes the budget, its version one above the stored one (1 for the first); returns what was written. */
  put(b: Omit<BudgetRecord, 'version'>): Promise<BudgetRecord>;
  /** Today's spend (zeros when nothing was charged that day). */
  spend(orgId: string, day: string): Promise<DaySpend>;
  /** Adds to the day's spend in one statement (an upsert that increments): concurrent charges all count. */
  charge(orgId: string, day: string, add: DaySpend): Promise<void>;
}

/** A sampling rule's place in its project's runs. */
export interface SamplingCursor {
  ruleId: string;
  orgId: string;
  projectId: string;
  /** The last run passed: runs after it (by start, then trace id) are still to be looked at. */
  after: RunPosition;
  /** The run claimed for evaluation and not yet finished (a tick that stopped mid-evaluation leaves it). */
  pending: RunPosition | null;
  pausedAt: string | null;
  version: number;
  updatedAt: string;
}

/** waiting: to be evaluated again; given_up: every try measured nothing; withheld: the content policy refused the transfer (never retried). */
export type RetryState = 'waiting' | 'given_up' | 'withheld';

export interface SamplingRetry {
  ruleId: string;
  traceId: string;
  orgId: string;
  projectId: string;
  startUs: number;
  state: RetryState;
  /** Evaluations tried so far, the first (from the scan) included. */
  attempts: number;
  nextAt: string;
  /** Why the last try measured nothing (or how it failed). */
  reason: string;
  updatedAt: string;
}

export interface SamplingStore {
  cursor(ruleId: string): Promise<SamplingCursor | undefined>;
  /** Creates the cursor unless one exists (a second node's create is a no-op); returns the stored one. */
  createCursor(c: Omit<SamplingCursor, 'version' | 'pending' | 'pausedAt'>): Promise<SamplingCursor>;
  /**
   * Compare-and-set: moves the cursor from `version` to `version + 1`, setting `after`, `pending` and
   * clearing `pausedAt`. False (and nothing written) when another writer moved it first.
   */
  advance(ruleId: string, version: number, set: { after: RunPosition; pending: RunPosition | null; at: string }): Promise<boolean>;
  /** Marks paused, at `at`, the cursors of rules not among `activeRuleIds` that are not already paused. */
  pauseOthers(activeRuleIds: string[], at: string): Promise<void>;
  /** Records a run to try again (or replaces the record of the same rule and run). */
  putRetry(r: SamplingRetry): Promise<void>;
  /** Waiting retries of the rule due at `now`, oldest due first. */
  dueRetries(ruleId: string, now: string, limit: number): Promise<SamplingRetry[]>;
  /**
   * Compare-and-set on `attempts`: replaces the waiting retry of the rule and run only while its attempts
   * are still `attempts` (a second runner's claim fails); `null` deletes it. False when it changed.
   */
  updateRetry(ruleId: string, traceId: string, attempts: number, next: SamplingRetry | null): Promise<boolean>;
  /** Every retry record of a rule (waiting and given up), by trace id. */
  retries(ruleId: string): Promise<SamplingRetry[]>;
}
