/**
 * The sampling job, `evaluation.sampling` (docs/evaluations-sampling.md): each tick, for every active rule,
 * evaluates the project's new runs the rule selects, at most `per_tick_limit` of them, through the
 * evaluation runner. Nothing is evaluated unless a rule exists.
 *
 * Each rule has a durable cursor over its project's runs, ordered by (start, trace id): a run is claimed
 * (the cursor's compare-and-set records it as pending) before it is evaluated and passed after, so two
 * runners of one rule never both evaluate a run, a tick that stops mid-evaluation leaves the run for the
 * next one, and runs sharing a start time are not skipped. A rule starts at its creation (history is not
 * evaluated); a rule found inactive is paused and resumes with runs started after it was last updated.
 */
import type { AgentRunsStore, RunPosition } from '../../agent-runs/store.js';
import type { EvaluationRunner, SamplingRuleRecord, SamplingRules } from '../ports.js';
import { attempt, recordFirst, retryAfter, retryDelaySeconds, type AttemptResult } from './attempt.js';
import { selects } from './selection.js';
import type { SamplingCursor, SamplingStore } from './store.js';

export const SAMPLING_JOB_KIND = 'evaluation.sampling';

export interface SamplingSettings {
  /** Seconds between ticks (SVC_EVAL_SAMPLING_INTERVAL_SECONDS, default 60). */
  everySeconds: number;
  /** A run is looked at once it started this long ago (SVC_EVAL_SAMPLING_SETTLE_SECONDS, default 300). */
  settleSeconds: number;
}
export const DEFAULT_SAMPLING_SETTINGS: SamplingSettings = { everySeconds: 60, settleSeconds: 300 };

/** Runs read per page of the scan, and at most per rule and tick (a low rate passes many runs; the rest wait for the next tick). */
export const SCAN_PAGE = 200;
export const MAX_SCANNED_PER_TICK = 10_000;

/** The other parts' ports, read when a tick runs (undefined until they are wired: then no rule exists). */
export interface SamplingPorts {
  rules(): SamplingRules | undefined;
  runner(): EvaluationRunner | undefined;
}

/** What one tick did for one rule. */
export interface RuleTick {
  ruleId: string;
  /** Runs whose evaluation was asked for this tick (first tries and retries). */
  evaluated: string[];
  retried: string[];
  /** Why the rule stopped before running out of runs, if it did. */
  stoppedBy: 'per_tick_limit' | 'budget' | 'conflict' | 'aborted' | 'scan_limit' | null;
  after: RunPosition;
}

const usOf = (iso: string) => Date.parse(iso) * 1000;
const later = (a: RunPosition, b: RunPosition) => (a.startUs > b.startUs || (a.startUs === b.startUs && a.traceId > b.traceId) ? a : b);
const SAMPLED_KINDS = new Set(['SUBJECT_KIND_AGENT_RUN']);

export class SamplingJob {
  constructor(
    private readonly store: SamplingStore,
    private readonly runs: Pick<AgentRunsStore, 'runStarts'>,
    private readonly ports: SamplingPorts,
    readonly settings: SamplingSettings = DEFAULT_SAMPLING_SETTINGS,
  ) {}

