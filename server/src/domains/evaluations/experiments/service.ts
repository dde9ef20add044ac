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
import type { RunFacts } from '../model.js';
import type { EvaluationRunner, EvaluatorVersions } from '../ports.js';
import { checkFrozenCaseRubric } from '../runner.js';
import { compare, summarize, type Cell } from './comparison.js';
import type { ExperimentListFilter, ExperimentRecord, TrialRecord, TrialRole } from './store.js';

import {
  EXPERIMENT_ID_PATTERN,
  TRIAL_ID_PATTERN,
  MAX_DISPLAY_NAME,
  MAX_LABEL,
  MAX_RELEASE,
  EVALUATORS_PER_EXPERIMENT,
  MAX_TRIALS,
  MAX_TRIAL_RUNS,
  RUN_BOUND,
  RUN_TIME_BOUND_MS,
  MAX_LISTED_FAILURES,
  HEX32,
  type ExperimentDatasets,
  type CreateExperimentInput,
  type AddTrialInput,
  type RunInput,
  type RunReport,
  checkSlug,
  checkText,
  refKey,
  itemRef,
  sameExperiment,
  sameTrial,
  type Work,
  type Grid,
  cellOf,
  checkScoresRuns,
} from './rules.js';

export * from './rules.js';
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
