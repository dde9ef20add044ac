/**
 * The value of an assertion field or a measurement on a subject's facts, or why it was not measured
 * (docs/evaluations-scoring.md "What is measured"). A value that could not be measured is never read as
 * a zero, an empty set or a failing comparison: it is `{ unmeasured: reason }`, the reason naming the field.
 *
 * The subject's steps: a run's step sequence (every step but the root), or a step subject's one step.
 */
import { OP } from '../../agent-runs/model.js';
import type { RunFacts, SessionFacts, StepFact, SubjectFacts } from '../model.js';

export type Read<T> = { value: T } | { unmeasured: string };

const unmeasured = (field: string, why: string): { unmeasured: string } => ({ unmeasured: `${field} is unmeasured: ${why}` });

/** The steps an assertion or a trajectory reads (sessions have none: the family check refuses them first). */
export function subjectSteps(facts: RunFacts | { kind: 'step'; step: StepFact }): StepFact[] {
  return facts.kind === 'run' ? facts.steps : [facts.step];
}

const what = (facts: SubjectFacts) => (facts.kind === 'step' ? 'the step' : 'the run');

/** The tool names of the steps; unmeasured when a tool call names no tool (the sequence or set would be partial). */
export function toolNames(field: string, steps: StepFact[]): Read<string[]> {
  const nameless = steps.find((s) => s.canonicalOperation === OP.executeTool && s.toolName === null);
  if (nameless) return unmeasured(field, `the tool call ${nameless.spanId} names no tool`);
  return { value: steps.flatMap((s) => (s.toolName === null ? [] : [s.toolName])) };
}

/** A set field over the subject's steps. */
export function readSet(field: string, facts: RunFacts | { kind: 'step'; step: StepFact }): Read<Set<string>> {
  const steps = subjectSteps(facts);
  if (steps.length === 0) return unmeasured(field, 'the run has no steps besides its root');
  if (field === 'steps.canonical_operations') return { value: new Set(steps.map((s) => s.canonicalOperation)) };
  if (field === 'steps.outcomes') {
    const stated = steps.flatMap((s) => (s.outcome === null ? [] : [s.outcome]));
    return stated.length ? { value: new Set(stated) } : unmeasured(field, `no step of ${what(facts as SubjectFacts)} states an outcome`);
  }
  const names = toolNames(field, steps);
  return 'value' in names ? { value: new Set(names.value) } : names;
}

export function readRunStatus(run: RunFacts): Read<string> {
  return run.status === null ? unmeasured('run.status', 'the run reports no status') : { value: run.status };
}

function sessionCost(s: SessionFacts): Read<number> {
  if (s.costNanos === null || s.costNanos === 0)
    return unmeasured('session.cost_nanos', s.costUnavailableReason === 'zero_cost' || s.costNanos === 0 ? 'the session reported a cost of zero' : `no model cost for every run of the session (${s.costUnavailableReason ?? 'run_cost_unavailable'})`);
  return { value: s.costNanos };
}

/** A number field or a measurement; `facts` is of the field's family (run.* a run, session.* a session). */
export function readNumber(field: string, facts: SubjectFacts): Read<number> {
  if (field.startsWith('session.')) {
    const s = facts as SessionFacts;
    switch (field) {
      case 'session.run_count':
        return { value: s.runCount };
      case 'session.turn_count':
        return s.turnCount === null ? unmeasured(field, "the session's runs carry no turn ids") : { value: s.turnCount };
      case 'session.duration_ms':
        // A session of a single moment measures 0: a real answer.
        return { value: s.durationMs };
      case 'session.cost_nanos':
        return sessionCost(s);
    }
  }
  if (field === 'safety.error_steps') {
    if (facts.kind === 'step') {
      const st = facts.step;
      if (!st.safetyCheck) return unmeasured(field, 'the step is not marked as a safety check');
      if (st.outcome === null) return unmeasured(field, 'the safety check step states no outcome');
      return { value: st.outcome === 'OUTCOME_ERROR' ? 1 : 0 };
    }
    const r = facts as RunFacts;
    return r.safetyErrorSteps === null ? unmeasured(field, 'the run has no step marked as a safety check with a stated outcome') : { value: r.safetyErrorSteps };
  }
  const r = facts as RunFacts;
  switch (field) {
    case 'run.error_steps':
      return { value: r.errorSteps };
    case 'run.step_count':
      return { value: r.stepCount };
    case 'run.tool_calls':
      return { value: r.toolCalls };
    case 'run.model_calls':
      return { value: r.modelCalls };
    case 'run.duration_ms':
      return r.durationMs === null ? unmeasured(field, 'the run reports no duration') : { value: r.durationMs };
    case 'run.cost_nanos':
      return r.costNanos === null ? unmeasured(field, `the run has no reported or calculated model cost (${r.costUnavailableReason ?? 'missing'}); a missing cost is not zero`) : { value: r.costNanos };
  }
  throw new Error(`no number field ${field}`);
}
