/**
 * The one runner that evaluates a subject with an exact evaluator version and stores what it came to
 * (docs/evaluations.md "Evaluating"), for on-demand requests and for the sampling job alike:
 *
 * 1. the subject reference is read for its kind (400), the turn and dataset-item kinds are 501, the
 *    evaluator version must exist (404) and its family must fit the subject (400); only an experiment
 *    (a WHOLE_DATASET trigger) may name a dataset item, which it passes with its frozen case's facts: the
 *    item is then scored like the run it froze (a judge on its run summary and step sequence only);
 * 2. a stored answer is returned with `already_evaluated` (no re-run, no new spend);
 * 3. one evaluation per (evaluator version, subject) at a time: a second asker gets 409;
 * 4. the organization's daily budget admits it or answers 429;
 * 5. the subject is read within its own time budget (else 504, not 404) and scored within the
 *    evaluation's five minutes (else 504); nothing is stored on a timeout;
 * 6. a score is stored with its provenance and charged to the budget; a subject with nothing measurable
 *    is recorded as unmeasured (retried later, never scored 0); a transfer the content policy refuses
 *    is recorded as withheld (403 on demand, never scored, not retried in a loop).
 */
import { ApiError, invalidRequest } from '../../http/errors.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import {
  EVIDENCE_CLASS,
  ON_DEMAND_SUBJECT_KINDS,
  SUBJECT_KINDS,
  type EvaluatorConfig,
  type EvaluationMode,
  type Execution,
  type OnDemandSubjectKind,
  type RunFacts,
  type ScoreOutcome,
  type SubjectFacts,
} from './model.js';
import type { EvaluateAnswer, EvaluateInput, EvaluationBudget, EvaluationRunner, EvaluatorVersions, JudgeScorer, SubjectFactsReader } from './ports.js';
import type { EvaluationKey, ResultRecord } from './results/store.js';
import { hasScope } from '../../http/principal.js';
import { isoMicros } from '../traces/query-rules.js';
import { CONTENT_READ_SCOPE } from '../content-policy/access.js';

/** The model-less scorers and the family rule (scoring/). */
export interface ModellessScoring {
  checkFamily(parsed: EvaluatorConfig, subjectKind: OnDemandSubjectKind): void;
  score(parsed: EvaluatorConfig, facts: SubjectFacts): ScoreOutcome;
}

export interface RunnerOptions {
  /** The evaluation's budget from asking to storing: five minutes. */
  timeoutMs: number;
  /** Reading the subject from telemetry: its own, shorter budget (504 when it runs out). */
  subjectReadTimeoutMs: number;
}

export const EVALUATION_TIMEOUT_MS = 5 * 60 * 1000;
export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = { timeoutMs: EVALUATION_TIMEOUT_MS, subjectReadTimeoutMs: 30_000 };

const HEX32 = /^[0-9a-fA-F]{32}$/;
const HEX16 = /^[0-9a-fA-F]{16}$/;
export const MAX_SESSION_KEY_LENGTH = 256;

/** A subject reference in its normal form (run and span ids lower case). */
export type Subject =
  | { kind: 'SUBJECT_KIND_AGENT_RUN'; ref: string; runId: string }
  | { kind: 'SUBJECT_KIND_AGENT_STEP'; ref: string; runId: string; spanId: string }
  | { kind: 'SUBJECT_KIND_AGENT_SESSION'; ref: string; sessionKey: string };

/** A dataset item, readable only when an experiment asks (its frozen case's facts come with the request). */
type DatasetItemSubject = { kind: 'SUBJECT_KIND_DATASET_ITEM'; ref: string; facts: RunFacts };

/** `<datasetId>/<version>/<itemId>`: three non-empty parts, an exact version of at least 1. */
const DATASET_ITEM_REF = /^[^/]+\/[1-9][0-9]{0,9}\/[^/]+$/;

/**
 * The subject of an experiment's evaluation: a dataset item is read through its frozen case (the facts
 * the experiment passes); any other kind is read as on demand. Anyone else naming a dataset item gets 501.
 */
