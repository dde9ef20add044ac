/**
 * Calibration of a model judge against people (docs/evaluations-calibration.md).
 *
 * - `create` compares one exact evaluator version's stored results on the named runs with every
 *   person's judgment of those runs for the version's metric (calibrate.ts), and stores the record.
 * - The record is immutable and identified by a digest of its inputs: asking again over unchanged
 *   judgments and results, with the same `min_labels` and runs, answers the stored record with
 *   `created: false` (concurrent identical asks too: the store's unique digest decides). A replaced
 *   judgment (new id) or a new judge result gives a new record.
 * - Who asked comes from the credential.
 */
import { invalidRequest, notFound } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock, IdGenerator } from '../../../lib/clock.js';
import type { ControlStore } from '../../../storage/control/stores.js';
import { principalRef } from '../../assets/signals.js';
import type { ProjectRecord } from '../../projects/store.js';
import type { AnnotationRecord } from '../annotations/store.js';
import { checkEvaluatorId, parseVersionParam } from '../evaluators/service.js';
import type { ResultRecord } from '../results/store.js';
import { calibrate } from './calibrate.js';
import { MAX_CALIBRATION_SUBJECTS, MAX_MIN_LABELS, type CalibrationRecord } from './model.js';
import type { CalibrationFilter, CalibrationPosition } from './store.js';

/** Every person's judgments of some runs (the annotation service). */
export interface JudgmentSource {
  forRuns(projectId: string, runIds: string[], metricName?: string): Promise<AnnotationRecord[]>;
}

export interface CreateCalibrationInput {
  subject_refs: string[];
  min_labels: number;
}

const RUN_ID = /^[0-9a-fA-F]{32}$/;
export const CALIBRATION_PAGE = { default: 50, max: 200 };

/** The runs named: distinct, lower-cased, sorted; at least one, at most 200 (refused above, never shortened). */
export function readSubjectRefs(raw: string[]): string[] {
  if (raw.length === 0) throw invalidRequest('subject_refs must name at least one run');
  const bad = raw.findIndex((r) => !RUN_ID.test(r));
  if (bad >= 0) throw invalidRequest(`subject_refs[${bad}] must be a run id (32 hexadecimal characters)`, { index: bad });
  const refs = [...new Set(raw.map((r) => r.toLowerCase()))].sort();
  if (refs.length > MAX_CALIBRATION_SUBJECTS)
    throw invalidRequest(`subject_refs names ${refs.length} runs; at most ${MAX_CALIBRATION_SUBJECTS} per calibration (the list is refused, not shortened)`, {
      limit: MAX_CALIBRATION_SUBJECTS,
      subjects: refs.length,
    });
  return refs;
}

export function readMinLabels(v: unknown): number {
  if (v === 0) throw invalidRequest('min_labels must be at least 1: 0 is refused (a calibration needs at least one comparable judgment)');
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > MAX_MIN_LABELS)
    throw invalidRequest(`min_labels must be an integer from 1 to ${MAX_MIN_LABELS}`);
  return v;
}

export class CalibrationService {
  constructor(
    private readonly control: ControlStore,
    private readonly judgments: JudgmentSource,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async create(caller: Principal, project: ProjectRecord, evaluatorIdRaw: string, versionRaw: string, input: CreateCalibrationInput): Promise<{ record: CalibrationRecord; created: boolean }> {
    const evaluatorId = checkEvaluatorId(evaluatorIdRaw, 'evaluatorId');
    const version = parseVersionParam(versionRaw);
    const minLabels = readMinLabels(input.min_labels);
    const subjectRefs = readSubjectRefs(input.subject_refs);
    const ev = await this.control.evaluators.version(project.id, evaluatorId, version);
    if (!ev) throw notFound('evaluator version');
    const metricName = ev.metricName.trim().toLowerCase();
    const isModelJudge = ev.kind === 'EVALUATOR_KIND_LLM_JUDGE';

    // Nothing is read for an evaluator that is not a model judge: it is NOT_APPLICABLE whatever people said.
    const results: ResultRecord[] = [];
    let judgments: AnnotationRecord[] = [];
    if (isModelJudge) {
      for (const ref of subjectRefs) {
        const r = await this.control.evaluationResults.find({ projectId: project.id, evaluatorId, evaluatorVersion: version, subjectKind: 'SUBJECT_KIND_AGENT_RUN', subjectRef: ref });
        if (r) results.push(r);
      }
      const named = new Set(subjectRefs);
      judgments = (await this.judgments.forRuns(project.id, subjectRefs, metricName)).filter(
        (j) => j.projectId === project.id && named.has(j.runId.toLowerCase()) && j.metricName === metricName,
      );
    }
    const outcome = calibrate({ evaluatorId, evaluatorVersion: version, isModelJudge, metricName, minLabels, subjectRefs, results, judgments });

    const existing = await this.control.calibrations.byDigest(project.id, evaluatorId, outcome.inputDigest);
    if (existing) return { record: existing, created: false };
    const record: CalibrationRecord = {
      id: this.ids.uuid(),
      orgId: project.orgId,
      projectId: project.id,
      evaluatorId,
      evaluatorVersion: version,
      metricName,
      ...outcome,
      minLabels,
      subjectRefs,
      createdAt: this.clock.now().toISOString(),
      createdBy: principalRef(caller),
    };
    if (await this.control.calibrations.insert(record)) return { record, created: true };
    // A concurrent identical ask stored first: answer its record.
    const winner = await this.control.calibrations.byDigest(project.id, evaluatorId, outcome.inputDigest);
    if (!winner) throw new Error('calibration: the insert was refused but no record holds its digest');
    return { record: winner, created: false };
  }

  /** The evaluator's records, newest first; 404 when the project has no such evaluator. */
  async list(filter: CalibrationFilter, o: { after?: CalibrationPosition; limit: number }): Promise<CalibrationRecord[]> {
    const evaluatorId = checkEvaluatorId(filter.evaluatorId, 'evaluatorId');
    if (!(await this.control.evaluators.head(filter.projectId, evaluatorId))) throw notFound('evaluator');
    return this.control.calibrations.list({ ...filter, evaluatorId }, o);
  }
}
