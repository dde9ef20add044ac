/** The deterministic evaluator on hand-built facts: every operator, both aggregations, every measurement. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../http/errors.js';
import { FREE_EXECUTION, type Assertion, type DeterministicConfig, type SubjectFacts } from '../model.js';
import { scoreDeterministic } from './deterministic.js';
import { run, session, step, stepSubject, tool } from './fixtures.js';

const all = (...assertions: Assertion[]): DeterministicConfig => ({ form: 'assertion', aggregation: 'all', assertions });
const fraction = (...assertions: Assertion[]): DeterministicConfig => ({ form: 'assertion', aggregation: 'fraction', assertions });
const measure = (measurement: Extract<DeterministicConfig, { form: 'measurement' }>['measurement']): DeterministicConfig => ({ form: 'measurement', measurement });

function value(config: DeterministicConfig, facts: SubjectFacts) {
  const o = scoreDeterministic(config, facts);
  if (o.outcome !== 'scored') throw new Error(`expected a score, got ${JSON.stringify(o)}`);
  return o;
}
function reason(config: DeterministicConfig, facts: SubjectFacts) {
  const o = scoreDeterministic(config, facts);
  if (o.outcome !== 'unmeasured') throw new Error(`expected unmeasured, got ${JSON.stringify(o)}`);
  return o.reason;
}
function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('assertion operators', () => {
  const r = run(); // status completed, error_steps 1, step_count 4, tool_calls 2, model_calls 1, duration 1234.5
  it.each<[Assertion, number]>([
    [{ field: 'run.status', op: 'equals', value: 'completed' }, 1],
    [{ field: 'run.status', op: 'equals', value: 'failed' }, 0],
    [{ field: 'run.status', op: 'not_equals', value: 'failed' }, 1],
    [{ field: 'run.status', op: 'not_equals', value: 'completed' }, 0],
    [{ field: 'run.error_steps', op: 'lte', number: 1 }, 1],
    [{ field: 'run.error_steps', op: 'lte', number: 0 }, 0],
    [{ field: 'run.error_steps', op: 'gte', number: 1 }, 1],
    [{ field: 'run.error_steps', op: 'gte', number: 2 }, 0],
    [{ field: 'run.step_count', op: 'gte', number: 4 }, 1],
    [{ field: 'run.step_count', op: 'lte', number: 3 }, 0],
    [{ field: 'run.tool_calls', op: 'lte', number: 2 }, 1],
    [{ field: 'run.tool_calls', op: 'gte', number: 3 }, 0],
    [{ field: 'run.model_calls', op: 'gte', number: 1 }, 1],
    [{ field: 'run.model_calls', op: 'lte', number: 0 }, 0],
    [{ field: 'run.duration_ms', op: 'lte', number: 1234.5 }, 1],
    [{ field: 'run.duration_ms', op: 'lte', number: 1234 }, 0],
    [{ field: 'steps.outcomes', op: 'contains', value: 'OUTCOME_ERROR' }, 1],
    [{ field: 'steps.outcomes', op: 'contains', value: 'OUTCOME_CANCELLED' }, 0],
    [{ field: 'steps.outcomes', op: 'not_contains', value: 'OUTCOME_CANCELLED' }, 1],
    [{ field: 'steps.outcomes', op: 'not_contains', value: 'OUTCOME_ERROR' }, 0],
    [{ field: 'steps.tool_names', op: 'contains', value: 'search' }, 1],
    [{ field: 'steps.tool_names', op: 'contains', value: 'delete_db' }, 0],
    [{ field: 'steps.tool_names', op: 'not_contains', value: 'delete_db' }, 1],
    [{ field: 'steps.tool_names', op: 'not_contains', value: 'send_email' }, 0],
    [{ field: 'steps.canonical_operations', op: 'contains', value: 'CANONICAL_OPERATION_CHAT' }, 1],
    [{ field: 'steps.canonical_operations', op: 'contains', value: 'CANONICAL_OPERATION_RETRIEVAL' }, 0],
    [{ field: 'steps.canonical_operations', op: 'not_contains', value: 'CANONICAL_OPERATION_RETRIEVAL' }, 1],
    [{ field: 'steps.canonical_operations', op: 'not_contains', value: 'CANONICAL_OPERATION_EXECUTE_TOOL' }, 0],
  ])('%j on the run -> %d', (a, expected) => {
    const o = value(all(a), r);
    expect(o).toMatchObject({ numericValue: expected, label: expected ? 'pass' : 'fail', execution: FREE_EXECUTION });
  });

  it.each<[Assertion, number]>([
    [{ field: 'session.turn_count', op: 'gte', number: 2 }, 1],
    [{ field: 'session.turn_count', op: 'lte', number: 1 }, 0],
    [{ field: 'session.run_count', op: 'lte', number: 3 }, 1],
    [{ field: 'session.run_count', op: 'gte', number: 4 }, 0],
    [{ field: 'session.duration_ms', op: 'lte', number: 5000 }, 1],
    [{ field: 'session.duration_ms', op: 'gte', number: 5001 }, 0],
    [{ field: 'session.cost_nanos', op: 'lte', number: 1000 }, 1],
    [{ field: 'session.cost_nanos', op: 'lte', number: 899 }, 0],
  ])('%j on the session -> %d', (a, expected) => {
    expect(value(all(a), session()).numericValue).toBe(expected);
  });

  it('steps.* of a step subject read that step only', () => {
    const s = tool('search', { outcome: 'OUTCOME_ERROR' });
    const facts = stepSubject(s);
    expect(value(all({ field: 'steps.tool_names', op: 'contains', value: 'search' }), facts).numericValue).toBe(1);
    // The parent run also called send_email; the step did not.
    expect(value(all({ field: 'steps.tool_names', op: 'not_contains', value: 'send_email' }), facts).numericValue).toBe(1);
    expect(value(all({ field: 'steps.outcomes', op: 'contains', value: 'OUTCOME_ERROR' }), facts).numericValue).toBe(1);
  });
});

describe('aggregation', () => {
  const held = { field: 'run.status', op: 'equals', value: 'completed' } as const;
  const fails = { field: 'run.error_steps', op: 'lte', number: 0 } as const;
  it('"all = gate, score 1 or 0": 1 (pass) when every assertion holds, 0 (fail) when one does not', () => {
    expect(value(all(held, held), run())).toMatchObject({ numericValue: 1, label: 'pass', explanation: 'all 2 assertions held' });
    const o = value(all(held, fails, held), run());
    expect(o).toMatchObject({ numericValue: 0, label: 'fail' });
    expect(o.explanation).toBe('2 of 3 assertions held; failed: run.error_steps lte 0 (observed 1)');
  });
  it('"fraction = share of held assertions": held/total, label e.g. 3/4', () => {
    expect(value(fraction(held, held, held, fails), run())).toMatchObject({ numericValue: 0.75, label: '3/4' });
    expect(value(fraction(fails), run())).toMatchObject({ numericValue: 0, label: '0/1' });
  });
  it('an unmeasured field makes the evaluation unmeasured, never a failing assertion and never 0 (both aggregations)', () => {
    const facts = run({ durationMs: null });
    const d = { field: 'run.duration_ms', op: 'lte', number: 10 } as const;
    for (const c of [all(held, d), fraction(held, d), fraction(fails, d)]) expect(reason(c, facts)).toBe('run.duration_ms is unmeasured: the run reports no duration');
  });
});

describe('unmeasured fields name the field', () => {
  it.each<[string, Assertion, SubjectFacts, RegExp]>([
    ['run.status not reported', { field: 'run.status', op: 'equals', value: 'completed' }, run({ status: null }), /^run\.status is unmeasured: the run reports no status$/],
    ['run.duration_ms absent', { field: 'run.duration_ms', op: 'gte', number: 0 }, run({ durationMs: null }), /^run\.duration_ms is unmeasured/],
    ['session.cost_nanos missing', { field: 'session.cost_nanos', op: 'gte', number: 0 }, session({ costNanos: null, costUnavailableReason: 'run_cost_unavailable' }), /^session\.cost_nanos is unmeasured: .*run_cost_unavailable/],
    ['session.cost_nanos zero', { field: 'session.cost_nanos', op: 'lte', number: 0 }, session({ costNanos: null, costUnavailableReason: 'zero_cost' }), /^session\.cost_nanos is unmeasured: the session reported a cost of zero$/],
    ['session.turn_count without turn ids', { field: 'session.turn_count', op: 'gte', number: 0 }, session({ turnCount: null }), /^session\.turn_count is unmeasured: the session's runs carry no turn ids$/],
    ['steps.* of a run that is only its root', { field: 'steps.canonical_operations', op: 'not_contains', value: 'CANONICAL_OPERATION_CHAT' }, run({ steps: [] }), /^steps\.canonical_operations is unmeasured: the run has no steps besides its root$/],
    ['steps.outcomes with no stated outcome', { field: 'steps.outcomes', op: 'not_contains', value: 'OUTCOME_ERROR' }, run({ steps: [step('CHAT'), tool('x')] }), /^steps\.outcomes is unmeasured: no step of the run states an outcome$/],
    ['steps.tool_names with a tool call naming no tool', { field: 'steps.tool_names', op: 'not_contains', value: 'rm' }, run({ steps: [tool('ls'), tool(null)] }), /^steps\.tool_names is unmeasured: the tool call [0-9a-f]{16} names no tool$/],
  ])('%s', (_name, a, facts, expected) => {
    expect(reason(all(a), facts)).toMatch(expected);
  });

  it('steps.tool_names of a run with steps and no tool call is a measured empty set', () => {
    const facts = run({ steps: [step('CHAT')] });
    expect(value(all({ field: 'steps.tool_names', op: 'not_contains', value: 'rm' }), facts).numericValue).toBe(1);
    expect(value(all({ field: 'steps.tool_names', op: 'contains', value: 'rm' }), facts).numericValue).toBe(0);
  });
});

describe('measurements ("Measurable when")', () => {
  it.each<[string, DeterministicConfig, SubjectFacts, number]>([
    ['run.duration_ms: the run reports a duration', measure('run.duration_ms'), run(), 1234.5],
    ['run.cost_nanos: reported or calculated model cost', measure('run.cost_nanos'), run(), 6_543_210],
    ['safety.error_steps: explicitly identified safety-check steps with reported outcomes', measure('safety.error_steps'), run({ safetyErrorSteps: 2 }), 2],
    ['safety.error_steps: zero failed safety checks is a real 0', measure('safety.error_steps'), run({ safetyErrorSteps: 0 }), 0],
    ['session.turn_count: turns carry turn ids', measure('session.turn_count'), session(), 2],
    ['session.run_count: always, for an existing session', measure('session.run_count'), session({ turnCount: null, costNanos: null }), 3],
    ['session.duration_ms: "a single moment measures 0 (a real answer)"', measure('session.duration_ms'), session({ durationMs: 0 }), 0],
    ['session.cost_nanos: session runs reported model cost', measure('session.cost_nanos'), session(), 900],
    ['safety.error_steps of a failed safety-check step', measure('safety.error_steps'), stepSubject(tool('guard', { safetyCheck: true, outcome: 'OUTCOME_ERROR' })), 1],
    ['safety.error_steps of a passed safety-check step', measure('safety.error_steps'), stepSubject(tool('guard', { safetyCheck: true, outcome: 'OUTCOME_OK' })), 0],
  ])('%s', (_name, c, facts, expected) => {
    expect(value(c, facts)).toMatchObject({ numericValue: expected, label: null, execution: FREE_EXECUTION });
  });

  it.each<[string, DeterministicConfig, SubjectFacts, RegExp]>([
    ['run.cost_nanos: "missing or unpriced is not zero and gives no score"', measure('run.cost_nanos'), run({ costNanos: null, costUnavailableReason: 'unpriced_model' }), /^run\.cost_nanos is unmeasured: .*unpriced_model/],
    ['run.cost_nanos of a run without model calls', measure('run.cost_nanos'), run({ costNanos: null, costUnavailableReason: 'no_model_calls' }), /no_model_calls/],
    ['run.duration_ms absent', measure('run.duration_ms'), run({ durationMs: null }), /^run\.duration_ms is unmeasured/],
    ['safety.error_steps: "otherwise no score"', measure('safety.error_steps'), run({ safetyErrorSteps: null }), /^safety\.error_steps is unmeasured/],
    ['safety.error_steps of a step not marked as a safety check', measure('safety.error_steps'), stepSubject(tool('x', { outcome: 'OUTCOME_ERROR' })), /not marked as a safety check/],
    ['safety.error_steps of a safety step without an outcome', measure('safety.error_steps'), stepSubject(tool('x', { safetyCheck: true })), /states no outcome/],
    ['session.turn_count without turn ids', measure('session.turn_count'), session({ turnCount: null }), /^session\.turn_count is unmeasured/],
    ['session.cost_nanos: "a zero is treated as unmeasured"', measure('session.cost_nanos'), session({ costNanos: 0 }), /^session\.cost_nanos is unmeasured: the session reported a cost of zero$/],
    ['session.cost_nanos missing', measure('session.cost_nanos'), session({ costNanos: null }), /^session\.cost_nanos is unmeasured/],
  ])('unmeasured, not 0: %s', (_name, c, facts, expected) => {
    expect(reason(c, facts)).toMatch(expected);
  });
});

describe('refusals', () => {
  it('a family asked of another subject is 400 "carries nothing this evaluator can measure"', () => {
    const e = refusal(() => scoreDeterministic(measure('run.duration_ms'), session()));
    expect(e).toMatchObject({ status: 400, code: 'invalid_request', details: { reason: 'family_not_of_subject', field: 'run.duration_ms' } });
    expect(e.message).toContain('carries nothing this evaluator can measure');
  });
  it.each<Assertion>([
    { field: 'run.status', op: 'lte', number: 1 },
    { field: 'run.status', op: 'equals' },
    { field: 'run.error_steps', op: 'equals', value: '1' },
    { field: 'run.error_steps', op: 'lte' },
    { field: 'run.error_steps', op: 'lte', number: Number.NaN },
    { field: 'steps.outcomes', op: 'equals', value: 'OUTCOME_OK' },
    { field: 'steps.tool_names', op: 'contains', number: 1 },
  ])('an assertion whose op or operand does not fit its field is 400 naming the accepted ops: %j', (a) => {
    expect(refusal(() => scoreDeterministic(all(a), run()))).toMatchObject({ status: 400, details: { reason: 'invalid_assertion', field: a.field } });
  });
  it('an assertion form with no assertion is 400', () => {
    expect(refusal(() => scoreDeterministic(all(), run()))).toMatchObject({ status: 400, details: { reason: 'invalid_assertion' } });
  });
});