function readAskedSubject(input: EvaluateInput): Subject | DatasetItemSubject {
  if (input.subjectKind !== 'SUBJECT_KIND_DATASET_ITEM' || input.trigger.sampling !== 'WHOLE_DATASET' || !input.frozenCase)
    return readSubject(input.subjectKind, input.subjectRef);
  if (!DATASET_ITEM_REF.test(input.subjectRef))
    throw invalidRequest('subject_ref of SUBJECT_KIND_DATASET_ITEM must be <dataset_id>/<version>/<item_id>', { reason: 'malformed_subject_ref' });
  return { kind: 'SUBJECT_KIND_DATASET_ITEM', ref: input.subjectRef, facts: input.frozenCase };
}

/**
 * A frozen case carries the run's facts but none of its recorded content is read back from telemetry:
 * a judge rubric asking for recorded content cannot be answered from a case (400, before any spend).
 */
export function checkFrozenCaseRubric(parsed: EvaluatorConfig): void {
  if (parsed.kind !== 'EVALUATOR_KIND_LLM_JUDGE') return;
  const asking = parsed.config.evidence.filter((e) => EVIDENCE_CLASS[e] !== null);
  if (asking.length > 0)
    throw invalidRequest(
      `a frozen dataset case is judged on its run summary and step sequence only; this rubric asks for recorded content (${asking.join(', ')}): score new runs of the cases instead (a trial with runs)`,
      { reason: 'frozen_case_rubric_asks_content', evidence: asking },
    );
}

/** Reads `subject_kind` and `subject_ref` (400 for a malformed pair, 501 for a kind not evaluated on demand). */
export function readSubject(kind: string, ref: string): Subject {
  if (!(SUBJECT_KINDS as readonly string[]).includes(kind))
    throw invalidRequest(`subject_kind "${String(kind).slice(0, 64)}" is not recognized; one of: ${SUBJECT_KINDS.join(', ')}`, { reason: 'unknown_subject_kind' });
  if (!(ON_DEMAND_SUBJECT_KINDS as readonly string[]).includes(kind))
    throw new ApiError(
      501,
      'not_implemented',
      kind === 'SUBJECT_KIND_AGENT_TURN'
        ? 'a turn is not addressable from its id alone: evaluate its runs, or its session'
        : 'a dataset item is evaluated by an experiment over a dataset version, not on demand',
      { subject_kind: kind },
    );
  if (typeof ref !== 'string' || ref === '') throw invalidRequest('subject_ref is required', { reason: 'malformed_subject_ref' });
  switch (kind as OnDemandSubjectKind) {
    case 'SUBJECT_KIND_AGENT_RUN':
      if (!HEX32.test(ref)) throw invalidRequest('subject_ref of SUBJECT_KIND_AGENT_RUN must be a run id (32 hexadecimal characters)', { reason: 'malformed_subject_ref' });
      return { kind: 'SUBJECT_KIND_AGENT_RUN', ref: ref.toLowerCase(), runId: ref.toLowerCase() };
    case 'SUBJECT_KIND_AGENT_STEP': {
      const [run, span, ...rest] = ref.split('/');
      if (rest.length > 0 || !HEX32.test(run ?? '') || !HEX16.test(span ?? ''))
        throw invalidRequest('subject_ref of SUBJECT_KIND_AGENT_STEP must be <run_id>/<span_id> (32 and 16 hexadecimal characters)', { reason: 'malformed_subject_ref' });
      const norm = `${run.toLowerCase()}/${span.toLowerCase()}`;
      return { kind: 'SUBJECT_KIND_AGENT_STEP', ref: norm, runId: run.toLowerCase(), spanId: span.toLowerCase() };
    }
    case 'SUBJECT_KIND_AGENT_SESSION':
      if (ref.length > MAX_SESSION_KEY_LENGTH || /[\u0000-\u001f]/.test(ref))
        throw invalidRequest(`subject_ref of SUBJECT_KIND_AGENT_SESSION must be a session key of at most ${MAX_SESSION_KEY_LENGTH} printable characters`, {
          reason: 'malformed_subject_ref',
        });
      return { kind: 'SUBJECT_KIND_AGENT_SESSION', ref, sessionKey: ref };
  }
}

const timeoutError = (what: 'subject' | 'evaluation') =>
  new ApiError(
    504,
    'evaluation_timeout',
    what === 'subject'
      ? 'the subject could not be read within its time budget; nothing was stored (this is not a 404: retry shortly)'
      : 'the evaluation ran past five minutes; nothing was stored (retrying the same subject is free once a verdict exists)',
    { reason: what === 'subject' ? 'subject_unreadable' : 'evaluation_timeout' },
  );

