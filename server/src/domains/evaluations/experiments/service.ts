/**
 * Experiments (docs/evaluations-experiments.md): score the items of one exact dataset version with exact
 * evaluator versions, arm by arm (trials), and compare the arms.
 *
 * - An experiment names an exact dataset version and 1 to 8 exact evaluator versions; both are validated
 *   when written (404 when missing) and never change. Creating it again with the same fields answers it
 *   (`created: false`); different fields under the same id are 409.
 * - A trial is one arm: without `runs` it scores the frozen cases themselves (what the reviewed runs did);
 *   with `runs` (item id -> run id) it scores new runs of those cases; an item it does not map is counted
 *   as missing, never as zero. At most one baseline; at most MAX_TRIALS trials.
 * - `run` scores every trial × item × evaluator through the one runner (mode EVALUATION_MODE_EXPERIMENT,
 *   sampling WHOLE_DATASET), at most a bounded number of evaluations (and time) per call: what remains is
 *   reported (`truncated`, `remaining`) and the next call continues. Nothing is scored twice: a subject with
 *   a stored answer is skipped, and the runner answers `already_evaluated` (or 409 to a concurrent asker).
 *   The daily budget's 429 stops the call and reports what was done.
 * - The comparison is computed from what is stored; it never evaluates.
 */
import { ApiError, conflict, invalidRequest, notFound } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock } from '../../../lib/clock.js';
import type { ControlStore } from '../../../storage/control/stores.js';
import { isUniqueViolation } from '../../../storage/control/unique.js';
import { principalRef } from '../../assets/signals.js';
import type { ProjectRecord } from '../../projects/store.js';
import type { EvaluatorConfig, EvaluatorRef, RunFacts } from '../model.js';
import type { EvaluationRunner, EvaluatorVersions } from '../ports.js';
import { checkFrozenCaseRubric } from '../runner.js';
import { checkFamily } from '../scoring/family.js';
import { compare, summarize, type Cell } from './comparison.js';
import type { ExperimentListFilter, ExperimentRecord, StoredOutcome, TrialRecord, TrialRole } from './store.js';

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

const HEX32 = /^[0-9a-fA-F]{32}$/;

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

