/**
 * The rules of `/logs` (spec 1, "Raw observability"; spec 3 CLI `logs` group; fields not shown by the
 * spec, so designed after Loki, Sentry and the OTel log data model). No HTTP, no SQL. Window and attribute
 * rules: ../traces/query-rules.ts; severities: severity.ts; patterns: patterns.ts; the live tail: tail.ts.
 *
 * Decisions (quoted in docs/reference.md):
 * - Scopes (ours; the spec names none for logs): `logs:read` for the reads and the tail, `logs:delete`
 *   for the delete.
 * - Filters shared by every log read, the delete and the tail: `service` (exact `service.name`, repeatable
 *   or comma-separated, OR), `severity` (a minimum: trace < debug < info < warn < error < fatal),
 *   `q` (case-insensitive substring of the body, 1 to 1,000 characters), `trace_id` (32 hex), `attr`
 *   (query-rules.ts). Every given filter must hold.
 * - `GET /logs`: the window (default the 24 hours ending now) applies to the record time (`time_unix_nano`,
 *   else the observed time, else the ingest time). `sort` is `timestamp_desc` (default) or
 *   `timestamp_asc`, anything else 400; ties by log id in the same direction. `limit` default 50, 1 to
 *   1,000. The cursor is keyset, tied to the sort: a cursor of the other sort is 400.
 * - A record's fields: `log_id`, `timestamp`, `observed_at`, `severity` (normalized, absent when
 *   unknown), `severity_number`, `severity_text`, `body` (null when none; a GenAI event body is recorded
 *   content: served as the content policy says, `body_withheld: true` when withheld), `trace_id`, `span_id`,
 *   `service_name`, `environment`, `scope_name`, `attributes`, `resource_attributes`; absent when
 *   not sent.
 * - `POST /logs/aggregate` (a read: only its refusals are audited; `project_id` in the query string as for
 *   `/metrics/aggregate`): counts of the matching logs, per `group_by` (up to two of `service`,
 *   `severity`, `attr.<key>`) and, with `step` (the metric steps), per bucket aligned to multiples of
 *   the step since the epoch. Without a step each group has a total `count`; with one, `points` hold
 *   every bucket of the window, 0 included (a count of no logs is a measured zero). More than 500
 *   buckets is 400 naming the limit; more than 50 groups is 429 `result_too_large`, never truncated.
 *   Groups are ordered by count (largest first), then by their values; a missing value is absent from
 *   `group` and sorts last.
 * - `GET /logs/fields`: attribute and resource-attribute keys of the newest 10,000 matching logs in the
 *   window, most frequent first, at most 200 keys (`truncated`), each with the count of logs holding it,
 *   its distinct values and its 10 most frequent values (values over 256 characters not listed).
 *   `scanned` and `sampled` say how many logs were read and whether more matched.
 * - `GET /logs/patterns`: the bodies (first 4,096 characters) of the newest 10,000 matching logs grouped
 *   by the masking tokenizer of patterns.ts; largest count first, `limit` default 50, 1 to 200; each
 *   with first/last seen, services and the newest example.
 * - `GET /logs/{logId}/context`: the log and the `before`/`after` (default 10, 0 to 100) nearest logs of
 *   the same service (or, for a log without a service, of the logs without one) in (time, log id) order,
 *   both lists oldest first. A log of another project is 404 like a missing one.
 * - `DELETE /logs` never deletes everything by accident: it needs `log_id`, or `since` and `until` and
 *   at least one of `service`, `trace_id`, `q`, `attr` (`severity` only narrows further); otherwise 400
 *   naming the rule. It removes the matching records of the project in one transaction and answers 200
 *   `{deleted: n}` (0 when nothing matched). Not undone by revoking the credential (Authentication
 *   rule 10). The CLI's `--yes` confirmation is the CLI's.
 */
