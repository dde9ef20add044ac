/**
 * The content-policy rules for judges: runs sent with the real OpenTelemetry SDK, stored under a content
 * policy, read back through the agent-runs store and judged by a real HTTP judge model on loopback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { verdict } from '../../../testing/judge-model-server.js';
import { ALL_CONTENT, SECRET_COMPLETION, SECRET_PROMPT, SECRET_TOOL_ARGS, input, judgeFixture, judgeOf, projectWith, rubric, sendRun, type JudgeFixture } from './judge-fixture.js';

let f: JudgeFixture;
beforeAll(async () => {
  f = await judgeFixture();
});
afterAll(async () => f?.close());
afterEach(() => vi.restoreAllMocks());

const usable = () => ({ content: verdict({ helpful: 1, grounded: 1 }) });

describe('content-policy interplay for judges', () => {
  it('1. "Policy is consulted before anything is sent, at boundary judge_transfer"', async () => {
    const p = await projectWith(f);
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    const sent = f.server.requests.length;
    // What the model server had received when each decision was asked.
    const seenAtDecision: number[] = [];
    const decide = vi.spyOn(f.t.ctx.contentPolicy, 'decide').mockImplementation(async () => {
      seenAtDecision.push(f.server.requests.length);
      return { decision: 'allow', decided_by: 'policy' };
    });
    f.server.script(usable());
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric()));
    expect(out.outcome).toBe('scored');
    expect(decide.mock.calls.map((c) => [c[0], c[1], c[2]])).toEqual([
      [p.projectId, 'model_transcript', 'judge_transfer'],
      [p.projectId, 'tool_arguments', 'judge_transfer'],
    ]);
    expect(seenAtDecision).toEqual([sent, sent]);
    expect(f.server.requests.length).toBe(sent + 1);
    expect(f.server.userMessage()).toContain('refund policy order 4471');
  });

  it('2. "a tool_calls rubric over a run with no recorded tool arguments asks nothing about tool_arguments"', async () => {
    // tool_arguments may not go to a judge, but the run recorded none: nothing is asked, nothing refused.
    const p = await projectWith(f, (c, b) => (c === 'tool_arguments' && b === 'judge_transfer' ? 'deny' : undefined));
    const facts = await sendRun(f, p.key, p.projectId, { prompt: SECRET_PROMPT });
    const decide = vi.spyOn(f.t.ctx.contentPolicy, 'decide');
    f.server.script(usable());
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric({ evidence: ['run_summary', 'tool_calls'] })));
    expect(out.outcome).toBe('scored');
    expect(decide).not.toHaveBeenCalled();
    const asked = f.server.userMessage();
    expect(asked).toContain('<evidence section="run_summary">');
    expect(asked).not.toContain('tool_calls');
    expect(asked).not.toContain(SECRET_PROMPT);
  });

  const refusals = [
    ['3. "a refusal refuses the whole evaluation": deny of model_transcript is withheld, decided by the policy, nothing sent', 'model_transcript', 'deny'],
    ['3. allow_metadata at judge_transfer removes the bytes, so it withholds too', 'tool_arguments', 'allow_metadata'],
  ] as const;
  for (const [name, cls, decision] of refusals)
    it(name, async () => {
      const p = await projectWith(f, (c, b) => (c === cls && b === 'judge_transfer' ? decision : undefined));
      const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
      const sent = f.server.requests.length;
      const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric()));
      expect(out).toEqual({ outcome: 'withheld', withheld: { content_class: cls, boundary: 'judge_transfer', decided_by: 'policy' } });
      expect(f.server.requests.length).toBe(sent);
    });

  it('3. no policy yet: withheld, decided by no_policy', async () => {
    const p = await projectWith(f);
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    // The content was stored under a policy; the policy is then gone (the store finds none).
    vi.spyOn(f.t.ctx.control.contentPolicies, 'find').mockResolvedValue(undefined);
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric({ evidence: ['model_transcript'] })));
    expect(out).toEqual({ outcome: 'withheld', withheld: { content_class: 'model_transcript', boundary: 'judge_transfer', decided_by: 'no_policy' } });
  });

  it('3. a policy that cannot be read: withheld, decided by policy_unreadable', async () => {
    const p = await projectWith(f);
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    vi.spyOn(f.t.ctx.control.contentPolicies, 'find').mockRejectedValue(new Error('database down'));
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric({ evidence: ['tool_calls'] })));
    expect(out).toEqual({ outcome: 'withheld', withheld: { content_class: 'tool_arguments', boundary: 'judge_transfer', decided_by: 'policy_unreadable' } });
  });

  it('4. "If removal was not the policy\'s decision (a narrower credential), the evaluation proceeds and the model is told which kinds were withheld"', async () => {
    const p = await projectWith(f);
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    const decide = vi.spyOn(f.t.ctx.contentPolicy, 'decide');
    f.server.script(usable());
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric(), { credentialMayReadContent: false }));
    expect(out.outcome).toBe('scored');
    if (out.outcome !== 'scored') return;
    expect(out.execution.job_status).toBe('PARTIAL');
    expect(out.execution.job_failure_class).toBe('withheld_by_credential:model_transcript,tool_arguments');
    expect(decide).not.toHaveBeenCalled();
    const asked = f.server.userMessage();
    expect(asked).toContain('withheld from you: model_transcript, tool_arguments');
    for (const secret of [SECRET_PROMPT, SECRET_COMPLETION, SECRET_TOOL_ARGS]) expect(asked).not.toContain(secret);
    expect(asked).toContain('<evidence section="step_sequence">');
  });

  it('4. a rubric of content only, under a credential that may not read it, sends nothing', async () => {
    const p = await projectWith(f);
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    const sent = f.server.requests.length;
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric({ evidence: ['model_transcript'] }), { credentialMayReadContent: false }));
    expect(out).toEqual({ outcome: 'unmeasured', reason: 'evidence_withheld_by_credential' });
    expect(f.server.requests.length).toBe(sent);
  });

  it('5. "The read cell and the judge_transfer cell are independent": read deny + judge allow sends the content', async () => {
    const p = await projectWith(f, (_c, b) => (b === 'read' ? 'deny' : undefined));
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    f.server.script(usable());
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric({ evidence: ['model_transcript'] })));
    expect(out.outcome).toBe('scored');
    expect(f.server.userMessage()).toContain(SECRET_PROMPT);
    expect(f.server.userMessage()).toContain(SECRET_COMPLETION);
    // The same project's readers are not served it.
    const read = await f.t.call({ method: 'GET', url: `/api/v1/traces/${facts.runId}?project_id=${p.projectId}` });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.body).not.toContain('refund policy for order 4471');
  });

  it('5. read allow + judge deny refuses', async () => {
    const p = await projectWith(f, (_c, b) => (b === 'judge_transfer' ? 'deny' : undefined));
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric()));
    expect(out).toMatchObject({ outcome: 'withheld', withheld: { content_class: 'model_transcript', decided_by: 'policy' } });
  });

  it('6. "A run carrying none of the selected evidence is not sent to a model" (content not stored is absent, not withheld)', async () => {
    const p = await projectWith(f, (_c, b) => (b === 'store' ? 'deny' : undefined));
    const facts = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    const sent = f.server.requests.length;
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric({ evidence: ['model_transcript', 'tool_calls'] })));
    expect(out).toEqual({ outcome: 'unmeasured', reason: 'no_selected_evidence' });
    expect(f.server.requests.length).toBe(sent);
  });

  it('content the store kept as a size marker (allow_metadata) is put to the transfer policy and shown only as the marker', async () => {
    const p = await projectWith(f, (c, b) => (c === 'model_transcript' && b === 'store' ? 'allow_metadata' : undefined));
    const facts = await sendRun(f, p.key, p.projectId, { prompt: SECRET_PROMPT });
    f.server.script(usable());
    const out = await judgeOf(f).score(input(f, p.projectId, facts, rubric({ evidence: ['model_transcript'] })));
    expect(out).toMatchObject({ outcome: 'scored', execution: { job_status: 'PARTIAL', job_failure_class: 'withheld_at_store:model_transcript' } });
    expect(f.server.userMessage()).toMatch(/\[content withheld by policy: \d+ bytes\]/);
    expect(f.server.userMessage()).not.toContain(SECRET_PROMPT);
  });

  it('a step is judged with its parent run\'s content', async () => {
    const p = await projectWith(f);
    const run = await sendRun(f, p.key, p.projectId, ALL_CONTENT);
    f.server.script(usable());
    const out = await judgeOf(f).score(input(f, p.projectId, { kind: 'step', run, step: run.steps[0]! }, rubric({ evidence: ['tool_calls'] })));
    expect(out.outcome).toBe('scored');
    expect(f.server.userMessage()).toContain(SECRET_TOOL_ARGS);
  });

  it('a session has no run content to judge: unmeasured, nothing sent', async () => {
    const p = await projectWith(f);
    const sent = f.server.requests.length;
    const session = { kind: 'session' as const, sessionKey: 's', runCount: 1, turnCount: 1, startUs: 0, durationMs: 0, costNanos: null, release: null };
    expect(await judgeOf(f).score(input(f, p.projectId, session, rubric()))).toEqual({ outcome: 'unmeasured', reason: 'no_selected_evidence' });
    expect(f.server.requests.length).toBe(sent);
  });
});
