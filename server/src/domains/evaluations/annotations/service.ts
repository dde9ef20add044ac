/**
 * Human judgments (docs/evaluations-human.md). Rules:
 * - only a signed-in person records a judgment (a browser session or a person's OAuth token); an API key
 *   cannot, and neither can a credential with no person behind it;
 * - the author is the credential's person, never the body;
 * - `metric_name` is free text, lower-cased and trimmed; at least one of `numeric_value` and `label`;
 *   an absent `numeric_value` means not scored, 0 is a score of zero;
 * - judging the same run and metric again replaces only the caller's own judgment (with a new id);
 * - reads need no content scope; `subject_refs` names at most 200 runs (refused above, never shortened).
 * Judgments are never evidence for gates or SLO objectives: nothing outside this folder reads them as such.
 */
import { invalidRequest, permissionDenied } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import { readLimit, type LimitRule } from '../../../http/pagination.js';
import { makeCursor, pageOf, readCursor, fingerprint } from '../../agent-runs/request-rules.js';
import type { AgentRunsService } from '../../agent-runs/service.js';
import type { Clock, IdGenerator } from '../../../lib/clock.js';
import { subjectRefSet } from '../results/service.js';
import type { AnnotationRecord, AnnotationStore } from './store.js';

export const ANNOTATION_LIMIT: LimitRule = { default: 100, max: 500 };
export const MAX_METRIC_NAME = 128;
export const MAX_LABEL = 128;
export const MAX_COMMENT = 4000;

export interface JudgmentInput {
  metric_name: string;
  numeric_value?: number | null;
  label?: string | null;
  comment?: string;
}

export interface AnnotationQuery {
  subject_refs?: string | string[];
  metric_name?: string;
  author_id?: string;
  limit?: number;
  cursor?: string;
}

/** The person a judgment is recorded for: a signed-in person, never an API key. */
export function judgingPerson(p: Principal): string {
  if (p.kind === 'api_key')
    throw permissionDenied('a human judgment is recorded by a signed-in person (a browser session or a person\'s OAuth access token); an API key cannot record one');
  if (!p.userId) throw permissionDenied('a human judgment is recorded by a signed-in person, and this credential has no person behind it');
  return p.userId;
}

/** `metric_name` as stored: trimmed and lower-cased, 1..128 characters. */
export function normalMetricName(raw: string, field = 'metric_name'): string {
  const m = raw.trim().toLowerCase();
  if (m === '') throw invalidRequest(`${field} must not be empty`);
  if (m.length > MAX_METRIC_NAME) throw invalidRequest(`${field} is longer than ${MAX_METRIC_NAME} characters`);
  return m;
}

export class AnnotationService {
  constructor(
    private readonly store: AnnotationStore,
    private readonly runs: Pick<AgentRunsService, 'getRun'>,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Records the caller's judgment of the run (404 when the project has no such run). */
  async record(p: Principal, orgId: string, projectId: string, runId: string, body: JudgmentInput): Promise<{ annotation: AnnotationRecord; replacedId: string | null }> {
    const authorId = judgingPerson(p);
    const metricName = normalMetricName(body.metric_name);
    const numericValue = body.numeric_value ?? null;
    if (numericValue !== null && !Number.isFinite(numericValue)) throw invalidRequest('numeric_value must be a finite number');
    const label = body.label === undefined || body.label === null ? null : body.label.trim();
    if (label === '') throw invalidRequest('label must not be empty (omit it when the judgment has no label)');
    if (numericValue === null && label === null) throw invalidRequest('a judgment needs numeric_value, label or both');
    const run = await this.runs.getRun(projectId, runId);
    const annotation: AnnotationRecord = {
      id: this.ids.uuid(),
      orgId,
      projectId,
      runId: run.run_id,
      metricName,
      numericValue,
      label,
      comment: body.comment ?? '',
      authorId,
      createdAt: this.clock.now().toISOString(),
    };
    const { replacedId } = await this.store.replace(annotation);
    return { annotation, replacedId };
  }

  /** Every reviewer's judgments of one run (404 when the project has no such run), oldest first. */
  async ofRun(projectId: string, runId: string, q: Pick<AnnotationQuery, 'metric_name' | 'limit' | 'cursor'>) {
    const run = await this.runs.getRun(projectId, runId);
    return this.page({ projectId, runIds: [run.run_id], metricName: q.metric_name === undefined ? undefined : normalMetricName(q.metric_name) }, q);
  }

  /** `GET /evaluation/annotations`: judgments of the named runs (at most 200), by metric and author. */
  async list(projectId: string, q: AnnotationQuery) {
    const refs = subjectRefSet(undefined, q.subject_refs);
    if (q.author_id === '') throw invalidRequest('author_id must not be empty');
    if (q.author_id !== undefined && q.author_id.length > 128) throw invalidRequest('author_id is longer than 128 characters');
    return this.page(
      {
        projectId,
        runIds: refs?.map((r) => r.toLowerCase()),
        metricName: q.metric_name === undefined ? undefined : normalMetricName(q.metric_name),
        authorId: q.author_id,
      },
      q,
    );
  }

  private async page(filter: Parameters<AnnotationStore['list']>[0], q: { limit?: number; cursor?: string }) {
    const limit = readLimit(q.limit, ANNOTATION_LIMIT);
    const fp = fingerprint(['annotations', filter]);
    const pos = readCursor(q.cursor, fp);
    const rows = await this.store.list(filter, { limit: limit + 1, after: pos && { createdAt: String(pos.k), id: pos.id } });
    const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.createdAt, r.id));
    return { annotations: items, truncated: next_cursor !== null, next_cursor };
  }

  /** One judgment of the project, for promotion (a review must be of the same project). */
  find(projectId: string, id: string): Promise<AnnotationRecord | undefined> {
    return this.store.get(projectId, id);
  }

  /** Every reviewer's judgments of the runs (for calibration), optionally of one metric; oldest first, unpaged. */
  async forRuns(projectId: string, runIds: string[], metricName?: string): Promise<AnnotationRecord[]> {
    const out: AnnotationRecord[] = [];
    let after: { createdAt: string; id: string } | undefined;
    for (;;) {
      const rows = await this.store.list({ projectId, runIds: runIds.map((r) => r.toLowerCase()), metricName: metricName === undefined ? undefined : normalMetricName(metricName) }, { after, limit: 1000 });
      out.push(...rows);
      if (rows.length < 1000) return out;
      const last = rows[rows.length - 1];
      after = { createdAt: last.createdAt, id: last.id };
    }
  }
}
