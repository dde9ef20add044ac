/** Hand-built subject facts for the scorers' unit tests. */
import type { RunFacts, SessionFacts, StepFact, StepSubjectFacts } from '../model.js';

const OP = (o: string) => `CANONICAL_OPERATION_${o}`;

let n = 0;
export function step(op: string, o: Partial<StepFact> = {}): StepFact {
  n += 1;
  return {
    spanId: n.toString(16).padStart(16, '0'),
    parentSpanId: 'root000000000000',
    canonicalOperation: OP(op),
    outcome: null,
    toolName: null,
    startUs: 1_700_000_000_000_000 + n,
    safetyCheck: false,
    ...o,
  };
}

export const tool = (name: string | null, o: Partial<StepFact> = {}) => step('EXECUTE_TOOL', { toolName: name, ...o });

export function run(o: Partial<RunFacts> = {}): RunFacts {
  return {
    kind: 'run',
    runId: 'a'.repeat(32),
    status: 'completed',
    startUs: 1_700_000_000_000_000,
    durationMs: 1234.5,
    stepCount: 4,
    errorSteps: 1,
    toolCalls: 2,
    modelCalls: 1,
    costNanos: 6_543_210,
    safetyErrorSteps: null,
    steps: [step('CHAT', { outcome: 'OUTCOME_OK' }), tool('search', { outcome: 'OUTCOME_OK' }), tool('send_email', { outcome: 'OUTCOME_ERROR' })],
    sessionKey: 'conv-1',
    release: null,
    ...o,
  };
}

export const stepSubject = (s: StepFact, r: RunFacts = run()): StepSubjectFacts => ({ kind: 'step', run: r, step: s });

export function session(o: Partial<SessionFacts> = {}): SessionFacts {
  return {
    kind: 'session',
    sessionKey: 'conv-1',
    runCount: 3,
    turnCount: 2,
    startUs: 1_700_000_000_000_000,
    durationMs: 5000,
    costNanos: 900,
    release: null,
    ...o,
  };
}