class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  constructor(ms: number) {
    this.timer = setTimeout(() => this.controller.abort(), ms);
    this.timer.unref();
  }
  get signal() {
    return this.controller.signal;
  }
  /** `p`, or a timeout error when the deadline (or `ms`, if shorter) passes first. */
  race<T>(p: Promise<T>, what: 'subject' | 'evaluation', ms?: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = () => reject(timeoutError(what));
      if (this.signal.aborted) return fail();
      this.signal.addEventListener('abort', fail, { once: true });
      const own = ms === undefined ? undefined : setTimeout(fail, ms);
      p.then(resolve, (e) => reject(this.signal.aborted ? timeoutError(what) : e)).finally(() => {
        this.signal.removeEventListener('abort', fail);
        if (own) clearTimeout(own);
      });
    });
  }
  end() {
    clearTimeout(this.timer);
  }
}

export class EvaluationRunnerService implements EvaluationRunner {
  constructor(
    private readonly control: ControlStore,
    private readonly versions: EvaluatorVersions,
    private readonly facts: SubjectFactsReader,
    private readonly modelless: ModellessScoring,
    private readonly judge: JudgeScorer,
    private readonly budget: EvaluationBudget,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly options: RunnerOptions = DEFAULT_RUNNER_OPTIONS,
  ) {}

  /** The stored result of an answer (for the route's reply). */
  async result(key: EvaluationKey): Promise<ResultRecord | undefined> {
    return this.control.evaluationResults.find(key);
  }

  async evaluate(input: EvaluateInput): Promise<EvaluateAnswer> {
    const subject = readAskedSubject(input);
    const { record, parsed } = await this.versions.version(input.projectId, input.evaluator);
    // A dataset item is a frozen run: it answers exactly what its run answers.
    this.modelless.checkFamily(parsed, subject.kind === 'SUBJECT_KIND_DATASET_ITEM' ? 'SUBJECT_KIND_AGENT_RUN' : subject.kind);
    if (subject.kind === 'SUBJECT_KIND_DATASET_ITEM') checkFrozenCaseRubric(parsed);
    const key: EvaluationKey = {
      projectId: input.projectId,
      evaluatorId: record.evaluatorId,
      evaluatorVersion: record.version,
      subjectKind: subject.kind,
      subjectRef: subject.ref,
    };
    const stored = await this.control.evaluationResults.find(key);
    if (stored) return { outcome: 'scored', alreadyEvaluated: true, resultId: stored.id };

    const claimKey = JSON.stringify([key.projectId, key.evaluatorId, key.evaluatorVersion, key.subjectKind, key.subjectRef]);
    const token = this.ids.uuid();
    const now = this.clock.now();
    const claimed = await this.control.evaluationResults.claim(claimKey, token, now.toISOString(), new Date(now.getTime() + this.options.timeoutMs + 60_000).toISOString());
    if (!claimed) throw new ApiError(409, 'evaluation_in_progress', 'an evaluation of this subject with this evaluator version is in progress; retry shortly', { reason: 'in_progress' });
    const deadline = new Deadline(this.options.timeoutMs);
    try {
      // A concurrent evaluation may have stored its answer between the read above and the claim.
      const again = await this.control.evaluationResults.find(key);
      if (again) return { outcome: 'scored', alreadyEvaluated: true, resultId: again.id };
      await this.budget.admit(input.orgId, record.kind);
      const facts = await deadline.race(this.readFacts(input.projectId, subject), 'subject', this.options.subjectReadTimeoutMs);
      const scored = await deadline.race(this.score(input, parsed, facts, deadline.signal), 'evaluation');
      if (deadline.signal.aborted) throw timeoutError('evaluation');
      return await this.store(input, record.metricName, key, record.kind, facts, scored);
    } finally {
      deadline.end();
      await this.control.evaluationResults.release(claimKey, token);
    }
  }

  private readFacts(projectId: string, s: Subject | DatasetItemSubject): Promise<SubjectFacts> {
    switch (s.kind) {
      case 'SUBJECT_KIND_DATASET_ITEM':
        return Promise.resolve(s.facts);
      case 'SUBJECT_KIND_AGENT_RUN':
        return this.facts.run(projectId, s.runId);
      case 'SUBJECT_KIND_AGENT_STEP':
        return this.facts.step(projectId, s.runId, s.spanId);
      case 'SUBJECT_KIND_AGENT_SESSION':
        return this.facts.session(projectId, s.sessionKey);
    }
  }

