/**
 * The rules of `/services` and `/traces` (spec 1, "Raw observability"; fields not shown by the spec, so
 * designed after Jaeger and Tempo). No HTTP, no SQL. Shared window and attribute rules: query-rules.ts.
 *
 * Decisions (quoted in docs/reference.md):
 * - Scopes (ours; the spec names none for traces): `traces:read` for the reads, `traces:delete` for the
 *   delete. `/services` needs `traces:read` or `logs:read`; span counts are present with `traces:read`,
 *   log counts with `logs:read`.
 * - `/services`: services with a span starting, or a log record stamped, in the window (default the
 *   24 hours ending now), by resource `service.name`; spans and logs without one are not listed. Ordered
 *   by name, at most 1,000, `total_count` counts all and `truncated: true` says the cap cut the list.
 *   first/last seen are the earliest and latest span start or log time in the window.
 * - `/traces` finds traces having at least one span that starts in the window (default the 24 hours
 *   ending now) and meets every span condition given: `service` (OR of names), `name`, `status`, `attr`
 *   (on that span's attributes, else its resource attributes). `min_duration_ms`/`max_duration_ms`
 *   bound the trace duration (first span start to last span end, inclusive). The summary describes the
 *   whole trace, also spans outside the window. Newest first by trace start, then trace id (desc); keyset
 *   cursor; `limit` default 20, 1 to 100.
 * - The root of a trace is its parentless span (earliest start, then smallest span id, when several).
 *   Without one (the root has not arrived yet) the earliest span stands in and `root_missing` is true.
 * - A span stored twice (a retried export) counts and appears once (the first copy ingested).
 * - `GET /traces/{traceId}`: the trace as a span tree, sent as a list in depth-first order: each top-level
 *   span (by start, then span id) followed by its subtree; every span carries `depth`, `parent_span_id`
 *   and its `children` (span ids, by start then span id). A nested JSON tree would be as deep as the trace,
 *   and a 10,000-span chain breaks common JSON parsers (Python's stops at 1,000 levels, V8's
 *   JSON.stringify overflows), so the tree is flat on the wire; a client draws it by indenting by depth.
 *   A span whose parent is not in the trace is at the top level with `orphan: true`; so is the earliest
 *   span of a parent cycle (which could otherwise never be reached). Every span appears exactly once. A trace of
 *   more than 10,000 spans or 100,000 span events is 429 `result_too_large` naming the limit, never cut.
 *   Trace ids are 32 hex digits, read case-insensitively; anything else is 400.
 * - A trace of another project (or organization) is 404 like a missing one.
 * - `DELETE /traces/{traceId}` removes every stored span and span event of the trace in the project in one
 *   transaction and answers 200 `{trace_id, deleted: true, spans_deleted, events_deleted}`; a trace with
 *   nothing stored is 404. Logs that name the trace are kept (delete them with `DELETE /logs?trace_id=`).
 *   A deletion is not undone by revoking the credential that made it (Authentication rule 10), nor by
 *   sending the spans again: the same transaction tombstones the trace, and ingestion leaves out every
 *   later span of it (a retried or late export), its events and its agent sightings, without rejecting
 *   them (the export succeeded; the deletion is policy, like sampling). So the trace, its run, graph and
 *   agent events stay gone. A tombstone is removed only with its project.
 */
import { invalidRequest, notFound, permissionDenied, tooLarge } from '../../http/errors.js';
import { decodeCursor, page, readLimit } from '../../http/pagination.js';
import type { Principal } from '../../http/principal.js';
import { listParam } from '../../http/query.js';
import type { Clock } from '../../lib/clock.js';
import {
  durationMs,
  isoMicros,
  normalizeId,
  parseAttributes,
  parseAttrFilters,
  refuseContentKeys,
  resolveWindow,
  US_PER_MS,
  visibleAttributes,
  type WindowQuery,
} from './query-rules.js';
import type { SpanEventRow, SpanRow, SpanStatus, TracesStore, TraceSummaryRow } from './store.js';
import type { ContentAccess, ContentReadPolicy } from '../content-policy/access.js';

export const TRACES_READ = 'traces:read';
export const TRACES_DELETE = 'traces:delete';
export const LOGS_READ = 'logs:read';

export const MAX_SERVICES = 1000;
export const MAX_TRACE_SPANS = 10_000;
export const MAX_TRACE_EVENTS = 100_000;
export const TRACE_LIMIT = { default: 20, max: 100 };

export interface SearchTracesInput extends WindowQuery {
  cursor?: string;
  limit?: number;
  service?: string[];
  name?: string;
  status?: SpanStatus;
  min_duration_ms?: number;
  max_duration_ms?: number;
  attr?: string[];
}

export interface SpanEventView {
  name: string;
  timestamp: string;
  attributes: Record<string, unknown>;
  withheld_attribute_keys?: string[];
}

