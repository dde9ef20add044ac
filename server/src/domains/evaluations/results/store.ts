/** The results store port (docs/evaluations.md "Results"): one result per evaluator version per subject, claims, unscored subjects. */
import type { Execution } from '../model.js';

export interface ResultRecord {
  id: string;
  orgId: string;
  projectId: string;
  evaluatorId: string;
  /** 0 marks a legacy result. */
  evaluatorVersion: number;
  metricName: string;
  mode: string;
  subjectKind: string;
  subjectRef: string;
  numericValue: number | null;
  label: string | null;
  explanation: string | null;
  subjectRelease: string | null;
  /** '' except for legacy results. */
  legacySource: string;
  occurredAt: string;
  evaluatedAt: string;
  /** Null: written before the execution record existed. */
  execution: Execution | null;
}

/** The identity of an evaluation: one evaluator version on one subject of one project. */
export interface EvaluationKey {
  projectId: string;
  evaluatorId: string;
  evaluatorVersion: number;
  subjectKind: string;
  subjectRef: string;
}

export interface ResultFilter {
  projectId: string;
  metricName?: string;
  evaluatorId?: string;
  /** One set of subject refs (OR); absent: every subject. */
  subjectRefs?: string[];
  /** OR within; absent: every mode. */
  modes?: string[];
  /** Half-open window on `occurred_at` (ISO strings of one format, compared as text). */
  start?: string;
  end?: string;
}

/** Newest evaluated first; the position of the last row of a page. */
export interface ResultPosition {
  evaluatedAt: string;
  id: string;
}

export interface UnscoredRecord extends EvaluationKey {
  id: string;
  orgId: string;
  mode: string;
  outcome: 'unmeasured' | 'withheld';
  reason: string;
  details: Record<string, unknown>;
  attempts: number;
  firstAt: string;
  lastAt: string;
}

export interface EvaluationResultStore {
  find(key: EvaluationKey): Promise<ResultRecord | undefined>;
  /** Inserts; false when a result for the key exists already (a concurrent evaluation stored first). */
  insert(r: ResultRecord): Promise<boolean>;
  /** A page, newest evaluated first: at most `limit` rows after `after`. */
  page(f: ResultFilter, o: { after?: ResultPosition; limit: number }): Promise<ResultRecord[]>;
  /** For each subject ref of the filter, its newest `perSubject` rows (newest evaluated first within a subject). */
  perSubject(f: ResultFilter & { subjectRefs: string[] }, perSubject: number): Promise<ResultRecord[]>;
  /** Takes the claim of `key` until `expiresAt` when free or expired at `now`; false when someone else holds it. */
  claim(claimKey: string, token: string, now: string, expiresAt: string): Promise<boolean>;
  release(claimKey: string, token: string): Promise<void>;
  /** Records (or counts one more attempt of) a subject that could not be scored; a scored result later removes it. */
  recordUnscored(r: UnscoredRecord): Promise<UnscoredRecord>;
  clearUnscored(key: EvaluationKey): Promise<void>;
  unscored(f: { projectId: string; evaluatorId?: string; subjectRefs?: string[]; outcomes?: string[] }, o: { after?: { lastAt: string; id: string }; limit: number }): Promise<UnscoredRecord[]>;
}
