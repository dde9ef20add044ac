/** The reference-trajectory evaluator on hand-built facts: the longest-in-order-match rule, exact, unmeasured runs. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../http/errors.js';
import { FREE_EXECUTION, type TrajectoryConfig } from '../model.js';
import { run, session, step, stepSubject, tool } from './fixtures.js';
import { longestCommonSubsequence, scoreTrajectory } from './trajectory.js';

const ops = (...names: string[]) => names.map((n) => step(n));
const C = (n: string) => `CANONICAL_OPERATION_${n}`;
const byOp = (reference: string[], match: TrajectoryConfig['match'] = 'ordered_subsequence'): TrajectoryConfig => ({ step_key: 'canonical_operation', match, reference: reference.map(C) });
const byTool = (reference: string[], match: TrajectoryConfig['match'] = 'ordered_subsequence'): TrajectoryConfig => ({ step_key: 'tool_name', match, reference });

describe('longest common subsequence', () => {
  it.each<[string[], string[], number]>([
    [['A', 'B', 'C'], ['A', 'X', 'B', 'Y'], 2],
    [['A', 'B', 'C'], ['A', 'B', 'C'], 3],
    [['A', 'B', 'C'], ['C', 'B', 'A'], 1],
    [['A', 'B', 'C'], ['X', 'A', 'Y', 'B', 'Z', 'C', 'W'], 3],
    [['A', 'A', 'B'], ['A', 'B', 'A', 'B'], 3],
    [['A', 'B'], [], 0],
    [[], ['A'], 0],
    [['A', 'B', 'C', 'D'], ['B', 'D', 'A', 'C'], 2],
  ])('%j vs %j = %d', (a, b, n) => {
    expect(longestCommonSubsequence(a, b)).toBe(n);
    expect(longestCommonSubsequence(b, a)).toBe(n);
  });
});

describe('ordered_subsequence: "scores longest in-order match divided by reference length, extra steps do not reduce it"', () => {
  it('reference [A,B,C] vs run [A,X,B,Y] = 2/3', () => {
    const o = scoreTrajectory(byOp(['INVOKE_AGENT', 'RETRIEVAL', 'CHAT']), run({ steps: ops('INVOKE_AGENT', 'EXECUTE_TOOL', 'RETRIEVAL', 'EMBEDDINGS') }));
    expect(o).toEqual({
      outcome: 'scored',
      numericValue: 2 / 3,
      label: '2/3',
      explanation: '2 of the 3 reference steps appear in order among the 4 steps',
      execution: FREE_EXECUTION,
    });
  });
  it('extra steps do not reduce it', () => {
    const ref = byOp(['RETRIEVAL', 'CHAT']);
    expect(scoreTrajectory(ref, run({ steps: ops('RETRIEVAL', 'CHAT') }))).toMatchObject({ numericValue: 1, label: '2/2' });
    expect(scoreTrajectory(ref, run({ steps: ops('CHAT', 'RETRIEVAL', 'EXECUTE_TOOL', 'CHAT', 'EMBEDDINGS') }))).toMatchObject({ numericValue: 1, label: '2/2' });
  });
  it('out of order counts only the in-order part', () => {
    expect(scoreTrajectory(byOp(['RETRIEVAL', 'CHAT']), run({ steps: ops('CHAT', 'RETRIEVAL') }))).toMatchObject({ numericValue: 0.5, label: '1/2' });
  });
  it('a run with steps but none matching scores a real 0', () => {
    expect(scoreTrajectory(byOp(['RETRIEVAL']), run({ steps: ops('CHAT') }))).toMatchObject({ outcome: 'scored', numericValue: 0, label: '0/1' });
  });
  it('by tool name: steps that call no tool are skipped', () => {
    const steps = [tool('search'), step('CHAT'), tool('fetch'), step('CHAT'), tool('send_email')];
    expect(scoreTrajectory(byTool(['search', 'fetch', 'send_email']), run({ steps }))).toMatchObject({ numericValue: 1, label: '3/3' });
    expect(scoreTrajectory(byTool(['search', 'fetch', 'send_email'], 'exact'), run({ steps }))).toMatchObject({ numericValue: 1, label: 'match' });
  });
  it('by tool name: a run with steps and no tool call scores 0', () => {
    expect(scoreTrajectory(byTool(['search']), run({ steps: ops('CHAT') }))).toMatchObject({ outcome: 'scored', numericValue: 0 });
  });
});

describe('exact: "requiring an identical sequence"', () => {
  it('1 when identical, else 0', () => {
    const ref = byOp(['RETRIEVAL', 'CHAT'], 'exact');
    expect(scoreTrajectory(ref, run({ steps: ops('RETRIEVAL', 'CHAT') }))).toMatchObject({ numericValue: 1, label: 'match' });
    expect(scoreTrajectory(ref, run({ steps: ops('RETRIEVAL', 'CHAT', 'CHAT') }))).toMatchObject({ numericValue: 0, label: 'no_match' });
    expect(scoreTrajectory(ref, run({ steps: ops('CHAT', 'RETRIEVAL') }))).toMatchObject({ numericValue: 0, label: 'no_match' });
    expect(scoreTrajectory(ref, run({ steps: ops('RETRIEVAL') }))).toMatchObject({ numericValue: 0, label: 'no_match' });
  });
  it('a long sequence is shown cut, saying so', () => {
    const o = scoreTrajectory(byOp(['CHAT'], 'exact'), run({ steps: ops(...Array.from({ length: 25 }, () => 'RETRIEVAL')) }));
    expect(o.outcome === 'scored' && o.explanation).toMatch(/, \.\.\. and 5 more\] is not the reference/);
  });
});

describe('unmeasured and refused', () => {
  it('a run with zero steps (only its root) is unmeasured, not 0', () => {
    expect(scoreTrajectory(byOp(['CHAT']), run({ steps: [] }))).toEqual({ outcome: 'unmeasured', reason: 'the trajectory is unmeasured: the run has no steps besides its root' });
  });
  it('by tool name: a tool call that names no tool makes the sequence unmeasured', () => {
    const o = scoreTrajectory(byTool(['search']), run({ steps: [tool('search'), tool(null)] }));
    expect(o.outcome).toBe('unmeasured');
  });
  it('a step subject is compared as that one step', () => {
    expect(scoreTrajectory(byOp(['CHAT', 'RETRIEVAL']), stepSubject(step('RETRIEVAL')))).toMatchObject({ numericValue: 0.5, label: '1/2' });
  });
  it('a session is 400: trajectory is a steps family', () => {
    expect(() => scoreTrajectory(byOp(['CHAT']), session())).toThrow(ApiError);
    try {
      scoreTrajectory(byOp(['CHAT']), session());
    } catch (e) {
      expect(e).toMatchObject({ status: 400, details: { reason: 'family_not_of_subject', subject_kind: 'SUBJECT_KIND_AGENT_SESSION' } });
    }
  });
  it('an empty reference is 400', () => {
    expect(() => scoreTrajectory(byOp([]), run())).toThrow(expect.objectContaining({ status: 400, details: { reason: 'empty_reference' } }));
  });
});