  async tick(now: Date, signal?: AbortSignal): Promise<RuleTick[]> {
    const rules = this.ports.rules();
    const active = rules ? (await rules.active()).filter((r) => r.enabled && r.samplingRate > 0 && r.perTickLimit > 0 && SAMPLED_KINDS.has(r.subjectKind)) : [];
    await this.store.pauseOthers(
      active.map((r) => r.ruleId),
      now.toISOString(),
    );
    if (active.length === 0) return [];
    const runner = this.ports.runner();
    if (!runner) throw new Error('evaluation sampling: rules are active but no evaluation runner is wired');
    const out: RuleTick[] = [];
    const failed: string[] = [];
    for (const rule of active) {
      if (signal?.aborted) break;
      // One rule's failure (its project's runs unreadable, a store error) does not hold up the others.
      try {
        out.push(await new RuleTickRun(this.store, this.runs, runner, rule, now, this.settings, signal).run());
      } catch (e) {
        failed.push(`rule ${rule.ruleId}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    // The job records the failure (and the runner retries it); the rules that ran keep their progress.
    if (failed.length) throw new Error(`evaluation sampling failed for ${failed.length} rule(s): ${failed.join('; ')}`);
    return out;
  }
}

/** One rule's share of a tick. */
class RuleTickRun {
  private left: number;
  private cur!: SamplingCursor;
  private readonly report: RuleTick;
  private readonly at: string;

  constructor(
    private readonly store: SamplingStore,
    private readonly runs: Pick<AgentRunsStore, 'runStarts'>,
    private readonly runner: EvaluationRunner,
    private readonly rule: SamplingRuleRecord,
    private readonly now: Date,
    private readonly settings: SamplingSettings,
    private readonly signal?: AbortSignal,
  ) {
    this.left = rule.perTickLimit;
    this.at = now.toISOString();
    this.report = { ruleId: rule.ruleId, evaluated: [], retried: [], stoppedBy: null, after: { startUs: 0, traceId: '' } };
  }

  async run(): Promise<RuleTick> {
    if ((await this.open()) && (await this.finishPending()) && (await this.retries())) await this.scan();
    this.report.after = this.cur.after;
    return this.report;
  }

  private stop(why: NonNullable<RuleTick['stoppedBy']>): false {
    this.report.stoppedBy = why;
    return false;
  }

  /** Compare-and-set of the cursor; false (and the rule stops for this tick) when another runner moved it. */
  private async move(after: RunPosition, pending: RunPosition | null): Promise<boolean> {
    if (!(await this.store.advance(this.rule.ruleId, this.cur.version, { after, pending, at: this.at }))) return this.stop('conflict');
    this.cur = { ...this.cur, after, pending, pausedAt: null, version: this.cur.version + 1 };
    return true;
  }

  /** The rule's cursor: created at the rule's creation; a paused one resumes at the rule's last update. */
  private async open(): Promise<boolean> {
    const { ruleId, orgId, projectId } = this.rule;
    this.cur = (await this.store.cursor(ruleId)) ?? (await this.store.createCursor({ ruleId, orgId, projectId, after: { startUs: usOf(this.rule.createdAt), traceId: '' }, updatedAt: this.at }));
    if (this.cur.pausedAt === null) return true;
    // Runs that started while the rule was inactive (and those it had not reached) are not evaluated.
    return this.move(later(this.cur.after, { startUs: usOf(this.rule.updatedAt), traceId: '' }), null);
  }

  /** Evaluates a claimed run and passes it, or gives the claim back; false when the rule stops here. */
  private async evaluateClaimed(run: RunPosition, previous: RunPosition): Promise<boolean> {
    const a = await attempt(this.runner, this.rule, run.traceId, this.signal);
    if (a.result === 'aborted') return this.stop('aborted'); // still pending: the next tick evaluates it
    if (a.result === 'budget') {
      await this.move(previous, null);
      return this.stop('budget');
    }
    this.report.evaluated.push(run.traceId);
    this.left--;
    await recordFirst(this.store, this.rule, run, a, this.now);
    return this.move(run, null);
  }

  /** A run a previous tick claimed and did not finish (it stopped or its node died). */
  private async finishPending(): Promise<boolean> {
    const run = this.cur.pending;
    if (!run) return true;
    const previous = this.cur.after;
    // Claimed again, so a second runner that reads the same pending run loses the compare-and-set.
    return (await this.move(previous, run)) && this.evaluateClaimed(run, previous);
  }

  /** Due retries of unmeasured (or failed) runs, oldest due first, within the per-tick limit. */
  private async retries(): Promise<boolean> {
    if (this.left <= 0) return this.stop('per_tick_limit');
    for (const r of await this.store.dueRetries(this.rule.ruleId, this.at, this.left)) {
      if (this.signal?.aborted) return this.stop('aborted');
      const tries = r.attempts + 1;
      // The claim: the next try is booked before it runs (a second runner's claim then fails).
      const booked = { ...r, attempts: tries, nextAt: new Date(this.now.getTime() + retryDelaySeconds(tries) * 1000).toISOString(), updatedAt: this.at };
      if (!(await this.store.updateRetry(r.ruleId, r.traceId, r.attempts, booked))) continue;
      const a = await attempt(this.runner, this.rule, r.traceId, this.signal);
      const back: AttemptResult[] = ['budget', 'aborted'];
      if (back.includes(a.result)) {
        await this.store.updateRetry(r.ruleId, r.traceId, tries, r); // not a try: given back as it was
        return this.stop(a.result === 'budget' ? 'budget' : 'aborted');
      }
      this.report.evaluated.push(r.traceId);
      this.report.retried.push(r.traceId);
      this.left--;
      await this.store.updateRetry(r.ruleId, r.traceId, tries, retryAfter(this.rule, r, tries, a, this.now) ?? null);
    }
    return true;
  }

  /** New runs after the cursor that started before now minus the settle delay, oldest first. */
  private async scan(): Promise<void> {
    const beforeUs = this.now.getTime() * 1000 - this.settings.settleSeconds * 1_000_000;
    let passed = this.cur.after;
    let scanned = 0;
    for (;;) {
      if (scanned >= MAX_SCANNED_PER_TICK) {
        this.stop('scan_limit');
        break;
      }
      const page = await this.runs.runStarts(this.rule.projectId, { after: passed, beforeUs, limit: Math.min(SCAN_PAGE, MAX_SCANNED_PER_TICK - scanned) });
      for (const run of page) {
        scanned++;
        if (!selects(this.rule.ruleId, run.traceId, this.rule.samplingRate)) {
          passed = run;
          continue;
        }
        // Selected beyond the limit: it waits for the next tick (the cursor stays before it).
        if (this.left <= 0) return void (await this.settle(passed, 'per_tick_limit'));
        if (this.signal?.aborted) return void (await this.settle(passed, 'aborted'));
        if (!(await this.move(passed, run))) return;
        if (!(await this.evaluateClaimed(run, passed))) return;
        passed = run;
      }
      if (page.length < SCAN_PAGE) break;
    }
    await this.settle(passed, null);
  }

  /** Records the runs passed without selection. */
  private async settle(passed: RunPosition, why: RuleTick['stoppedBy']): Promise<void> {
    if (why) this.stop(why);
    if (passed !== this.cur.after) await this.move(passed, null);
  }
}