function checkSlug(v: string, field: string, pattern: string): string {
  if (!new RegExp(pattern).test(v)) throw invalidRequest(`${field} must match ${pattern} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
  return v;
}

function checkText(v: string, field: string, max: number): string {
  if (v.trim() === '') throw invalidRequest(`${field} must not be blank`);
  if ([...v].length > max) throw invalidRequest(`${field} is at most ${max} characters`);
  if (/[\u0000-\u001f]/.test(v)) throw invalidRequest(`${field} must not contain control characters`);
  return v;
}

const refKey = (r: EvaluatorRef) => `${r.evaluator_id}@${r.version}`;
const itemRef = (e: ExperimentRecord, itemId: string) => `${e.datasetId}/${e.datasetVersion}/${itemId}`;

function sameExperiment(a: ExperimentRecord, b: Omit<ExperimentRecord, 'orgId' | 'createdAt' | 'createdBy'>): boolean {
  return (
    a.displayName === b.displayName &&
    a.datasetId === b.datasetId &&
    a.datasetVersion === b.datasetVersion &&
    JSON.stringify(a.evaluators.map(refKey)) === JSON.stringify(b.evaluators.map(refKey))
  );
}

function sameTrial(a: TrialRecord, b: Omit<TrialRecord, 'createdAt' | 'createdBy'>): boolean {
  const runs = (r: Record<string, string> | null) => (r === null ? null : JSON.stringify(Object.entries(r).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))));
  return a.role === b.role && a.label === b.label && a.release === b.release && runs(a.runs) === runs(b.runs);
}

/** One cell to evaluate: what the runner is asked for. */
interface Work {
  trial: TrialRecord;
  itemId: string;
  evaluator: EvaluatorRef;
  subjectKind: 'SUBJECT_KIND_DATASET_ITEM' | 'SUBJECT_KIND_AGENT_RUN';
  subjectRef: string;
  frozenFacts?: RunFacts;
}

/** Every cell of the experiment with what is stored for it (`outcome` absent: nothing yet; `missing`: no run mapped). */
interface Grid {
  experiment: ExperimentRecord;
  trials: TrialRecord[];
  itemIds: string[];
  /** trial id -> evaluator key -> cells aligned with itemIds. */
  cells: Map<string, Map<string, Cell[]>>;
  pending: Work[];
  missing: number;
}

const cellOf = (o: StoredOutcome | undefined): Cell =>
  o === undefined ? { state: 'pending' } : o.state === 'scored' ? { state: 'scored', value: o.numericValue, label: o.label } : { state: o.state };

export class ExperimentService<C> {
  constructor(
    private readonly control: ControlStore,
    private readonly versions: EvaluatorVersions,
    private readonly datasets: ExperimentDatasets<C>,
    private readonly caseFacts: (c: C) => RunFacts,
    private readonly runner: EvaluationRunner,
    private readonly clock: Clock,
    private readonly options: { timeBoundMs: number } = { timeBoundMs: RUN_TIME_BOUND_MS },
  ) {}

  /** Creates the experiment (201), or answers the identical one already there (`created: false`); 409 when different. */
  async create(caller: Principal, project: ProjectRecord, input: CreateExperimentInput): Promise<{ experiment: ExperimentRecord; created: boolean }> {
    const experimentId = checkSlug(input.experiment_id, 'experiment_id', EXPERIMENT_ID_PATTERN);
    const displayName = checkText(input.display_name, 'display_name', MAX_DISPLAY_NAME);
    const refs = input.evaluators;
    if (refs.length < EVALUATORS_PER_EXPERIMENT.min || refs.length > EVALUATORS_PER_EXPERIMENT.max)
      throw invalidRequest(`evaluators must name ${EVALUATORS_PER_EXPERIMENT.min} to ${EVALUATORS_PER_EXPERIMENT.max} exact evaluator versions`, { reason: 'evaluator_count' });
    const seen = new Set<string>();
    for (const r of refs) {
      if (seen.has(refKey(r))) throw invalidRequest(`evaluators names ${r.evaluator_id} version ${r.version} twice`, { reason: 'duplicate_evaluator', evaluator: r });
      seen.add(refKey(r));
    }
    const wanted = {
      projectId: project.id,
      experimentId,
      displayName,
      datasetId: input.dataset.dataset_id,
      datasetVersion: input.dataset.version,
      evaluators: refs.map((r) => ({ evaluator_id: r.evaluator_id, version: r.version })),
    };
    // References are validated when written: the exact dataset version and evaluator versions must exist.
    await this.datasets.version(project.id, wanted.datasetId, wanted.datasetVersion);
    for (const r of wanted.evaluators) {
      const { parsed } = await this.versions.version(project.id, r);
      checkScoresRuns(r, parsed);
    }
    const existing = await this.control.experiments.get(project.id, experimentId);
    if (existing) return this.idempotent(existing, wanted);
    const record: ExperimentRecord = { ...wanted, orgId: project.orgId, createdAt: this.clock.now().toISOString(), createdBy: principalRef(caller) };
    try {
      await this.control.experiments.create(record);
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const first = await this.control.experiments.get(project.id, experimentId);
      if (!first) throw e;
      return this.idempotent(first, wanted);
    }
    return { experiment: record, created: true };
  }

  private idempotent(existing: ExperimentRecord, wanted: Parameters<typeof sameExperiment>[1]) {
    if (!sameExperiment(existing, wanted))
      throw conflict(`experiment ${existing.experimentId} already exists with other fields (its dataset version and evaluators never change): choose another experiment_id`);
    return { experiment: existing, created: false };
  }

  async get(projectId: string, experimentId: string): Promise<ExperimentRecord> {
    const e = await this.control.experiments.get(projectId, checkSlug(experimentId, 'experimentId', EXPERIMENT_ID_PATTERN));
    if (!e) throw notFound('experiment');
    return e;
  }

  list(f: ExperimentListFilter, o: { after?: string; limit: number }) {
    return this.control.experiments.list(f, o);
  }

  /** Adds a trial (201), or answers the identical one already there (`created: false`); 409 when different. */
  async addTrial(caller: Principal, project: ProjectRecord, experimentIdRaw: string, input: AddTrialInput): Promise<{ trial: TrialRecord; created: boolean }> {
    const experiment = await this.get(project.id, experimentIdRaw);
    const trialId = checkSlug(input.trial_id, 'trial_id', TRIAL_ID_PATTERN);
    const role = input.role as TrialRole;
    const label = checkText(input.label, 'label', MAX_LABEL);
    const release = input.release === undefined ? null : checkText(input.release, 'release', MAX_RELEASE);
    let runs: Record<string, string> | null = null;
    if (input.runs !== undefined) {
      const entries = Object.entries(input.runs);
      if (entries.length === 0) throw invalidRequest('runs is empty: omit runs to score the frozen cases themselves, or map item ids to run ids', { reason: 'empty_runs' });
      if (entries.length > MAX_TRIAL_RUNS) throw invalidRequest(`runs maps at most ${MAX_TRIAL_RUNS} items`, { reason: 'too_many_runs' });
      const items = new Set((await this.datasets.items(project.id, experiment.datasetId, experiment.datasetVersion)).map((i) => i.itemId));
      const unknown = entries.filter(([item]) => !items.has(item)).map(([item]) => item);
      if (unknown.length > 0)
        throw invalidRequest(`runs names ${unknown.length} item(s) that dataset ${experiment.datasetId} version ${experiment.datasetVersion} does not hold`, {
          reason: 'unknown_item',
          item_ids: unknown.slice(0, 20).map((i) => i.slice(0, 200)),
        });
      const byRun = new Map<string, string>();
      runs = {};
      for (const [item, run] of entries) {
        if (typeof run !== 'string' || !HEX32.test(run)) throw invalidRequest(`runs.${item.slice(0, 200)} must be a run id (32 hexadecimal characters)`, { reason: 'malformed_run_id' });
        const id = run.toLowerCase();
        const other = byRun.get(id);
        if (other !== undefined) throw invalidRequest(`run ${id} is mapped to two items (${other.slice(0, 200)} and ${item.slice(0, 200)}): each item needs its own run`, { reason: 'duplicate_run' });
        byRun.set(id, item);
        runs[item] = id;
      }
    } else {
      // The frozen cases carry no recorded content read back from telemetry: content-asking rubrics are refused here, before any run.
      for (const r of experiment.evaluators) {
        const { parsed } = await this.versions.version(project.id, r);
        try {
          checkFrozenCaseRubric(parsed);
        } catch (e) {
          if (e instanceof ApiError)
            throw invalidRequest(`evaluator ${r.evaluator_id} version ${r.version}: ${e.message}`, { ...(e.details ?? {}), evaluator: r });
          throw e;
        }
      }
    }
    const wanted = { projectId: project.id, experimentId: experiment.experimentId, trialId, role, label, release, runs };
    return this.control.transaction(async (tx) => {
      const locked = await tx.experiments.lock(project.id, experiment.experimentId);
      if (!locked) throw notFound('experiment');
      const trials = await tx.experiments.trials(project.id, experiment.experimentId);
      const existing = trials.find((t) => t.trialId === trialId);
      if (existing) {
        if (!sameTrial(existing, wanted)) throw conflict(`trial ${trialId} already exists with other fields (a trial never changes): choose another trial_id`);
        return { trial: existing, created: false };
      }
      const baseline = trials.find((t) => t.role === 'TRIAL_ROLE_BASELINE');
      if (role === 'TRIAL_ROLE_BASELINE' && baseline)
        throw conflict(`experiment ${experiment.experimentId} already has a baseline (trial ${baseline.trialId}): an experiment has at most one baseline; add this arm as a candidate`);
      if (trials.length >= MAX_TRIALS) throw conflict(`experiment ${experiment.experimentId} holds ${MAX_TRIALS} trials, the most one experiment may hold: create another experiment`);
      const trial: TrialRecord = { ...wanted, createdAt: this.clock.now().toISOString(), createdBy: principalRef(caller) };
      await tx.experiments.addTrial(trial);
      return { trial, created: true };
    });
  }

  /** Every cell of the experiment and what is stored for it. */
  private async grid(projectId: string, experimentIdRaw: string, withFacts: boolean): Promise<Grid> {
    const experiment = await this.get(projectId, experimentIdRaw);
    const trials = await this.control.experiments.trials(projectId, experiment.experimentId);
    const items = await this.datasets.items(projectId, experiment.datasetId, experiment.datasetVersion);
    const itemIds = items.map((i) => i.itemId);
    const cells = new Map<string, Map<string, Cell[]>>();
    const pending: Work[] = [];
    let missing = 0;
    const facts = new Map<string, RunFacts>();
    if (withFacts && trials.some((t) => t.runs === null)) for (const i of items) facts.set(i.itemId, this.caseFacts(i.case));
    for (const trial of trials) {
      const byEvaluator = new Map<string, Cell[]>();
      cells.set(trial.trialId, byEvaluator);
      const subjectKind = trial.runs === null ? 'SUBJECT_KIND_DATASET_ITEM' : 'SUBJECT_KIND_AGENT_RUN';
      const refOf = (itemId: string): string | undefined => (trial.runs === null ? itemRef(experiment, itemId) : trial.runs[itemId]);
      const refs = itemIds.map(refOf).filter((r): r is string => r !== undefined);
      for (const evaluator of experiment.evaluators) {
        const stored = await this.control.experiments.outcomes(projectId, evaluator, subjectKind, refs);
        const row: Cell[] = [];
        for (const itemId of itemIds) {
          const ref = refOf(itemId);
          if (ref === undefined) {
            row.push({ state: 'missing' });
            missing++;
            continue;
          }
          const cell = cellOf(stored.get(ref));
          row.push(cell);
          if (cell.state === 'pending')
            pending.push({ trial, itemId, evaluator, subjectKind, subjectRef: ref, ...(trial.runs === null && withFacts ? { frozenFacts: facts.get(itemId) } : {}) });
        }
        byEvaluator.set(refKey(evaluator), row);
      }
    }
    return { experiment, trials, itemIds, cells, pending, missing };
  }

  /** The experiment with its trials and each trial's counts over every item × evaluator. */
  async detail(projectId: string, experimentId: string) {
    const g = await this.grid(projectId, experimentId, false);
    const trials = g.trials.map((t) => {
      const all = [...(g.cells.get(t.trialId)?.values() ?? [])].flat();
      const { counts } = summarize(all);
      const done = counts.scored + counts.unmeasured + counts.withheld;
      const status = counts.pending === 0 ? ('TRIAL_STATUS_COMPLETE' as const) : done === 0 ? ('TRIAL_STATUS_NOT_STARTED' as const) : ('TRIAL_STATUS_IN_PROGRESS' as const);
      return { trial: t, status, counts, mappedItems: t.runs === null ? g.itemIds.length : Object.keys(t.runs).length };
    });
    return { experiment: g.experiment, items: g.itemIds.length, trials };
  }

  /** Scores what has no stored answer yet, within this call's bound; reports what was done and what remains. */
  async run(caller: Principal, project: ProjectRecord, experimentId: string, input: RunInput): Promise<RunReport> {
    const bound = input.max_evaluations ?? RUN_BOUND.default;
    if (!Number.isInteger(bound) || bound < 1 || bound > RUN_BOUND.max) throw invalidRequest(`max_evaluations must be an integer from 1 to ${RUN_BOUND.max}`);
    const g = await this.grid(project.id, experimentId, true);
    if (g.trials.length === 0) throw conflict(`experiment ${g.experiment.experimentId} has no trials yet: add a trial, then run`);
    const report: RunReport = {
      experiment_id: g.experiment.experimentId,
      asked: 0,
      scored: 0,
      unmeasured: 0,
      withheld: 0,
      already_evaluated: 0,
      not_evaluated: { unreadable: 0, in_progress: 0, refused: 0 },
      failures: [],
      failures_truncated: false,
      missing: g.missing,
      stopped: null,
      truncated: false,
      remaining: g.pending.length,
      complete: false,
    };
    const started = Date.now();
    const fail = (w: Work, e: ApiError) => {
      if (report.failures.length >= MAX_LISTED_FAILURES) return void (report.failures_truncated = true);
      report.failures.push({ trial_id: w.trial.trialId, item_id: w.itemId, evaluator: w.evaluator, status: e.status, error: e.code, message: e.message });
    };
    for (const w of g.pending) {
      if (report.asked >= bound || Date.now() - started > this.options.timeBoundMs) {
        report.stopped = 'bound';
        break;
      }
      // A concurrent call may have answered this cell since the grid was read (an unmeasured answer is not a result, so the runner would ask again).
      if ((await this.control.experiments.outcomes(project.id, w.evaluator, w.subjectKind, [w.subjectRef])).size > 0) {
        report.already_evaluated++;
        report.remaining--;
        continue;
      }
      report.asked++;
      try {
        const a = await this.runner.evaluate({
          orgId: project.orgId,
          projectId: project.id,
          evaluator: w.evaluator,
          subjectKind: w.subjectKind,
          subjectRef: w.subjectRef,
          trigger: { sampling: 'WHOLE_DATASET', caller, experimentId: g.experiment.experimentId },
          ...(w.frozenFacts ? { frozenCase: w.frozenFacts } : {}),
        });
        report.remaining--;
        if (a.outcome === 'scored') {
          if (a.alreadyEvaluated) report.already_evaluated++;
          else report.scored++;
        } else report[a.outcome]++;
      } catch (e) {
        if (!(e instanceof ApiError) || (e.status >= 500 && e.status !== 504)) throw e;
        if (e.status === 429) {
          report.asked--;
          report.stopped = 'budget_exhausted';
          break;
        }
        if (e.status === 409) report.not_evaluated.in_progress++;
        else if (e.status === 404 || e.status === 504) report.not_evaluated.unreadable++;
        else report.not_evaluated.refused++;
        fail(w, e);
      }
    }
    report.truncated = report.stopped !== null && report.remaining > 0;
    report.complete = report.remaining === 0;
    return report;
  }

  /** Per evaluator version: each trial's counts and mean, and each candidate against the baseline. */
  async comparison(projectId: string, experimentId: string) {
    const g = await this.grid(projectId, experimentId, false);
    const baseline = g.trials.find((t) => t.role === 'TRIAL_ROLE_BASELINE');
    const metrics = await Promise.all(
      g.experiment.evaluators.map(async (ref) => {
        const { record } = await this.versions.version(projectId, ref);
        const key = refKey(ref);
        const arms = g.trials.map((t) => ({ trial: t, summary: summarize(g.cells.get(t.trialId)!.get(key)!) }));
        const candidates =
          baseline === undefined
            ? []
            : g.trials
                .filter((t) => t.role === 'TRIAL_ROLE_CANDIDATE')
                .map((t) => ({ trial: t, delta: compare(g.cells.get(baseline.trialId)!.get(key)!, g.cells.get(t.trialId)!.get(key)!) }));
        return { evaluator: ref, metricName: record.metricName, arms, candidates };
      }),
    );
    return { experiment: g.experiment, items: g.itemIds.length, baseline: baseline ?? null, complete: g.pending.length === 0 && g.trials.length > 0, pending: g.pending.length, metrics };
  }
}

/** An experiment's items are runs (frozen or new): its evaluators must measure runs (400 otherwise, naming why). */
function checkScoresRuns(ref: EvaluatorRef, parsed: EvaluatorConfig): void {
  try {
    checkFamily(parsed, 'SUBJECT_KIND_AGENT_RUN');
  } catch (e) {
    if (e instanceof ApiError) throw invalidRequest(`evaluator ${ref.evaluator_id} version ${ref.version} cannot score the runs of a dataset: ${e.message}`, { ...(e.details ?? {}), evaluator: ref });
    throw e;
  }
}