import { invalidRequest, notFound, tooLarge } from '../../http/errors.js';
import { decodeCursor, encodeCursor, readLimit } from '../../http/pagination.js';
import type { Principal } from '../../http/principal.js';
import { listParam } from '../../http/query.js';
import type { Clock } from '../../lib/clock.js';
import { MAX_POINTS_PER_SERIES, MAX_SERIES, STEP_MS, type Step } from '../metrics/request-rules.js';
import {
  checkAttrKey,
  isoMicros,
  normalizeId,
  parseAttributes,
  parseAttrFilters,
  refuseContentKeys,
  resolveWindow,
  US_PER_MS,
  visibleAttributes,
  type WindowQuery,
} from '../traces/query-rules.js';
import { logPattern, patternId } from './patterns.js';
import { applyToBody, readableClasses, type ContentAccess, type ContentReadPolicy } from '../content-policy/access.js';
import { CONTENT_KEYS } from '../content/content-keys.js';

const CONTENT_CLASSES_IN_TABLE = [...new Set(CONTENT_KEYS.map((r) => r.contentClass))];
import { severityName, severityRank, type Severity } from './severity.js';
import type { GroupKey, LogFilter, LogRow, LogsStore } from './store.js';

export const LOGS_READ = 'logs:read';
export const LOGS_DELETE = 'logs:delete';

export const LOG_LIMIT = { default: 50, max: 1000 };
export const PATTERN_LIMIT = { default: 50, max: 200 };
export const SCAN_LIMIT = 10_000;
export const MAX_FIELD_KEYS = 200;
export const TOP_VALUES = 10;
export const MAX_VALUE_LENGTH = 256;
export const PATTERN_BODY_CHARS = 4096;
export const MAX_PATTERN_SERVICES = 20;
export const CONTEXT_DEFAULT = 10;
/** The pattern of the bodies a reader is not served (`deny` on read, or no agents:content:read). */
export const WITHHELD_PATTERN = '[content withheld by policy]';

export interface LogFilterInput {
  service?: string[];
  severity?: Severity;
  q?: string;
  trace_id?: string;
  attr?: string[];
}

export interface SearchLogsInput extends LogFilterInput, WindowQuery {
  cursor?: string;
  limit?: number;
  sort?: 'timestamp_desc' | 'timestamp_asc';
}

export interface AggregateLogsInput extends LogFilterInput, WindowQuery {
  step?: Step;
  group_by?: string[];
}

export interface DeleteLogsInput extends LogFilterInput, WindowQuery {
  log_id?: string;
}

export interface LogView {
  log_id: string;
  timestamp: string;
  observed_at?: string;
  severity?: Severity;
  severity_number?: number;
  severity_text?: string;
  body: string | null;
  body_withheld?: true;
  trace_id?: string;
  span_id?: string;
  service_name?: string;
  environment?: string;
  scope_name?: string;
  attributes: Record<string, unknown>;
  resource_attributes: Record<string, unknown>;
  withheld_attribute_keys?: string[];
}

/** A stored record as answered (recorded-content attributes as the reader's access lets them through). */
export function logView(r: LogRow, showContent: ContentAccess): LogView {
  const withheld = new Set<string>();
  const attributes = visibleAttributes(parseAttributes(r.attributes), showContent, withheld);
  const resource = visibleAttributes(parseAttributes(r.resourceAttributes), showContent, withheld);
  const severity = severityName(r.severityRank);
  const body = applyToBody(r.body, r.bodyClass, showContent);
  return {
    log_id: r.logId,
    timestamp: isoMicros(r.tsUs),
    ...(r.observedUs !== null ? { observed_at: isoMicros(r.observedUs) } : {}),
    ...(severity ? { severity } : {}),
    ...(r.severityNumber !== null && r.severityNumber > 0 ? { severity_number: r.severityNumber } : {}),
    ...(r.severityText ? { severity_text: r.severityText } : {}),
    body: body.body,
    ...(body.withheld ? { body_withheld: true as const } : {}),
    ...(r.traceId ? { trace_id: r.traceId } : {}),
    ...(r.spanId ? { span_id: r.spanId } : {}),
    ...(r.serviceName !== null ? { service_name: r.serviceName } : {}),
    ...(r.environment !== null ? { environment: r.environment } : {}),
    ...(r.scopeName !== null ? { scope_name: r.scopeName } : {}),
    attributes,
    resource_attributes: resource,
    ...(withheld.size ? { withheld_attribute_keys: [...withheld].sort() } : {}),
  };
}

