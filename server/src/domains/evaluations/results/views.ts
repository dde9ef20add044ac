/** Stored results and unscored subjects -> API objects (docs/evaluations.md "Results"). */
import type { Static } from '@sinclair/typebox';
import type { ContentAccess } from '../../content-policy/access.js';
import type { EvaluationMode, SubjectKind } from '../model.js';
import type { Result, UnscoredSubject } from './schemas.js';
import type { ResultRecord, UnscoredRecord } from './store.js';

/** Whether a reader sees explanations: `agents:content:read` and the project's read cell for model transcripts. */
export function explanationAccess(access: ContentAccess): { visible: true } | { visible: false; by: ContentAccess['decidedBy'] } {
  return access.of('model_transcript') === 'allow' ? { visible: true } : { visible: false, by: access.decidedBy };
}

export function resultView(r: ResultRecord, explanation: ReturnType<typeof explanationAccess>): Static<typeof Result> {
  return {
    result_id: r.id,
    project_id: r.projectId,
    metric_name: r.metricName,
    ...(r.numericValue !== null ? { numeric_value: r.numericValue } : {}),
    ...(r.label !== null ? { label: r.label } : {}),
    ...(r.explanation !== null ? (explanation.visible ? { explanation: r.explanation } : { explanation_withheld_by: explanation.by }) : {}),
    provenance: {
      evaluator: { evaluator_id: r.evaluatorId, version: r.evaluatorVersion },
      mode: r.mode as EvaluationMode,
      subject_kind: r.subjectKind as SubjectKind,
      subject_ref: r.subjectRef,
      legacy_source: r.legacySource,
      execution: r.execution ?? {},
    },
    ...(r.subjectRelease !== null ? { subject_release: r.subjectRelease } : {}),
    release_declaration: r.subjectRelease !== null ? ('RELEASE_DECLARED' as const) : ('RELEASE_NOT_DECLARED' as const),
    occurred_at: r.occurredAt,
    evaluated_at: r.evaluatedAt,
  };
}

export function unscoredView(u: UnscoredRecord): Static<typeof UnscoredSubject> {
  const d = u.details as { content_class?: string; boundary?: string; decided_by?: string };
  return {
    evaluator: { evaluator_id: u.evaluatorId, version: u.evaluatorVersion },
    subject_kind: u.subjectKind as SubjectKind,
    subject_ref: u.subjectRef,
    mode: u.mode as EvaluationMode,
    outcome: u.outcome,
    reason: u.reason,
    withheld: u.outcome === 'withheld' ? ({ content_class: d.content_class, boundary: d.boundary, decided_by: d.decided_by } as Static<typeof UnscoredSubject>['withheld']) : null,
    attempts: u.attempts,
    first_at: u.firstAt,
    last_at: u.lastAt,
  };
}