  private async score(input: EvaluateInput, parsed: EvaluatorConfig, facts: SubjectFacts, signal: AbortSignal): Promise<ScoreOutcome> {
    if (parsed.kind !== 'EVALUATOR_KIND_LLM_JUDGE') return this.modelless.score(parsed, facts);
    return this.judge.score({
      orgId: input.orgId,
      projectId: input.projectId,
      config: parsed.config,
      facts,
      credentialMayReadContent: input.trigger.sampling === 'SAMPLED' || hasScope(input.trigger.caller, CONTENT_READ_SCOPE),
      signal,
    });
  }

  private async store(
    input: EvaluateInput,
    metricName: string,
    key: EvaluationKey,
    kind: Parameters<EvaluationBudget['admit']>[1],
    facts: SubjectFacts,
    s: ScoreOutcome,
  ): Promise<EvaluateAnswer> {
    const at = this.clock.now().toISOString();
    const mode: EvaluationMode =
      input.trigger.sampling === 'SAMPLED' ? 'EVALUATION_MODE_SAMPLED' : input.trigger.sampling === 'WHOLE_DATASET' ? 'EVALUATION_MODE_EXPERIMENT' : 'EVALUATION_MODE_ON_DEMAND';
    // Whatever a model call cost is spent, also when it gave no score.
    const spent = s.outcome === 'withheld' ? undefined : s.execution;
    if (spent) await this.budget.charge(input.orgId, { costNanos: spent.cost_state === 'CHARGED' ? spent.charged_cost_nano_usd : 0, kind });
    if (s.outcome === 'scored') {
      const execution: Execution =
        input.trigger.sampling === 'SAMPLED'
          ? { sampling: 'SAMPLED', sampling_rule_id: input.trigger.samplingRuleId, sampling_rate: input.trigger.samplingRate, ...s.execution }
          : { sampling: input.trigger.sampling, ...s.execution };
      const rec: ResultRecord = {
        id: this.ids.uuid(),
        orgId: input.orgId,
        projectId: key.projectId,
        evaluatorId: key.evaluatorId,
        evaluatorVersion: key.evaluatorVersion,
        metricName,
        mode,
        subjectKind: key.subjectKind,
        subjectRef: key.subjectRef,
        numericValue: s.numericValue,
        label: s.label,
        explanation: s.explanation,
        subjectRelease: releaseOf(facts),
        legacySource: '',
        occurredAt: occurredAt(facts),
        evaluatedAt: at,
        execution,
      };
      const inserted = await this.control.evaluationResults.insert(rec);
      await this.control.evaluationResults.clearUnscored(key);
      if (!inserted) {
        const first = await this.control.evaluationResults.find(key);
        return { outcome: 'scored', alreadyEvaluated: true, resultId: first!.id };
      }
      return { outcome: 'scored', alreadyEvaluated: false, resultId: rec.id };
    }
    const details: Record<string, unknown> =
      s.outcome === 'withheld' ? { ...s.withheld } : { ...(s.execution ? { execution: s.execution } : {}) };
    await this.control.evaluationResults.recordUnscored({
      ...key,
      id: this.ids.uuid(),
      orgId: input.orgId,
      mode,
      outcome: s.outcome,
      reason: s.outcome === 'withheld' ? `withheld:${s.withheld.content_class}` : s.reason,
      details,
      attempts: 1,
      firstAt: at,
      lastAt: at,
    });
    if (s.outcome === 'withheld')
      return { outcome: 'withheld', contentClass: s.withheld.content_class, boundary: s.withheld.boundary, decidedBy: s.withheld.decided_by };
    return { outcome: 'unmeasured', reason: s.reason, ...(s.execution ? { execution: s.execution, metricName } : {}) };
  }
}

const iso = isoMicros;

function occurredAt(f: SubjectFacts): string {
  switch (f.kind) {
    case 'run':
      return iso(f.startUs);
    case 'step':
      return iso(f.step.startUs);
    case 'session':
      return iso(f.startUs);
  }
}

function releaseOf(f: SubjectFacts): string | null {
  return f.kind === 'step' ? f.run.release : f.release;
}
