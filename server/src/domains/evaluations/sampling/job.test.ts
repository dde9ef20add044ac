/**
 * The sampling job over real runs (sent by the OpenTelemetry SDK): "Nothing is evaluated unless a rule
 * exists", history is not evaluated, the watermark, the settle delay, `per_tick_limit` with the backlog
 * carried, selection by the run's hash, disabled rules, and the job as the runner schedules it. The rules
 * and the evaluation runner are the seams (see job-fixture.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../jobs/clock.js';
import { SAMPLING_JOB_KIND } from './job.js';
import { SETTLE_SECONDS, freshProject, ids, sendRuns, settled, useSamplingApp, type Script } from './job-fixture.js';
import { selects } from './selection.js';

const env = useSamplingApp();
const wire = (script?: Script) => env.wire(script);
const tick = (at?: Date) => env.tick(at);

describe('evaluation.sampling', () => {
  it('"Nothing is evaluated unless a rule exists": runs alone, or rules of no source, evaluate nothing', async () => {
    const p = await freshProject(env.t);
    await sendRuns(env.base, p.key, 2);
    expect(await tick()).toEqual([]); // no rule source wired yet
    wire();
    expect(await tick()).toEqual([]);
    expect(env.runner.calls).toEqual([]);
  });

  it('history is not evaluated; new runs are, oldest first, each once, with the SAMPLED trigger of the rule', async () => {
    wire();
    const p = await freshProject(env.t);
    const history = await sendRuns(env.base, p.key, 2);
    env.rules.put({ ruleId: 'r-new', orgId: env.t.orgId, projectId: p.projectId, samplingRate: 1, evaluator: { evaluator_id: 'ev-x', version: 3 } });
    const fresh = await sendRuns(env.base, p.key, 3);
    const [report] = await tick();
    expect(env.runner.runs()).toEqual(ids(fresh));
    expect(env.runner.runs()).not.toContain(history[0].traceId);
    expect(env.runner.calls[0]).toEqual({
      orgId: env.t.orgId,
      projectId: p.projectId,
      evaluator: { evaluator_id: 'ev-x', version: 3 },
      subjectKind: 'SUBJECT_KIND_AGENT_RUN',
      subjectRef: fresh[0].traceId,
      trigger: { sampling: 'SAMPLED', samplingRuleId: 'r-new', samplingRate: 1 },
    });
    expect(report).toMatchObject({ ruleId: 'r-new', stoppedBy: null, after: fresh[2] });
    // The watermark holds: a second tick finds nothing new; a later run is the only one evaluated.
    await tick();
    expect(env.runner.calls).toHaveLength(3);
    const later = await sendRuns(env.base, p.key, 1);
    await tick();
    expect(env.runner.runs()).toEqual([...ids(fresh), ...ids(later)]);
    expect(await env.t.ctx.control.evaluationSampling.cursor('r-new')).toMatchObject({ after: later[0], pending: null });
  });

  it(`a run is looked at only once it started ${SETTLE_SECONDS} s (the settle delay) before the tick`, async () => {
    wire();
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-settle', orgId: env.t.orgId, projectId: p.projectId });
    const [run] = await sendRuns(env.base, p.key, 1);
    await tick(new Date(run.startUs / 1000 + SETTLE_SECONDS * 1000 - 1));
    expect(env.runner.calls).toEqual([]);
    await tick(new Date(run.startUs / 1000 + SETTLE_SECONDS * 1000 + 1));
    expect(env.runner.runs()).toEqual([run.traceId]);
  });

  it('per_tick_limit: at most that many a tick; the selected runs beyond it wait for the next tick, none dropped, none twice', async () => {
    wire();
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-limit', orgId: env.t.orgId, projectId: p.projectId, perTickLimit: 2 });
    const runs = await sendRuns(env.base, p.key, 5);
    const reports = [];
    for (let i = 0; i < 4; i++) reports.push((await tick())[0]);
    expect(env.runner.runs()).toEqual(ids(runs));
    expect(reports.map((r) => [r.evaluated.length, r.stoppedBy])).toEqual([
      [2, 'per_tick_limit'],
      [2, 'per_tick_limit'],
      [1, null],
      [0, null],
    ]);
  });

  it('"selection is derived from a stable hash of the run": exactly the runs the hash selects are evaluated, the others never', async () => {
    wire();
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-half', orgId: env.t.orgId, projectId: p.projectId, samplingRate: 0.5 });
    const runs = await sendRuns(env.base, p.key, 12);
    await tick();
    await tick();
    const chosen = runs.filter((r) => selects('r-half', r.traceId, 0.5));
    expect(env.runner.runs()).toEqual(ids(chosen));
    // The cursor passed the unselected ones too.
    expect((await env.t.ctx.control.evaluationSampling.cursor('r-half'))!.after).toEqual(runs[runs.length - 1]);
  });

  it('"enabled: false ... disables a rule": a disabled rule selects nothing, and on resuming it does not go back for the runs of its pause', async () => {
    wire();
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-off', orgId: env.t.orgId, projectId: p.projectId });
    const before = await sendRuns(env.base, p.key, 1);
    await tick();
    env.rules.put({ ruleId: 'r-off', orgId: env.t.orgId, projectId: p.projectId, enabled: false, updatedAt: new Date().toISOString() });
    const during = await sendRuns(env.base, p.key, 2);
    expect(await tick()).toEqual([]);
    expect((await env.t.ctx.control.evaluationSampling.cursor('r-off'))!.pausedAt).not.toBeNull();
    env.rules.put({ ruleId: 'r-off', orgId: env.t.orgId, projectId: p.projectId, enabled: true, updatedAt: new Date().toISOString() });
    const after = await sendRuns(env.base, p.key, 1);
    await tick();
    expect(env.runner.runs()).toEqual([...ids(before), ...ids(after)]);
    expect(env.runner.runs()).not.toContain(during[0].traceId);
  });

  it('runs sharing a start time are not skipped: the cursor orders by (start, trace id), one a tick with per_tick_limit 1', async () => {
    wire();
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-ties', orgId: env.t.orgId, projectId: p.projectId, perTickLimit: 1 });
    const startNs = BigInt(Date.now()) * 1_000_000n;
    // Three runs starting at the same nanosecond, sent as OTLP JSON (an SDK cannot be made to tie).
    const spans = ['c', 'a', 'b'].map((c) => ({
      traceId: c.repeat(32),
      spanId: c.repeat(16),
      name: 'invoke_agent tie',
      kind: 1,
      startTimeUnixNano: String(startNs),
      endTimeUnixNano: String(startNs + 1_000_000n),
      attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } }],
    }));
    const res = await env.t.call({
      method: 'POST',
      url: '/v1/traces',
      key: p.key,
      headers: { 'content-type': 'application/json' },
      payload: { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'ties' } }] }, scopeSpans: [{ spans }] }] },
    });
    expect(res.statusCode).toBe(200);
    for (let i = 0; i < 4; i++) await tick();
    expect(env.runner.runs()).toEqual(['a'.repeat(32), 'b'.repeat(32), 'c'.repeat(32)]);
  });

  it('rules of other projects never read this project\'s runs', async () => {
    wire();
    const a = await freshProject(env.t);
    const b = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-a', orgId: env.t.orgId, projectId: a.projectId });
    const runsB = await sendRuns(env.base, b.key, 2);
    await tick();
    expect(env.runner.runs().filter((r) => ids(runsB).includes(r))).toEqual([]);
  });

  it(`the job is registered as ${SAMPLING_JOB_KIND} and runs on the job runner's schedule`, async () => {
    wire();
    const p = await freshProject(env.t);
    env.rules.put({ ruleId: 'r-job', orgId: env.t.orgId, projectId: p.projectId });
    const runs = await sendRuns(env.base, p.key, 2);
    const clock = env.t.ctx.clock as ManualClock;
    clock.set(settled().toISOString());
    await env.t.ctx.jobs.runDue();
    expect(env.runner.runs()).toEqual(ids(runs));
    const [job] = await env.t.ctx.jobs.list({ kind: SAMPLING_JOB_KIND });
    expect(job).toMatchObject({ everySeconds: 60, lastError: null });
    // The next occurrence is due a period later.
    const more = await sendRuns(env.base, p.key, 1);
    clock.advance((SETTLE_SECONDS + 60) * 1000);
    await env.t.ctx.jobs.runDue();
    expect(env.runner.runs()).toEqual([...ids(runs), ...ids(more)]);
  });
});