/**
 * The shared filters, checked (a filter on a recorded-content attribute needs its class read in full;
 * the body text matches content bodies only of the classes read in full).
 */
export function logFilter(access: ContentAccess, input: LogFilterInput): LogFilter {
  const attrs = parseAttrFilters(input.attr);
  refuseContentKeys(access, attrs.map((a) => a.key));
  return {
    serviceNames: listParam(input.service),
    minSeverity: input.severity !== undefined ? severityRank(input.severity) : undefined,
    text: input.q?.toLowerCase(),
    ...(input.q !== undefined ? { readableBodyClasses: readableClasses(access) } : {}),
    traceId: input.trace_id !== undefined ? normalizeId(input.trace_id) : undefined,
    attrs,
  };
}

const SORT_TAG = { timestamp_desc: 'd', timestamp_asc: 'a' } as const;

function groupKey(entry: string): GroupKey {
  if (entry === 'service') return { kind: 'service' };
  if (entry === 'severity') return { kind: 'severity' };
  if (entry.startsWith('attr.')) {
    const key = entry.slice(5);
    checkAttrKey('group_by attribute key', key);
    return { kind: 'attr', key };
  }
  throw invalidRequest(`group_by "${entry.slice(0, 60)}" must be service, severity or attr.<key>`);
}

export class LogsService {
  constructor(
    private readonly store: LogsStore,
    private readonly clock: Clock,
    private readonly content: ContentReadPolicy,
  ) {}

  /** What the caller is served of the project's recorded content (one policy lookup per request). */
  access(caller: Principal, projectId: string): Promise<ContentAccess> {
    return this.content.readAccess(caller, projectId);
  }

  private now() {
    return this.clock.now().getTime();
  }

  async search(caller: Principal, projectId: string, q: SearchLogsInput) {
    const sort = q.sort ?? 'timestamp_desc';
    const limit = readLimit(q.limit, LOG_LIMIT);
    const access = await this.access(caller, projectId);
    const filter = logFilter(access, q);
    const cursor = decodeCursor(q.cursor);
    let after: { tsUs: number; logId: string } | undefined;
    if (cursor) {
      const tag = cursor.id.slice(0, 2);
      if (typeof cursor.k !== 'number' || (tag !== 'a:' && tag !== 'd:')) throw invalidRequest('cursor is malformed or expired');
      if (tag !== `${SORT_TAG[sort]}:`) throw invalidRequest('cursor belongs to the other sort; keep the sort unchanged while continuing');
      after = { tsUs: cursor.k, logId: cursor.id.slice(2) };
    }
    const w = resolveWindow(q, this.now());
    const rows = await this.store.search({ projectId, filter, ...w, order: sort === 'timestamp_asc' ? 'asc' : 'desc', after, limit: limit + 1 });
    const more = rows.length > limit;
    const items = more ? rows.slice(0, limit) : rows;
    const last = items[items.length - 1];
    return {
      logs: items.map((r) => logView(r, access)),
      next_cursor: more && last ? encodeCursor({ k: last.tsUs, id: `${SORT_TAG[sort]}:${last.logId}` }) : null,
    };
  }

