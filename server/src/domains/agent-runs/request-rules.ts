/**
 * What an agent read may ask for: limits, time bounds, closed filter values, the event anchors, and the
 * cursors (spec 1 "Pagination of agent evidence", "General query rules"; spec 2 "Agent events and
 * receipts", "Limits"). No HTTP, no SQL.
 */
import { createHash } from 'node:crypto';
import { invalidRequest } from '../../http/errors.js';
import { decodeCursor, encodeCursor, type LimitRule } from '../../http/pagination.js';
import { listParam } from '../../http/query.js';
import { boundKey, checkOrder, parseTimeBound } from '../../http/time.js';
import { TRACE_ID_PATTERN } from '../traces/query-rules.js';
import { CANONICAL_OPERATIONS, EVENT_CATEGORIES, RUN_STATUSES } from './model.js';

// Page sizes (spec 1 "Pagination" rule 4: each endpoint applies its own default and maximum). An explicit
// `limit=0` is refused with 400 on every agent list (their zero-limit behaviour).
export const RUN_LIMIT: LimitRule = { default: 50, max: 200 };
export const SESSION_LIMIT: LimitRule = { default: 50, max: 200 };
export const TURN_LIMIT: LimitRule = { default: 50, max: 200 };
export const EVENT_LIMIT: LimitRule = { default: 100, max: 500 };
export const IDENTITY_LIMIT: LimitRule = { default: 100, max: 200 };

/** A turn lists at most this many of its runs (oldest first); more sets `runs_truncated`. */
export const MAX_TURN_RUNS = 50;
/** At most this many keys in one attribution lookup (`observation_key` repeated). */
export const MAX_IDENTITY_KEYS = 100;
/** Spec 1 "Errors" 429: the step-tree ceiling of the run graph (steps[] entries, the root included). */
export const MAX_GRAPH_STEPS = 10_000;

const US_PER_HOUR = 3600 * 1_000_000;
/** Spec 2 "Limits": "Agent-event window without another anchor: at most 24 hours". */
export const MAX_EVENT_WINDOW_US = 24 * US_PER_HOUR;
/** "an agent identity with a bounded window": our bound for the identity anchor. */
export const MAX_IDENTITY_WINDOW_US = 7 * 24 * US_PER_HOUR;

/** A run id is the trace id of the run. */
export const RUN_ID_PATTERN = TRACE_ID_PATTERN;

/** Duration in milliseconds (fractional: microsecond precision). */
export const durationMs = (startUs: number, endUs: number) => (endUs - startUs) / 1000;

export interface Window {
  sinceUs?: number;
  untilUs?: number;
}

/** A window and what a cursor's fingerprint keeps of it (a duration's text, a timestamp's instant). */
export interface ReadWindow {
  window: Window;
  key: (string | number | null)[];
}

/** Optional closed window `[since, until]` in the API's time vocabulary (http/time.ts); `since` after `until` is refused. */
export function readWindow(q: { since?: string; until?: string }, nowMs: number): ReadWindow {
  const since = q.since !== undefined ? parseTimeBound('since', q.since, nowMs) : undefined;
  const until = q.until !== undefined ? parseTimeBound('until', q.until, nowMs) : undefined;
  checkOrder('since', 'until', since?.us, until?.us);
  const window: Window = {};
  if (since) window.sinceUs = since.us;
  if (until) window.untilUs = until.us;
  return { window, key: [boundKey(q.since, since), boundKey(q.until, until)] };
}

/** A repeated-or-comma-separated closed filter (spec 1 "General query rules" 5): an unrecognized value is 400. */
export function closedFilter(field: string, raw: string | string[] | undefined, allowed: readonly string[]): string[] | undefined {
  const values = listParam(raw);
  if (values === undefined) return undefined;
  const unknown = values.find((v) => !allowed.includes(v));
  if (unknown !== undefined) throw invalidRequest(`${field} "${unknown}" is not recognized; one of: ${allowed.join(', ')}`);
  // Sorted: the order of OR-ed values means nothing (and a cursor continues the same set in any order).
  return values.sort();
}

export const runStatusFilter = (raw: string | string[] | undefined) => closedFilter('status', raw, RUN_STATUSES);
export const categoryFilter = (raw: string | string[] | undefined) => closedFilter('category', raw, EVENT_CATEGORIES);
export const canonicalOperationFilter = (raw: string | string[] | undefined) => closedFilter('canonical_operation', raw, CANONICAL_OPERATIONS);

