/**
 * The results read (docs/evaluations.md "Reading results"). Filters `metric_name`, `evaluator_id`,
 * `subject_ref` and `subject_refs` (one set, at most 200 distinct subjects: a longer list is refused,
 * never shortened), `mode` (closed; omitted: every mode), `start`/`end` (on `occurred_at`), `limit`:
 *
 * - at most one subject named (or none): `limit` is the page size (default 100, max 500), newest evaluated
 *   first, with `next_cursor`; `truncated` says a page cut matching results;
 * - several subjects: `limit` bounds each subject's share (default and max 20); the answer is every
 *   subject's newest share, `truncated_subject_refs` names the subjects whose share was cut (unknown
 *   beyond it, not unevaluated) and `truncated` is true exactly when one was.
 *
 * History is returned: one result per evaluator version per subject.
 */
import { invalidRequest } from '../../../http/errors.js';
import { readLimit, type LimitRule } from '../../../http/pagination.js';
import { listParam } from '../../../http/query.js';
import { checkOrder, parseTimeUs } from '../../../http/time.js';
import { closedFilter, fingerprint, makeCursor, pageOf, readCursor } from '../../agent-runs/request-rules.js';
import { isoMicros } from '../../traces/query-rules.js';
import { EVALUATION_MODES } from '../model.js';
import type { EvaluationResultStore, ResultFilter, ResultRecord } from './store.js';

export const SINGLE_SUBJECT_LIMIT: LimitRule = { default: 100, max: 500 };
export const PER_SUBJECT_LIMIT: LimitRule = { default: 20, max: 20 };
export const MAX_SUBJECT_REFS = 200;
export const MAX_FILTER_LENGTH = 512;

export interface ResultsQuery {
  metric_name?: string;
  evaluator_id?: string;
  subject_ref?: string;
  subject_refs?: string | string[];
  mode?: string | string[];
  start?: string;
  end?: string;
  limit?: number;
  cursor?: string;
}

export interface ResultsPage {
  results: ResultRecord[];
  truncated: boolean;
  truncated_subject_refs: string[];
  next_cursor: string | null;
}

const exact = (field: string, v: string | undefined) => {
  if (v === undefined) return undefined;
  if (v === '') throw invalidRequest(`${field} must not be empty`);
  if (v.length > MAX_FILTER_LENGTH) throw invalidRequest(`${field} is longer than ${MAX_FILTER_LENGTH} characters`);
  return v;
};

/** The subject refs of `subject_ref` and `subject_refs` as one set (at most 200; refused above, never shortened). */
export function subjectRefSet(one: string | undefined, many: string | string[] | undefined): string[] | undefined {
  const refs = new Set<string>();
  if (exact('subject_ref', one) !== undefined) refs.add(one!);
  for (const r of listParam(many) ?? []) refs.add(exact('subject_refs', r)!);
  if (refs.size > MAX_SUBJECT_REFS)
    throw invalidRequest(`subject_ref and subject_refs name ${refs.size} subjects; at most ${MAX_SUBJECT_REFS} per read (the list is refused, not shortened)`, {
      limit: MAX_SUBJECT_REFS,
      subjects: refs.size,
    });
  if (one === undefined && many === undefined) return undefined;
  // Run and step ids are stored lower case; a session key is compared as sent.
  return [...refs].flatMap((r) => (/^[0-9A-F]{32}(\/[0-9A-F]{16})?$/i.test(r) && r !== r.toLowerCase() ? [r, r.toLowerCase()] : [r])).sort();
}

export async function readResults(store: EvaluationResultStore, projectId: string, q: ResultsQuery, nowMs: number): Promise<ResultsPage> {
  const refs = subjectRefSet(q.subject_ref, q.subject_refs);
  const startUs = q.start === undefined ? undefined : parseTimeUs('start', q.start, nowMs);
  const endUs = q.end === undefined ? undefined : parseTimeUs('end', q.end, nowMs);
  checkOrder('start', 'end', startUs, endUs);
  const filter: ResultFilter = {
    projectId,
    metricName: exact('metric_name', q.metric_name),
    evaluatorId: exact('evaluator_id', q.evaluator_id),
    subjectRefs: refs,
    modes: closedFilter('mode', q.mode, EVALUATION_MODES),
    start: startUs === undefined ? undefined : isoMicros(startUs),
    end: endUs === undefined ? undefined : isoMicros(endUs),
  };
  const named = new Set((refs ?? []).map((r) => r.toLowerCase())).size;
  if (refs !== undefined && named > 1) {
    if (q.cursor !== undefined && q.cursor !== '') throw invalidRequest('cursor pages a read of at most one subject; a read of several subjects has no next page (see truncated_subject_refs)');
    const share = readLimit(q.limit, PER_SUBJECT_LIMIT);
    const rows = await store.perSubject({ ...filter, subjectRefs: refs }, share + 1);
    const count = new Map<string, number>();
    const results: ResultRecord[] = [];
    const cut = new Set<string>();
    for (const r of rows) {
      const n = (count.get(r.subjectRef) ?? 0) + 1;
      count.set(r.subjectRef, n);
      if (n > share) cut.add(r.subjectRef);
      else results.push(r);
    }
    results.sort((a, b) => (a.evaluatedAt === b.evaluatedAt ? (a.id < b.id ? 1 : -1) : a.evaluatedAt < b.evaluatedAt ? 1 : -1));
    return { results, truncated: cut.size > 0, truncated_subject_refs: [...cut].sort(), next_cursor: null };
  }
  const limit = readLimit(q.limit, SINGLE_SUBJECT_LIMIT);
  const fp = fingerprint(['evaluation-results', filter]);
  const pos = readCursor(q.cursor, fp);
  const rows = await store.page(filter, { limit: limit + 1, after: pos && { evaluatedAt: String(pos.k), id: pos.id } });
  const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.evaluatedAt, r.id));
  return { results: items, truncated: next_cursor !== null, truncated_subject_refs: [], next_cursor };
}