export interface SpanNodeView {
  span_id: string;
  parent_span_id?: string;
  depth: number;
  orphan?: true;
  children: string[];
  name: string;
  kind: string;
  service_name?: string;
  environment?: string;
  scope_name?: string;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  status: { code: string; message?: string };
  attributes: Record<string, unknown>;
  resource_attributes: Record<string, unknown>;
  withheld_attribute_keys?: string[];
  events: SpanEventView[];
}

function summaryView(r: TraceSummaryRow) {
  return {
    trace_id: r.traceId,
    root_span_id: r.rootSpanId,
    root_span_name: r.rootName,
    ...(r.rootService !== null ? { root_service_name: r.rootService } : {}),
    root_missing: r.rootMissing,
    started_at: isoMicros(r.startUs),
    ended_at: isoMicros(r.endUs),
    duration_ms: durationMs(r.endUs - r.startUs),
    span_count: r.spanCount,
    error_count: r.errorCount,
    services: r.services,
  };
}

function withheldList(s: Set<string>): { withheld_attribute_keys?: string[] } {
  return s.size ? { withheld_attribute_keys: [...s].sort() } : {};
}

function eventView(e: SpanEventRow, showContent: ContentAccess): SpanEventView {
  const withheld = new Set<string>();
  const attributes = visibleAttributes(parseAttributes(e.attributes), showContent, withheld);
  return { name: e.name, timestamp: isoMicros(e.tsUs), attributes, ...withheldList(withheld) };
}

function spanView(s: SpanRow, events: SpanEventView[], showContent: ContentAccess): SpanNodeView {
  const withheld = new Set<string>();
  const attributes = visibleAttributes(parseAttributes(s.attributes), showContent, withheld);
  const resource = visibleAttributes(parseAttributes(s.resourceAttributes), showContent, withheld);
  return {
    span_id: s.spanId,
    ...(s.parentSpanId !== null ? { parent_span_id: s.parentSpanId } : {}),
    depth: 0,
    children: [],
    name: s.name,
    kind: s.kind,
    ...(s.serviceName !== null ? { service_name: s.serviceName } : {}),
    ...(s.environment !== null ? { environment: s.environment } : {}),
    ...(s.scopeName !== null ? { scope_name: s.scopeName } : {}),
    started_at: isoMicros(s.startUs),
    ended_at: isoMicros(s.endUs),
    duration_ms: durationMs(s.endUs - s.startUs),
    status: { code: s.statusCode, ...(s.statusMessage ? { message: s.statusMessage } : {}) },
    attributes,
    resource_attributes: resource,
    ...withheldList(withheld),
    events,
  };
}

/**
 * Orders spans (given by start, then span id) as a tree in depth-first order, setting `depth`, `children`
 * and `orphan`. Roots and orphans are at the top level; the earliest span of each unreachable parent cycle
 * is made an orphan, so every span appears exactly once. Iterative: a chain of 10,000 spans is fine.
 */
export function orderSpanTree(spans: SpanRow[], nodes: SpanNodeView[]): SpanNodeView[] {
  const byId = new Map<string, number>();
  spans.forEach((s, i) => byId.set(s.spanId, i));
  const parent: (number | undefined)[] = spans.map((s) => (s.parentSpanId !== null && s.parentSpanId !== s.spanId ? byId.get(s.parentSpanId) : undefined));
  const kids: number[][] = spans.map(() => []);
  parent.forEach((p, i) => {
    if (p !== undefined) kids[p].push(i);
    else if (spans[i].parentSpanId !== null) nodes[i].orphan = true;
  });
  const reached = new Uint8Array(spans.length);
  const reach = (start: number) => {
    const stack = [start];
    while (stack.length) {
      const i = stack.pop()!;
      if (reached[i]) continue;
      reached[i] = 1;
      stack.push(...kids[i]);
    }
  };
  parent.forEach((p, i) => p === undefined && reach(i));
  // What is still unreached hangs off a parent cycle: its earliest span leaves its parent and heads the rest.
  for (let i = 0; i < spans.length; i++) {
    if (reached[i]) continue;
    const p = parent[i]!;
    kids[p] = kids[p].filter((k) => k !== i);
    parent[i] = undefined;
    nodes[i].orphan = true;
    reach(i);
  }
  const out: SpanNodeView[] = [];
  for (let i = 0; i < spans.length; i++) {
    if (parent[i] !== undefined) continue;
    const stack: [number, number][] = [[i, 0]];
    while (stack.length) {
      const [j, depth] = stack.pop()!;
      nodes[j].depth = depth;
      nodes[j].children = kids[j].map((k) => spans[k].spanId);
      out.push(nodes[j]);
      for (let k = kids[j].length - 1; k >= 0; k--) stack.push([kids[j][k], depth + 1]);
    }
  }
  return out;
}

export class TracesService {
  constructor(
    private readonly store: TracesStore,
    private readonly clock: Clock,
    private readonly content: ContentReadPolicy,
  ) {}