  async aggregate(caller: Principal, projectId: string, input: AggregateLogsInput) {
    const access = await this.access(caller, projectId);
    const filter = logFilter(access, input);
    const entries = input.group_by ?? [];
    if (entries.length > 2) throw invalidRequest('at most 2 group_by entries are allowed', { limit: 2 });
    if (new Set(entries).size !== entries.length) throw invalidRequest('group_by entries must be distinct');
    const groupBy = entries.map(groupKey);
    refuseContentKeys(access, groupBy.flatMap((g) => (g.kind === 'attr' ? [g.key] : [])));
    const w = resolveWindow(input, this.now());
    const stepUs = input.step !== undefined ? STEP_MS[input.step] * US_PER_MS : undefined;
    let firstBucket = 0;
    let buckets = 0;
    if (stepUs !== undefined) {
      firstBucket = Math.floor(w.fromUs / stepUs);
      buckets = Math.floor(w.toUs / stepUs) - firstBucket + 1;
      if (buckets > MAX_POINTS_PER_SERIES)
        throw invalidRequest(
          `the request implies ${buckets} points per series; the limit is ${MAX_POINTS_PER_SERIES} points per series (use a larger step or a shorter window)`,
          { limit: MAX_POINTS_PER_SERIES, points_per_series: buckets },
        );
    }
    const result = await this.store.aggregate({ projectId, filter, ...w, stepUs, groupBy, maxSeries: MAX_SERIES });
    if (result.kind === 'too_many_series')
      throw tooLarge(`the result has more than ${MAX_SERIES} groups; the limit is ${MAX_SERIES} (add filters or group by fewer or coarser keys)`, {
        limit: MAX_SERIES,
      });

    interface Series {
      values: (string | null)[];
      count: number;
      points?: number[];
    }
    const byGroup = new Map<string, Series>();
    for (const row of result.rows) {
      const id = JSON.stringify(row.group);
      let s = byGroup.get(id);
      if (!s) {
        s = { values: row.group, count: 0, ...(stepUs !== undefined ? { points: new Array<number>(buckets).fill(0) } : {}) };
        byGroup.set(id, s);
      }
      s.count += row.count;
      if (s.points && row.bucketUs !== undefined) {
        const i = Math.round(row.bucketUs / stepUs!) - firstBucket;
        if (i >= 0 && i < buckets) s.points[i] += row.count;
      }
    }
    // No groups asked: one series, also when nothing matched (a measured zero).
    if (groupBy.length === 0 && byGroup.size === 0)
      byGroup.set('[]', { values: [], count: 0, ...(stepUs !== undefined ? { points: new Array<number>(buckets).fill(0) } : {}) });
    const cmp = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);
    const series = [...byGroup.values()].sort((a, b) => b.count - a.count || a.values.reduce((acc, v, i) => acc || cmp(v, b.values[i]), 0));
    const label = (g: GroupKey, v: string) => (g.kind === 'severity' ? (severityName(Number(v)) ?? v) : v);
    return {
      since: isoMicros(w.fromUs),
      until: isoMicros(w.toUs),
      ...(input.step !== undefined ? { step: input.step } : {}),
      series: series.map((s) => {
        const group: Record<string, string> = {};
        entries.forEach((e, i) => {
          if (s.values[i] !== null) group[e] = label(groupBy[i], s.values[i]!);
        });
        return {
          group,
          count: s.count,
          ...(s.points ? { points: s.points.map((count, i) => ({ timestamp: isoMicros((firstBucket + i) * stepUs!), count })) } : {}),
        };
      }),
    };
  }

  async fields(caller: Principal, projectId: string, input: LogFilterInput & WindowQuery) {
    const access = await this.access(caller, projectId);
    const filter = logFilter(access, input);
    const w = resolveWindow(input, this.now());
    const r = await this.store.fields({
      projectId,
      filter,
      ...w,
      sample: SCAN_LIMIT,
      maxKeys: MAX_FIELD_KEYS,
      topValues: TOP_VALUES,
      maxValueLength: MAX_VALUE_LENGTH,
      // The field list shows top values: content keys are listed only when every class of the table is read in full.
      hideContentKeys: !CONTENT_CLASSES_IN_TABLE.every((c) => access.of(c) === 'allow'),
    });
    return {
      fields: r.fields.map((f) => ({ key: f.key, source: f.source, count: f.count, distinct_values: f.distinctValues, top_values: f.top })),
      total_count: r.totalKeys,
      ...(r.totalKeys > r.fields.length ? { truncated: true as const } : {}),
      scanned: r.scanned,
      sampled: r.sampled,
    };
  }

  async patterns(caller: Principal, projectId: string, input: LogFilterInput & WindowQuery & { limit?: number }) {
    const limit = readLimit(input.limit, PATTERN_LIMIT);
    const access = await this.access(caller, projectId);
    const filter = logFilter(access, input);
    const w = resolveWindow(input, this.now());
    const rows = await this.store.bodies({ projectId, filter, ...w, limit: SCAN_LIMIT, bodyChars: PATTERN_BODY_CHARS });
    const sampled = rows.length > SCAN_LIMIT;
    const read = sampled ? rows.slice(0, SCAN_LIMIT) : rows;
    interface Group {
      pattern: string;
      count: number;
      firstUs: number;
      lastUs: number;
      services: Set<string>;
      example: { log_id: string; timestamp: string; body: string | null; body_withheld?: true };
    }
    const groups = new Map<string, Group>();
    // Rows come newest first: the first of a pattern is its example.
    for (const r of read) {
      // A content body the reader is not served is grouped as its marker (size) or as withheld, never by its text.
      const seen = applyToBody(r.body, r.bodyClass, access, r.bodyBytes);
      const pattern = seen.withheld ? WITHHELD_PATTERN : logPattern(seen.body ?? '');
      let g = groups.get(pattern);
      if (!g) {
        const example = { log_id: r.logId, timestamp: isoMicros(r.tsUs), body: seen.body, ...(seen.withheld ? { body_withheld: true as const } : {}) };
        g = { pattern, count: 0, firstUs: r.tsUs, lastUs: r.tsUs, services: new Set(), example };
        groups.set(pattern, g);
      }
      g.count++;
      g.firstUs = Math.min(g.firstUs, r.tsUs);
      g.lastUs = Math.max(g.lastUs, r.tsUs);
      if (r.serviceName !== null) g.services.add(r.serviceName);
    }
    const sorted = [...groups.values()].sort((a, b) => b.count - a.count || (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0));
    return {
      patterns: sorted.slice(0, limit).map((g) => ({
        pattern_id: patternId(g.pattern),
        pattern: g.pattern,
        count: g.count,
        first_seen: isoMicros(g.firstUs),
        last_seen: isoMicros(g.lastUs),
        services: [...g.services].sort().slice(0, MAX_PATTERN_SERVICES),
        example: g.example,
      })),
      total_patterns: groups.size,
      scanned: read.length,
      sampled,
    };
  }

  async context(caller: Principal, projectId: string, logId: string, q: { before?: number; after?: number }) {
    const log = await this.store.get(projectId, logId);
    if (!log) throw notFound('log');
    const at = { tsUs: log.tsUs, logId: log.logId };
    const [before, after] = await Promise.all([
      this.store.neighbours(projectId, log.serviceName, at, 'before', q.before ?? CONTEXT_DEFAULT),
      this.store.neighbours(projectId, log.serviceName, at, 'after', q.after ?? CONTEXT_DEFAULT),
    ]);
    const showContent = await this.access(caller, projectId);
    return {
      log: logView(log, showContent),
      before: before.reverse().map((r) => logView(r, showContent)),
      after: after.map((r) => logView(r, showContent)),
    };
  }

  async delete(caller: Principal, projectId: string, input: DeleteLogsInput) {
    const access = await this.access(caller, projectId);
    const filter = logFilter(access, input);
    const narrowed = filter.serviceNames !== undefined || filter.traceId !== undefined || filter.text !== undefined || filter.attrs.length > 0;
    if (input.log_id === undefined && (input.since === undefined || input.until === undefined || !narrowed))
      throw invalidRequest(
        'a log delete needs log_id, or since and until and at least one of service, trace_id, q, attr (nothing is deleted by accident)',
      );
    const w = input.since !== undefined || input.until !== undefined ? resolveWindow(input, this.now()) : undefined;
    const deleted = await this.store.delete({ projectId, filter: { ...filter, logId: input.log_id }, fromUs: w?.fromUs, toUs: w?.toUs });
    return { deleted };
  }
}
