/**
 * On-demand evaluation and the reads of results and unscored subjects (docs/evaluations.md). The runner
 * (runner.ts) does the evaluating; this maps what it came to onto the answers of the routes:
 * a score (stored now or earlier: `already_evaluated`), a subject with nothing measurable (400), a
 * transfer the content policy refused (403), a model that gave no usable answer (a FAILED reply, stored
 * nowhere).
 */
import type { Static } from '@sinclair/typebox';
import { ApiError, invalidRequest } from '../../http/errors.js';
import type { Result } from './results/schemas.js';
import { readLimit } from '../../http/pagination.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { closedFilter, fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import type { ContentPolicyService } from '../content-policy/service.js';
import type { ProjectRecord } from '../projects/store.js';
import type { EvaluatorRef } from './model.js';
import type { EvaluationRunner } from './ports.js';
import { readResults, subjectRefSet, SINGLE_SUBJECT_LIMIT, type ResultsQuery } from './results/service.js';
import type { EvaluationKey } from './results/store.js';
import { explanationAccess, resultView, unscoredView } from './results/views.js';
import { readSubject } from './runner.js';

export interface EvaluateBody {
  evaluator: EvaluatorRef;
  subject_kind: string;
  subject_ref: string;
}

export class EvaluationService {
  constructor(
    private readonly control: ControlStore,
    private readonly runner: EvaluationRunner,
    private readonly contentPolicy: ContentPolicyService,
    private readonly clock: Clock,
  ) {}

  async evaluate(caller: Principal, project: ProjectRecord, body: EvaluateBody) {
    const answer = await this.runner.evaluate({
      orgId: project.orgId,
      projectId: project.id,
      evaluator: body.evaluator,
      subjectKind: body.subject_kind,
      subjectRef: body.subject_ref,
      trigger: { sampling: 'NOT_SAMPLED', caller },
    });
    const subject = readSubject(body.subject_kind, body.subject_ref);
    const key: EvaluationKey = {
      projectId: project.id,
      evaluatorId: body.evaluator.evaluator_id,
      evaluatorVersion: body.evaluator.version,
      subjectKind: subject.kind,
      subjectRef: subject.ref,
    };
    switch (answer.outcome) {
      case 'scored': {
        const stored = await this.control.evaluationResults.find(key);
        const explanation = explanationAccess(await this.contentPolicy.readAccess(caller, project.id));
        return { already_evaluated: answer.alreadyEvaluated, stored: true, result: resultView(stored!, explanation) };
      }
      case 'withheld':
        throw new ApiError(
          403,
          'content_withheld',
          `the content policy withholds ${answer.contentClass} at ${answer.boundary} (decided by: ${answer.decidedBy}); the rubric asked for it, so nothing was sent to the model and nothing was scored`,
          { content_class: answer.contentClass, boundary: answer.boundary, decided_by: answer.decidedBy },
        );
      case 'unmeasured':
        if (answer.execution) {
          // The model was asked and gave no usable answer: a FAILED reply, never a stored (or failing) score.
          const at = this.clock.now().toISOString();
          const failed: Static<typeof Result> = {
              result_id: '',
              project_id: project.id,
              metric_name: answer.metricName ?? '',
              provenance: {
                evaluator: { evaluator_id: key.evaluatorId, version: key.evaluatorVersion },
                mode: 'EVALUATION_MODE_ON_DEMAND',
                subject_kind: subject.kind,
                subject_ref: key.subjectRef,
                legacy_source: '',
                execution: { sampling: 'NOT_SAMPLED', ...answer.execution, job_status: 'FAILED', job_failure_class: answer.reason },
              },
              release_declaration: 'RELEASE_NOT_DECLARED',
              occurred_at: at,
              evaluated_at: at,
            };
          return { already_evaluated: false, stored: false, result: failed };
        }
        throw invalidRequest(`the subject carries nothing this evaluator can measure (${answer.reason}); it is recorded as unmeasured and evaluated again later, never scored 0`, {
          reason: 'not_measurable',
          missing: answer.reason,
        });
    }
  }

  async results(caller: Principal, projectId: string, q: ResultsQuery) {
    const page = await readResults(this.control.evaluationResults, projectId, q, this.clock.now().getTime());
    const explanation = explanationAccess(await this.contentPolicy.readAccess(caller, projectId));
    return { ...page, results: page.results.map((r) => resultView(r, explanation)) };
  }

  async unscored(projectId: string, q: { evaluator_id?: string; subject_ref?: string; subject_refs?: string | string[]; outcome?: string | string[]; limit?: number; cursor?: string }) {
    if (q.evaluator_id === '') throw invalidRequest('evaluator_id must not be empty');
    const filter = {
      projectId,
      evaluatorId: q.evaluator_id,
      subjectRefs: subjectRefSet(q.subject_ref, q.subject_refs),
      outcomes: closedFilter('outcome', q.outcome, ['unmeasured', 'withheld']),
    };
    const limit = readLimit(q.limit, SINGLE_SUBJECT_LIMIT);
    const fp = fingerprint(['evaluation-unscored', filter]);
    const pos = readCursor(q.cursor, fp);
    const rows = await this.control.evaluationResults.unscored(filter, { limit: limit + 1, after: pos && { lastAt: String(pos.k), id: pos.id } });
    const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.lastAt, r.id));
    return { unscored_subjects: items.map(unscoredView), next_cursor };
  }
}

