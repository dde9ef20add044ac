/**
 * Which subjects an evaluator can measure (docs/evaluations-scoring.md "Families"):
 *
 * - `run.*` fields and measurements answer only for runs;
 * - `steps.*` fields, `safety.error_steps` and reference trajectories (a steps family) for runs and steps;
 * - `session.*` only for sessions;
 * - a model judge scores runs and steps; on a session a rubric asking for recorded content is refused,
 *   and so is a rubric of only `run_summary` / `step_sequence` (a session rollup has neither).
 *
 * Asking a family of another subject is 400 "carries nothing this evaluator can measure", with a stable
 * `details.reason`: `family_not_of_subject`, `session_rubric_asks_content` or `session_has_no_run_evidence`.
 */
import { invalidRequest } from '../../../http/errors.js';
import { EVIDENCE_CLASS, type EvaluatorConfig, type OnDemandSubjectKind, type SubjectFacts } from '../model.js';

export const FAMILY_REASONS = ['family_not_of_subject', 'session_rubric_asks_content', 'session_has_no_run_evidence'] as const;

type Family = 'run' | 'steps' | 'session';

/** The subjects each family answers for. */
export const FAMILY_SUBJECTS: Record<Family, readonly OnDemandSubjectKind[]> = {
  run: ['SUBJECT_KIND_AGENT_RUN'],
  steps: ['SUBJECT_KIND_AGENT_RUN', 'SUBJECT_KIND_AGENT_STEP'],
  session: ['SUBJECT_KIND_AGENT_SESSION'],
};

/** The family of an assertion field or a measurement (`safety.error_steps` is a steps family). */
export function familyOf(field: string): Family {
  if (field.startsWith('run.')) return 'run';
  if (field.startsWith('session.')) return 'session';
  return 'steps';
}

export function subjectKindOf(facts: SubjectFacts): OnDemandSubjectKind {
  return facts.kind === 'run' ? 'SUBJECT_KIND_AGENT_RUN' : facts.kind === 'step' ? 'SUBJECT_KIND_AGENT_STEP' : 'SUBJECT_KIND_AGENT_SESSION';
}

function checkField(field: string, subjectKind: OnDemandSubjectKind): void {
  const family = familyOf(field);
  const answers = FAMILY_SUBJECTS[family];
  if (answers.includes(subjectKind)) return;
  throw invalidRequest(
    `a ${subjectKind} carries nothing this evaluator can measure: ${field} (a ${family === 'steps' ? 'steps' : `${family}.*`} family) answers only for ${answers.join(', ')}`,
    { reason: 'family_not_of_subject', field, subject_kind: subjectKind, answers_for: [...answers] },
  );
}

/** Throws 400 when this evaluator measures nothing of a subject of this kind. */
export function checkFamily(parsed: EvaluatorConfig, subjectKind: OnDemandSubjectKind): void {
  if (parsed.kind === 'EVALUATOR_KIND_DETERMINISTIC') {
    const c = parsed.config;
    const fields = c.form === 'measurement' ? [c.measurement] : c.assertions.map((a) => a.field);
    for (const f of fields) checkField(f, subjectKind);
    return;
  }
  if (parsed.kind === 'EVALUATOR_KIND_REFERENCE_TRAJECTORY') {
    if (!FAMILY_SUBJECTS.steps.includes(subjectKind))
      throw invalidRequest(`a ${subjectKind} carries nothing this evaluator can measure: a reference trajectory compares the steps of a run or a step`, {
        reason: 'family_not_of_subject',
        field: `trajectory.${parsed.config.step_key}`,
        subject_kind: subjectKind,
        answers_for: [...FAMILY_SUBJECTS.steps],
      });
    return;
  }
  if (subjectKind !== 'SUBJECT_KIND_AGENT_SESSION') return;
  const asking = parsed.config.evidence.filter((e) => EVIDENCE_CLASS[e] !== null);
  if (asking.length > 0)
    throw invalidRequest(`a session rubric may not ask for recorded content (${asking.join(', ')}): a session is judged on nothing but its rollup`, {
      reason: 'session_rubric_asks_content',
      evidence: asking,
      subject_kind: subjectKind,
    });
  throw invalidRequest(
    `a SUBJECT_KIND_AGENT_SESSION carries nothing this evaluator can measure: a session rollup has no run summary or step sequence (${parsed.config.evidence.join(', ')})`,
    { reason: 'session_has_no_run_evidence', evidence: [...parsed.config.evidence], subject_kind: subjectKind },
  );
}