export interface EventQueryInput {
  run_id?: string;
  session_key?: string;
  observation_key?: string;
  since?: string;
  until?: string;
  category?: string | string[];
  canonical_operation?: string | string[];
  context_source_id?: string;
  outcome?: unknown;
}

export interface EventSelection extends Window {
  traceId?: string;
  sessionKey?: string;
  observationKey?: string;
  categories?: string[];
  canonicalOperations?: string[];
  contextSourceId?: string;
}

const nonEmpty = (field: string, v: string | undefined) => {
  if (v === '') throw invalidRequest(`${field} must not be empty`);
  return v;
};

/**
 * Spec 2 "Agent events and receipts": "anchor required: a run, a session, an agent identity with a bounded
 * window, or a window no wider than 24 hours; otherwise rejected." Also: the deprecated `outcome`
 * selector is refused, and `context_source_id` only narrows another anchor.
 */
export function eventSelection(q: EventQueryInput, nowMs: number): { sel: EventSelection; key: unknown[] } {
  if (q.outcome !== undefined)
    throw invalidRequest('the outcome selector is deprecated and refused: agent events have no outcome (step outcomes are in the run graph)');
  const categories = categoryFilter(q.category);
  const canonicalOperations = canonicalOperationFilter(q.canonical_operation);
  const { window, key } = readWindow(q, nowMs);
  const traceId = nonEmpty('run_id', q.run_id)?.toLowerCase();
  if (traceId !== undefined && !new RegExp(RUN_ID_PATTERN).test(traceId)) throw invalidRequest('run_id must be 32 hexadecimal characters');
  const sessionKey = nonEmpty('session_key', q.session_key);
  const observationKey = nonEmpty('observation_key', q.observation_key);
  const contextSourceId = nonEmpty('context_source_id', q.context_source_id);
  const bounded = window.sinceUs !== undefined && window.untilUs !== undefined;
  const width = bounded ? window.untilUs! - window.sinceUs! : Infinity;

  if (traceId === undefined && sessionKey === undefined) {
    if (observationKey !== undefined) {
      if (!bounded) throw invalidRequest('an observation_key anchor needs a bounded window: send both since and until');
      if (width > MAX_IDENTITY_WINDOW_US) throw invalidRequest('the window of an observation_key anchor is at most 7 days');
    } else if (!bounded) {
      throw invalidRequest(
        contextSourceId !== undefined
          ? 'context_source_id only narrows another anchor: add run_id, session_key, observation_key with a window, or a window (since and until) of at most 24 hours'
          : 'an anchor is required: run_id, session_key, observation_key with a window, or a window (since and until) of at most 24 hours',
      );
    } else if (width > MAX_EVENT_WINDOW_US) {
      throw invalidRequest('a window without another anchor is at most 24 hours (add run_id, session_key or observation_key)');
    }
  }
  const sel = { ...window, traceId, sessionKey, observationKey, categories, canonicalOperations, contextSourceId };
  return { sel, key: [key, { ...sel, sinceUs: undefined, untilUs: undefined }] };
}

/**
 * Cursors carry a fingerprint of the query they continue (spec 1 "Pagination" rule 5: "Keep project,
 * selectors, filters and explicit time bounds unchanged while continuing"): a cursor sent with another
 * query is refused with 400 instead of silently paging something else.
 */
export function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 10);
}

export function makeCursor(fp: string, k: string | number, id: string): string {
  return encodeCursor({ k, id: `${fp}.${id}` });
}

export function readCursor(cursor: string | undefined, fp: string): { k: string | number; id: string } | undefined {
  const pos = decodeCursor(cursor);
  if (!pos) return undefined;
  const dot = pos.id.indexOf('.');
  if (dot < 0) throw invalidRequest('cursor is malformed or expired');
  if (pos.id.slice(0, dot) !== fp)
    throw invalidRequest('cursor was issued for another query: keep project, selectors, filters and time bounds unchanged while continuing');
  return { k: pos.k, id: pos.id.slice(dot + 1) };
}

/** `limit + 1` rows -> one page and the cursor of its last row when more follow. */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (row: T) => string) {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items, next_cursor: more && items.length > 0 ? cursorOf(items[items.length - 1]) : null };
}

/** A cursor's numeric sort key (times in microseconds). */
export function cursorNumber(k: string | number): number {
  if (typeof k !== 'number' || !Number.isSafeInteger(k)) throw invalidRequest('cursor is malformed or expired');
  return k;
}
