/** Which subjects each family of evaluator answers for, and the session rubric refusals. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../http/errors.js';
import { ASSERTION_NUMBER_FIELDS, ASSERTION_SET_FIELDS, ASSERTION_SINGLE_FIELDS, MEASUREMENTS, type EvaluatorConfig, type EvidenceSelector, type OnDemandSubjectKind } from '../model.js';
import { checkFamily } from './family.js';

const RUN = 'SUBJECT_KIND_AGENT_RUN';
const STEP = 'SUBJECT_KIND_AGENT_STEP';
const SESSION = 'SUBJECT_KIND_AGENT_SESSION';
const KINDS: OnDemandSubjectKind[] = [RUN, STEP, SESSION];

function refusal(parsed: EvaluatorConfig, kind: OnDemandSubjectKind): ApiError | undefined {
  try {
    checkFamily(parsed, kind);
    return undefined;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
}

const assertion = (field: string): EvaluatorConfig => ({
  kind: 'EVALUATOR_KIND_DETERMINISTIC',
  config: { form: 'assertion', aggregation: 'all', assertions: [{ field: field as never, op: 'gte', number: 0 }] },
});
const measurement = (m: (typeof MEASUREMENTS)[number]): EvaluatorConfig => ({ kind: 'EVALUATOR_KIND_DETERMINISTIC', config: { form: 'measurement', measurement: m } });
const judge = (...evidence: EvidenceSelector[]): EvaluatorConfig => ({
  kind: 'EVALUATOR_KIND_LLM_JUDGE',
  config: { criteria: [{ name: 'helpful', description: 'was it helpful', weight: 1 }], evidence, max_evidence_chars: 12_000 },
});

const answers = (field: string): OnDemandSubjectKind[] => (field.startsWith('run.') ? [RUN] : field.startsWith('session.') ? [SESSION] : [RUN, STEP]);

describe('"run.* fields answer only for runs and dataset items; steps.* and safety.error_steps for runs and steps; session.* only for sessions"', () => {
  const fields = [...ASSERTION_SINGLE_FIELDS, ...ASSERTION_NUMBER_FIELDS, ...ASSERTION_SET_FIELDS];
  for (const field of fields)
    for (const kind of KINDS)
      it(`assertion on ${field} for ${kind}`, () => {
        const e = refusal(assertion(field), kind);
        if (answers(field).includes(kind)) expect(e).toBeUndefined();
        else {
          expect(e).toMatchObject({ status: 400, code: 'invalid_request', details: { reason: 'family_not_of_subject', field, subject_kind: kind, answers_for: answers(field) } });
          expect(e!.message).toContain('carries nothing this evaluator can measure');
        }
      });
  for (const m of MEASUREMENTS)
    for (const kind of KINDS)
      it(`measurement ${m} for ${kind}`, () => {
        const e = refusal(measurement(m), kind);
        expect(e === undefined).toBe(answers(m).includes(kind));
      });

  it('one assertion of another family refuses the whole evaluator', () => {
    const parsed: EvaluatorConfig = {
      kind: 'EVALUATOR_KIND_DETERMINISTIC',
      config: { form: 'assertion', aggregation: 'fraction', assertions: [{ field: 'steps.tool_names', op: 'contains', value: 'x' }, { field: 'run.status', op: 'equals', value: 'completed' }] },
    };
    expect(refusal(parsed, RUN)).toBeUndefined();
    expect(refusal(parsed, STEP)).toMatchObject({ status: 400, details: { field: 'run.status' } });
  });
});

describe('trajectory is a steps family', () => {
  const t: EvaluatorConfig = { kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', config: { step_key: 'tool_name', match: 'exact', reference: ['a'] } };
  it('runs and steps answer, a session is 400', () => {
    expect(refusal(t, RUN)).toBeUndefined();
    expect(refusal(t, STEP)).toBeUndefined();
    expect(refusal(t, SESSION)).toMatchObject({ status: 400, details: { reason: 'family_not_of_subject', subject_kind: SESSION } });
  });
});

describe('model judge', () => {
  it('runs and steps answer with any evidence', () => {
    for (const kind of [RUN, STEP] as const) expect(refusal(judge('run_summary', 'step_sequence', 'model_transcript', 'tool_calls'), kind)).toBeUndefined();
  });
  it.each<EvidenceSelector[]>([['model_transcript'], ['tool_calls'], ['run_summary', 'tool_calls'], ['step_sequence', 'model_transcript', 'tool_calls']])(
    '"content-asking rubric refused" for a session: %j',
    (...evidence) => {
      const e = refusal(judge(...evidence), SESSION);
      expect(e).toMatchObject({ status: 400, details: { reason: 'session_rubric_asks_content', evidence: evidence.filter((x) => x === 'model_transcript' || x === 'tool_calls') } });
    },
  );
  it.each<EvidenceSelector[]>([['run_summary'], ['step_sequence'], ['run_summary', 'step_sequence']])(
    '"a session rollup has no run summary or step sequence, so a rubric of only those also answers 400": %j',
    (...evidence) => {
      const e = refusal(judge(...evidence), SESSION);
      expect(e).toMatchObject({ status: 400, details: { reason: 'session_has_no_run_evidence' } });
      expect(e!.message).toContain('carries nothing this evaluator can measure');
    },
  );
});
