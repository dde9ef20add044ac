/**
 * The rules of experiments and trials that need no store (docs/evaluations-experiments.md): limits, id and
 * text checks, what makes a repeated write the same write, and the per-call run report's shape.
 */
import { ApiError, invalidRequest } from '../../../http/errors.js';
import type { EvaluatorConfig, EvaluatorRef, RunFacts } from '../model.js';
import { checkFamily } from '../scoring/family.js';
import type { Cell } from './comparison.js';
import type { ExperimentRecord, StoredOutcome, TrialRecord } from './store.js';

export const EXPERIMENT_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,127}$';
export const TRIAL_ID_PATTERN = EXPERIMENT_ID_PATTERN;
export const MAX_DISPLAY_NAME = 200;
export const MAX_LABEL = 200;
export const MAX_RELEASE = 200;
export const EVALUATORS_PER_EXPERIMENT = { min: 1, max: 8 } as const;
export const MAX_TRIALS = 16;
/** Entries of a trial's `runs` (a dataset version holds at most this many items). */
export const MAX_TRIAL_RUNS = 10_000;
export const EXPERIMENT_PAGE = { default: 50, max: 200 };
/** Evaluations one `run` call asks for at most (the caller may ask for fewer with `max_evaluations`). */
export const RUN_BOUND = { default: 200, max: 200 } as const;
/** A `run` call stops asking for new evaluations after this long (what remains is reported). */
export const RUN_TIME_BOUND_MS = 60_000;
/** Failures a `run` reply lists one by one (the counts are always complete). */
export const MAX_LISTED_FAILURES = 20;

export const HEX32 = /^[0-9a-fA-F]{32}$/;

/** One item of the dataset version as an experiment reads it. */
export interface ExperimentItem<C> {
  itemId: string;
  case: C;
}

/** The dataset versions an experiment reads (the datasets service). */
export interface ExperimentDatasets<C> {
  /** Resolves when the project has that exact version; 404 otherwise. */
  version(projectId: string, datasetId: string, version: number): Promise<unknown>;
  /** Every item of that exact version, in the version's order. */
  items(projectId: string, datasetId: string, version: number): Promise<Array<ExperimentItem<C>>>;
}

export interface CreateExperimentInput {
  experiment_id: string;
  display_name: string;
  dataset: { dataset_id: string; version: number };
  evaluators: EvaluatorRef[];
}

export interface AddTrialInput {
  trial_id: string;
  role: string;
  label: string;
  release?: string;
  runs?: Record<string, string>;
}

export interface RunInput {
  max_evaluations?: number;
}

export interface RunFailure {
  trial_id: string;
  item_id: string;
  evaluator: EvaluatorRef;
  status: number;
  error: string;
  message: string;
}

export interface RunReport {
  experiment_id: string;
  /** Evaluations asked of the runner by this call. */
  asked: number;
  scored: number;
  unmeasured: number;
  withheld: number;
  /** Answered from a stored result (a concurrent call or an earlier evaluation stored it first). */
  already_evaluated: number;
  /** Asked but not answered, to be asked again by the next call. */
  not_evaluated: { unreadable: number; in_progress: number; refused: number };
  failures: RunFailure[];
  failures_truncated: boolean;
  /** Cells a trial cannot evaluate because it maps no run to the item (counted, never scored). */
  missing: number;
  /** Why the call stopped before asking for everything that remained: the budget, or this call's bound. */
  stopped: 'budget_exhausted' | 'bound' | null;
  truncated: boolean;
  /** Cells still without a stored answer after this call (a later `run` continues with them). */
  remaining: number;
  complete: boolean;
}

export function checkSlug(v: string, field: string, pattern: string): string {
  if (!new RegExp(pattern).test(v)) throw invalidRequest(`${field} must match ${pattern} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
  return v;
}

export function checkText(v: string, field: string, max: number): string {
  if (v.trim() === '') throw invalidRequest(`${field} must not be blank`);
  if ([...v].length > max) throw invalidRequest(`${field} is at most ${max} characters`);
  if (/[\u0000-\u001f]/.test(v)) throw invalidRequest(`${field} must not contain control characters`);
  return v;
}

export const refKey = (r: EvaluatorRef) => `${r.evaluator_id}@${r.version}`;
export const itemRef = (e: ExperimentRecord, itemId: string) => `${e.datasetId}/${e.datasetVersion}/${itemId}`;

export function sameExperiment(a: ExperimentRecord, b: Omit<ExperimentRecord, 'orgId' | 'createdAt' | 'createdBy'>): boolean {
  return (
    a.displayName === b.displayName &&
    a.datasetId === b.datasetId &&
    a.datasetVersion === b.datasetVersion &&
    JSON.stringify(a.evaluators.map(refKey)) === JSON.stringify(b.evaluators.map(refKey))
  );
}

export function sameTrial(a: TrialRecord, b: Omit<TrialRecord, 'createdAt' | 'createdBy'>): boolean {
  const runs = (r: Record<string, string> | null) => (r === null ? null : JSON.stringify(Object.entries(r).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))));
  return a.role === b.role && a.label === b.label && a.release === b.release && runs(a.runs) === runs(b.runs);
}

/** One cell to evaluate: what the runner is asked for. */
export interface Work {
  trial: TrialRecord;
  itemId: string;
  evaluator: EvaluatorRef;
  subjectKind: 'SUBJECT_KIND_DATASET_ITEM' | 'SUBJECT_KIND_AGENT_RUN';
  subjectRef: string;
  frozenFacts?: RunFacts;
}

/** Every cell of the experiment with what is stored for it (`outcome` absent: nothing yet; `missing`: no run mapped). */
export interface Grid {
  experiment: ExperimentRecord;
  trials: TrialRecord[];
  itemIds: string[];
  /** trial id -> evaluator key -> cells aligned with itemIds. */
  cells: Map<string, Map<string, Cell[]>>;
  pending: Work[];
  missing: number;
}

export const cellOf = (o: StoredOutcome | undefined): Cell =>
  o === undefined ? { state: 'pending' } : o.state === 'scored' ? { state: 'scored', value: o.numericValue, label: o.label } : { state: o.state };

/** An experiment's items are runs (frozen or new): its evaluators must measure runs (400 otherwise, naming why). */
export function checkScoresRuns(ref: EvaluatorRef, parsed: EvaluatorConfig): void {
  try {
    checkFamily(parsed, 'SUBJECT_KIND_AGENT_RUN');
  } catch (e) {
    if (e instanceof ApiError) throw invalidRequest(`evaluator ${ref.evaluator_id} version ${ref.version} cannot score the runs of a dataset: ${e.message}`, { ...(e.details ?? {}), evaluator: ref });
    throw e;
  }
}
