/**
 * What the sampling job does with each answer of the runner, over real runs (sent by the OpenTelemetry
 * SDK): a spent budget stops the rule for the tick without passing the run; unmeasured runs are retried
 * with backoff and then given up (readable); withheld ones are never retried; a failed evaluation is
 * retried like an unmeasured one; a tick stopped mid-evaluation leaves the run to the next; two runners of
 * one rule never evaluate a run twice. The rules and the runner are the seams (see job-fixture.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../jobs/clock.js';
import { RETRY_POLICY } from './attempt.js';
import { SamplingJob } from './job.js';
import { budgetSpent, freshProject, ids, scored, sendRuns, settled, useSamplingApp, type Script } from './job-fixture.js';

const env = useSamplingApp();
const wire = (script?: Script) => env.wire(script);
const tick = (at?: Date) => env.tick(at);
const MIN = 60_000;

describe('evaluation.sampling outcomes', () => {
  it('"429 | daily evaluation budget spent" stops the rule for the tick without passing the run; the next UTC day goes on from it', async () => {
    // The runner admits and charges through the real budget service (a model judge costing 40 nano-dollars each).
    const budget = env.t.ctx.evaluationBudget;
    wire(async (input) => {
      try {
        await budget.admit(input.orgId, 'EVALUATOR_KIND_LLM_JUDGE');
      } catch (e) {
        return e as Error;
      }
      await budget.charge(input.orgId, { costNanos: 40, kind: 'EVALUATOR_KIND_LLM_JUDGE' });
      return scored;
    });
    const clock = env.t.ctx.clock as ManualClock;
    clock.set(new Date().toISOString());
    await budget.put({ kind: 'api_key', keyId: 'k', signInId: null, connectionId: null, orgId: env.t.orgId, projectId: null, scopes: new Set(), userId: null, role: null }, { daily_limit_nano_usd: 100 });
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-budget', orgId: env.t.orgId, projectId: p.projectId });
    const runs = await sendRuns(env.base, p.key, 5);
    const [first] = await tick();
    // Admitted at 0, 40, 80 spent; the fourth is refused.
    expect(first).toMatchObject({ evaluated: ids(runs.slice(0, 3)), stoppedBy: 'budget', after: runs[2] });
    const [again] = await tick();
    expect(again).toMatchObject({ evaluated: [], stoppedBy: 'budget', after: runs[2] });
    expect(await env.t.ctx.control.evaluationSampling.cursor('r-budget')).toMatchObject({ after: runs[2], pending: null });
    // The next UTC midnight by the service clock (the owner key stays valid: this is the last test to move it).
    clock.set(new Date((Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000).toISOString());
    const [nextDay] = await tick();
    expect(nextDay).toMatchObject({ evaluated: ids(runs.slice(3)), stoppedBy: null });
    // Refused evaluations were asked again, never skipped; each run was scored once.
    const scoredRuns = env.runner.calls.map((c) => c.subjectRef).filter((r, i, all) => all.indexOf(r) === i);
    expect(scoredRuns).toEqual(ids(runs));
    expect((await budget.state(env.t.orgId)).spend).toEqual({ spentNanoUsd: 80, evaluations: 2 });
  });

  it(`unmeasured runs are retried after 10 min, then 20, 40 and 80 min, ${RETRY_POLICY.maxTries} tries in all, then given up and readable`, async () => {
    let unmeasured = new Set<string>();
    wire((input) => (unmeasured.has(input.subjectRef) ? { outcome: 'unmeasured', reason: 'the run has no steps yet' } : scored));
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-retry', orgId: env.t.orgId, projectId: p.projectId });
    const [stuck, fine, late] = await sendRuns(env.base, p.key, 3);
    unmeasured = new Set([stuck.traceId, late.traceId]);
    const t0 = settled().getTime();
    await tick(new Date(t0));
    const count = (id: string) => env.runner.calls.filter((c) => c.subjectRef === id).length;
    expect([count(stuck.traceId), count(fine.traceId), count(late.traceId)]).toEqual([1, 1, 1]);
    const retryOf = async (id: string) => (await env.t.ctx.control.evaluationSampling.retries('r-retry')).find((r) => r.traceId === id);
    expect(await retryOf(stuck.traceId)).toMatchObject({ state: 'waiting', attempts: 1, reason: 'the run has no steps yet', nextAt: new Date(t0 + 10 * MIN).toISOString() });
    expect(await retryOf(fine.traceId)).toBeUndefined();
    // Not before the backoff.
    await tick(new Date(t0 + 10 * MIN - 1));
    expect(count(stuck.traceId)).toBe(1);
    // The late one becomes measurable: its retry scores it and its record goes.
    unmeasured.delete(late.traceId);
    let at = t0 + 10 * MIN;
    const [r2] = await tick(new Date(at));
    expect(r2.retried.sort()).toEqual([stuck.traceId, late.traceId].sort());
    expect(await retryOf(late.traceId)).toBeUndefined();
    expect(await retryOf(stuck.traceId)).toMatchObject({ attempts: 2, nextAt: new Date(at + 20 * MIN).toISOString() });
    for (const wait of [20, 40, 80]) {
      await tick(new Date(at + wait * MIN - 1));
      const before = count(stuck.traceId);
      at += wait * MIN;
      await tick(new Date(at));
      expect(count(stuck.traceId)).toBe(before + 1);
    }
    expect(count(stuck.traceId)).toBe(RETRY_POLICY.maxTries);
    expect(await retryOf(stuck.traceId)).toMatchObject({ state: 'given_up', attempts: RETRY_POLICY.maxTries, reason: 'the run has no steps yet' });
    await tick(new Date(at + 1000 * MIN));
    expect(count(stuck.traceId)).toBe(RETRY_POLICY.maxTries);
    expect(count(fine.traceId)).toBe(1);
  });

  it('withheld is recorded and never retried; a failed evaluation is retried like an unmeasured one', async () => {
    let failing = true;
    wire((input, n) => {
      if (n === 1) return { outcome: 'withheld', contentClass: 'model_transcript', boundary: 'judge_transfer', decidedBy: 'project_policy' };
      return failing ? new Error('judge provider timed out') : scored;
    });
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-withheld', orgId: env.t.orgId, projectId: p.projectId });
    const [w, f] = await sendRuns(env.base, p.key, 2);
    const t0 = settled().getTime();
    await tick(new Date(t0));
    const records = await env.t.ctx.control.evaluationSampling.retries('r-withheld');
    expect(records.find((r) => r.traceId === w.traceId)).toMatchObject({ state: 'withheld', reason: 'withheld: model_transcript at judge_transfer (decided by project_policy)' });
    expect(records.find((r) => r.traceId === f.traceId)).toMatchObject({ state: 'waiting', attempts: 1, reason: 'failed: judge provider timed out' });
    failing = false;
    await tick(new Date(t0 + 10 * MIN));
    await tick(new Date(t0 + 1000 * MIN));
    expect(env.runner.runs()).toEqual([w.traceId, f.traceId, f.traceId]);
    expect((await env.t.ctx.control.evaluationSampling.retries('r-withheld')).map((r) => r.traceId)).toEqual([w.traceId]);
  });

  it('a budget refusal of a retry gives the retry back untouched (it is not a try)', async () => {
    let refuse = false;
    wire(() => (refuse ? budgetSpent() : { outcome: 'unmeasured', reason: 'nothing yet' }));
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-retry-budget', orgId: env.t.orgId, projectId: p.projectId });
    const [run] = await sendRuns(env.base, p.key, 1);
    const t0 = settled().getTime();
    await tick(new Date(t0));
    const before = (await env.t.ctx.control.evaluationSampling.retries('r-retry-budget'))[0];
    refuse = true;
    const [r] = await tick(new Date(t0 + 10 * MIN));
    expect(r.stoppedBy).toBe('budget');
    expect((await env.t.ctx.control.evaluationSampling.retries('r-retry-budget'))[0]).toEqual(before);
    expect(before).toMatchObject({ traceId: run.traceId, attempts: 1 });
  });

  it('a tick stopped mid-evaluation leaves the run claimed; the next tick evaluates it first and skips nothing', async () => {
    const stop = new AbortController();
    wire((_input, n) => {
      if (n === 2) {
        stop.abort();
        return new Error('aborted');
      }
      return scored;
    });
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-abort', orgId: env.t.orgId, projectId: p.projectId });
    const runs = await sendRuns(env.base, p.key, 3);
    const [r1] = await env.t.ctx.evaluationSampling.tick(settled(), stop.signal);
    expect(r1).toMatchObject({ stoppedBy: 'aborted', evaluated: [runs[0].traceId] });
    expect(await env.t.ctx.control.evaluationSampling.cursor('r-abort')).toMatchObject({ after: runs[0], pending: runs[1] });
    await tick();
    expect(env.runner.runs()).toEqual([runs[0].traceId, runs[1].traceId, runs[1].traceId, runs[2].traceId]);
    expect(await env.t.ctx.control.evaluationSampling.cursor('r-abort')).toMatchObject({ after: runs[2], pending: null });
  });

  it('two runners ticking one rule at once never evaluate the same run twice', async () => {
    // Each evaluation yields to the event loop, so the two ticks interleave at every await.
    wire(async () => {
      await new Promise((r) => setTimeout(r, 3));
      return scored;
    });
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-two', orgId: env.t.orgId, projectId: p.projectId });
    const runs = await sendRuns(env.base, p.key, 6);
    const other = new SamplingJob(env.t.ctx.control.evaluationSampling, env.t.ctx.evaluationSampling['runs'], { rules: () => env.rules, runner: () => env.runner }, env.t.ctx.evaluationSampling.settings);
    for (let i = 0; i < 4; i++) {
      const at = settled();
      await Promise.all([env.t.ctx.evaluationSampling.tick(at), other.tick(at)]);
    }
    expect([...env.runner.runs()].sort()).toEqual(ids(runs).sort());
  });
  it('one rule\'s failure does not hold up the others; the tick then fails naming it (the job runner records and retries it)', async () => {
    wire();
    const good = await freshProject(env.t);
    const bad = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-bad', orgId: env.t.orgId, projectId: bad.projectId });
    env.rules.put({ ruleId: 'r-good', orgId: env.t.orgId, projectId: good.projectId });
    const runs = await sendRuns(env.base, good.key, 2);
    const real = env.t.ctx.evaluationSampling['runs'];
    const flaky = {
      runStarts: (projectId: string, o: Parameters<typeof real.runStarts>[1]) => (projectId === bad.projectId ? Promise.reject(new Error('telemetry store unreachable')) : real.runStarts(projectId, o)),
    };
    const job = new SamplingJob(env.t.ctx.control.evaluationSampling, flaky, { rules: () => env.rules, runner: () => env.runner }, env.t.ctx.evaluationSampling.settings);
    await expect(job.tick(settled())).rejects.toThrow('rule r-bad: telemetry store unreachable');
    expect(env.runner.runs()).toEqual(ids(runs));
  });
});