  /** `/services` needs one of two scopes; checked before the project is looked up, so a refused caller learns nothing of it. */
  requireServicesScope(caller: Principal): { spans: boolean; logs: boolean } {
    const spans = caller.scopes.has(TRACES_READ);
    const logs = caller.scopes.has(LOGS_READ);
    if (!spans && !logs) throw permissionDenied(`this request needs scope ${TRACES_READ} or ${LOGS_READ}`);
    return { spans, logs };
  }

  async services(caller: Principal, projectId: string, q: WindowQuery) {
    const { spans, logs } = this.requireServicesScope(caller);
    const w = resolveWindow(q, this.clock.now().getTime());
    const { rows, total } = await this.store.services({ projectId, ...w, spans, logs, limit: MAX_SERVICES });
    return {
      services: rows.map((r) => ({
        name: r.name,
        ...(spans ? { span_count: r.spanCount, error_span_count: r.errorSpanCount } : {}),
        ...(logs ? { log_count: r.logCount } : {}),
        first_seen: isoMicros(r.firstSeenUs),
        last_seen: isoMicros(r.lastSeenUs),
      })),
      total_count: total,
      ...(total > rows.length ? { truncated: true as const } : {}),
      since: isoMicros(w.fromUs),
      until: isoMicros(w.toUs),
    };
  }

  async search(caller: Principal, projectId: string, q: SearchTracesInput) {
    const limit = readLimit(q.limit, TRACE_LIMIT);
    const attrs = parseAttrFilters(q.attr);
    refuseContentKeys(await this.content.readAccess(caller, projectId), attrs.map((a) => a.key));
    const after = decodeCursor(q.cursor);
    if (after && (typeof after.k !== 'number' || !/^[0-9a-f]{32}$/.test(after.id))) throw invalidRequest('cursor is malformed or expired');
    if (q.min_duration_ms !== undefined && q.max_duration_ms !== undefined && q.min_duration_ms > q.max_duration_ms)
      throw invalidRequest('min_duration_ms must not be above max_duration_ms');
    const w = resolveWindow(q, this.clock.now().getTime());
    const rows = await this.store.search({
      projectId,
      ...w,
      serviceNames: listParam(q.service),
      name: q.name,
      status: q.status,
      attrs,
      minDurationUs: q.min_duration_ms !== undefined ? q.min_duration_ms * US_PER_MS : undefined,
      maxDurationUs: q.max_duration_ms !== undefined ? q.max_duration_ms * US_PER_MS : undefined,
      after: after ? { startUs: after.k as number, traceId: after.id } : undefined,
      limit: limit + 1,
    });
    const { items, next_cursor } = page(rows, limit, (r) => ({ k: r.startUs, id: r.traceId }));
    return { traces: items.map(summaryView), next_cursor };
  }

  async get(caller: Principal, projectId: string, rawTraceId: string) {
    const traceId = normalizeId(rawTraceId);
    const size = await this.store.size(projectId, traceId);
    if (size.spans === 0) throw notFound('trace');
    if (size.spans > MAX_TRACE_SPANS)
      throw tooLarge(`the trace has ${size.spans} spans; at most ${MAX_TRACE_SPANS} are answered, never a part of them`, {
        limit: MAX_TRACE_SPANS,
        span_count: size.spans,
      });
    if (size.events > MAX_TRACE_EVENTS)
      throw tooLarge(`the trace has ${size.events} span events; at most ${MAX_TRACE_EVENTS} are answered, never a part of them`, {
        limit: MAX_TRACE_EVENTS,
        event_count: size.events,
      });
    const [spans, events] = await Promise.all([this.store.spans(projectId, traceId), this.store.events(projectId, traceId)]);
    if (spans.length === 0) throw notFound('trace'); // deleted between the two reads
    const showContent = await this.content.readAccess(caller, projectId);
    const eventsOf = new Map<string, SpanEventView[]>();
    for (const e of events) {
      const list = eventsOf.get(e.spanId) ?? [];
      list.push(eventView(e, showContent));
      eventsOf.set(e.spanId, list);
    }
    const nodes = spans.map((s) => spanView(s, eventsOf.get(s.spanId) ?? [], showContent));
    const startUs = spans[0].startUs; // ordered by start
    const endUs = spans.reduce((m, s) => Math.max(m, s.endUs), -Infinity);
    return {
      trace_id: traceId,
      started_at: isoMicros(startUs),
      ended_at: isoMicros(endUs),
      duration_ms: durationMs(endUs - startUs),
      span_count: spans.length,
      error_count: spans.filter((s) => s.statusCode === 'error').length,
      services: [...new Set(spans.map((s) => s.serviceName).filter((x): x is string => x !== null))].sort(),
      spans: orderSpanTree(spans, nodes),
    };
  }

  async delete(projectId: string, rawTraceId: string) {
    const traceId = normalizeId(rawTraceId);
    const removed = await this.store.deleteTrace(projectId, traceId, this.clock.now().getTime() * US_PER_MS);
    if (removed.spans === 0 && removed.events === 0) throw notFound('trace');
    return { trace_id: traceId, deleted: true as const, spans_deleted: removed.spans, events_deleted: removed.events };
  }
}
