/**
 * The rules of datasets that need no store (docs/evaluations-datasets.md): ids, limits, text and version
 * checks, and the shape of a promotion's subjects.
 */
import { invalidRequest } from '../../../http/errors.js';
import type { AgentRunsStore } from '../../agent-runs/store.js';
import { RUN_ID_PATTERN } from '../../agent-runs/request-rules.js';
import type { ContentClass } from '../../content/content-keys.js';
import type { Boundary } from '../../content-policy/model.js';
import type { Decided } from '../../content-policy/service.js';
import type { AnnotationRecord } from '../annotations/store.js';
import { SUBJECT_KINDS } from '../model.js';
import type { SubjectFactsReader } from '../ports.js';
import { CASE_ID } from './case.js';
import type { DatasetRecord, DatasetVersionRecord } from './store.js';

export const DATASET_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,127}$';
export const MAX_DISPLAY_NAME = 200;
export const MAX_DESCRIPTION = 4000;
/** Subjects one promotion may name. */
export const MAX_PROMOTION_SUBJECTS = 100;
/** Items one removal may name. */
export const MAX_REMOVAL_ITEMS = 1000;
/** Items one version may hold. */
export const MAX_VERSION_ITEMS = 10_000;
/** Versions one dataset may hold. */
export const MAX_DATASET_VERSIONS = 1000;
export const DATASET_PAGE = { default: 50, max: 200 };
export const ITEM_PAGE = { default: 50, max: 200 };
/** The largest version number a path may name (a 32-bit signed integer). */
export const MAX_VERSION_NUMBER = 2_147_483_647;
/** The one subject kind a dataset holds. */
export const PROMOTABLE_KIND = 'SUBJECT_KIND_AGENT_RUN';

export const RUN_ID = new RegExp(RUN_ID_PATTERN);
export const EXPORT: Boundary = 'export';

/** What the service reads beside the control store. */
export interface DatasetDeps {
  /** Recorded human judgments (the annotations service). */
  reviews: { find(projectId: string, annotationId: string): Promise<AnnotationRecord | undefined> };
  /** A run's facts (scoring/facts.ts); 404 when the project has no such run. */
  facts: Pick<SubjectFactsReader, 'run'>;
  /** A run's stored steps with their attributes (the agent-runs store). */
  steps: Pick<AgentRunsStore, 'steps'>;
  /** The content policy's decision for one class at one boundary. */
  policy: { decide(projectId: string, contentClass: ContentClass, boundary: Boundary): Promise<Decided> };
}

export interface PromotionSubject {
  subject_kind: string;
  subject_ref: string;
  review_annotation_id: string;
}

export interface DatasetWithVersions {
  dataset: DatasetRecord;
  versions: DatasetVersionRecord[];
  citedVersions: number[];
}

export interface SealAnswer {
  dataset: DatasetRecord;
  version: DatasetVersionRecord;
  sealed: boolean;
  /** Promotion: the item id of each subject, in request order, and whether it was new to the dataset. */
  subjects?: { subjectRef: string; itemId: string; added: boolean }[];
}

export function checkDatasetId(id: string, field = 'dataset_id'): string {
  if (typeof id !== 'string' || !new RegExp(DATASET_ID_PATTERN).test(id))
    throw invalidRequest(`${field} must match ${DATASET_ID_PATTERN} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
  return id;
}

export function checkDisplayName(v: string): string {
  if (v.trim() === '') throw invalidRequest('display_name must not be blank');
  if (v.length > MAX_DISPLAY_NAME) throw invalidRequest(`display_name is at most ${MAX_DISPLAY_NAME} characters`);
  if (v.includes('\u0000')) throw invalidRequest('display_name must not contain the NUL character');
  return v;
}

export function checkDescription(v: string): string {
  if (v.length > MAX_DESCRIPTION) throw invalidRequest(`description is at most ${MAX_DESCRIPTION} characters`);
  if (v.includes('\u0000')) throw invalidRequest('description must not contain the NUL character');
  return v;
}

/** A dataset version named in a path: an exact integer of at least 1 (no alias; 0 is no version). */
export function parseDatasetVersion(raw: string): number {
  if (raw === 'latest') throw invalidRequest('there is no "latest" alias: name an exact version (the dataset shows its latest_version)');
  if (raw === '0') throw invalidRequest('dataset versions start at 1: version 0 names no version');
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > MAX_VERSION_NUMBER) throw invalidRequest(`version must be an exact integer from 1 to ${MAX_VERSION_NUMBER}`);
  return Number(raw);
}

export function checkItemId(id: string, field = 'itemId'): string {
  if (typeof id !== 'string' || !CASE_ID.test(id)) throw invalidRequest(`${field} must be a case id: 64 lower-case hexadecimal characters`);
  return id;
}

/** Checks every subject (kind, run reference, review id form) before anything is read. */
export function checkSubjects(subjects: readonly PromotionSubject[]): { runId: string; annotationId: string }[] {
  if (subjects.length === 0) throw invalidRequest('subjects must name at least one reviewed run');
  if (subjects.length > MAX_PROMOTION_SUBJECTS)
    throw invalidRequest(`subjects names ${subjects.length} runs; at most ${MAX_PROMOTION_SUBJECTS} may be promoted at once (split the request)`, {
      limit: MAX_PROMOTION_SUBJECTS,
    });
  const seen = new Map<string, number>();
  return subjects.map((s, i) => {
    if (s.subject_kind !== PROMOTABLE_KIND) {
      const known = (SUBJECT_KINDS as readonly string[]).includes(s.subject_kind);
      const what = s.subject_kind === 'SUBJECT_KIND_UNSPECIFIED' ? 'is unspecified' : known ? 'cannot be promoted' : 'is not recognized';
      throw invalidRequest(`subjects[${i}].subject_kind "${String(s.subject_kind).slice(0, 64)}" ${what}; the accepted value is ${PROMOTABLE_KIND} (a dataset holds reviewed agent runs)`, {
        accepted: [PROMOTABLE_KIND],
      });
    }
    if (!RUN_ID.test(s.subject_ref)) throw invalidRequest(`subjects[${i}].subject_ref must be a run id: 32 hexadecimal characters`);
    const runId = s.subject_ref.toLowerCase();
    const first = seen.get(runId);
    if (first !== undefined) throw invalidRequest(`subjects[${i}] names run ${runId} again (subjects[${first}]); name each run once`);
    seen.set(runId, i);
    if (s.review_annotation_id.trim() === '') throw invalidRequest(`subjects[${i}].review_annotation_id must name the judgment recorded on the run`);
    return { runId, annotationId: s.review_annotation_id };
  });
}

