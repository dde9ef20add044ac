/**
 * What a metrics request may ask for (spec 1, "Limits"): steps and windows, label keys, filters, and the
 * 500-point and 50-series limits. The decisions behind these rules are listed in service.ts.
 */
import { invalidRequest, tooLarge } from '../../http/errors.js';
import { checkOrder, parseTimeMs } from '../../http/time.js';
import type { Clock } from '../../lib/clock.js';
import { AGGREGATION_VALUES, METRIC_TYPE_VALUES, type Aggregation, type LabelFilter, type TimeWindow } from './store.js';

export const METRIC_TYPES = METRIC_TYPE_VALUES;
export const AGGREGATIONS = AGGREGATION_VALUES;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const STEP_MS = {
  '1s': SECOND,
  '5s': 5 * SECOND,
  '10s': 10 * SECOND,
  '30s': 30 * SECOND,
  '1m': MINUTE,
  '5m': 5 * MINUTE,
  '10m': 10 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': HOUR,
  '6h': 6 * HOUR,
  '12h': 12 * HOUR,
  '1d': DAY,
  '7d': 7 * DAY,
} as const;
export type Step = keyof typeof STEP_MS;
export const STEPS = Object.keys(STEP_MS) as Step[];

export const DEFAULT_STEP: Step = '1h';
export const DEFAULT_AGGREGATION: Aggregation = 'avg';
export const DEFAULT_WINDOW_MS = DAY;

// Spec 1, "Limits".
export const MAX_METRIC_NAMES = 1000;
export const MAX_SERIES = 50;
export const MAX_POINTS_PER_SERIES = 500;
export const MAX_FILTERS = 2;
export const MAX_GROUP_BY = 2;
export const MAX_FILTER_VALUES = 50;
export const LABEL_KEY_MAX_LENGTH = 128;
export const LABEL_KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_.-]*$';
const LABEL_KEY = new RegExp(LABEL_KEY_PATTERN);

export interface WindowQuery {
  start_time?: string;
  end_time?: string;
}

export interface TimeRangeInput {
  start?: string;
  end?: string;
}

export interface AggregateInput {
  metric_name: string;
  time_range?: TimeRangeInput;
  step?: string;
  aggregation?: string;
  service_name?: string;
  environment?: string;
  filters?: LabelFilter[];
  group_by?: string[];
}

export interface HistogramInput {
  metric_name: string;
  step?: string;
  time_range?: TimeRangeInput;
  environment?: string;
}

export const isoTime = (ms: number) => new Date(ms).toISOString();

export function optionalWindow(q: WindowQuery, nowMs: number): TimeWindow {
  const w: TimeWindow = {};
  if (q.start_time !== undefined) w.startMs = parseTimeMs('start_time', q.start_time, nowMs);
  if (q.end_time !== undefined) w.endMs = parseTimeMs('end_time', q.end_time, nowMs);
  checkOrder('start_time', 'end_time', w.startMs, w.endMs);
  return w;
}

/** `time_range` to milliseconds: the given bounds, else `defaultMs` before the end (default now), or now after the start. */
export function timeRangeMs(timeRange: TimeRangeInput | undefined, nowMs: number, defaultMs: number): { startMs: number; endMs: number } {
  let endMs = timeRange?.end !== undefined ? parseTimeMs('time_range.end', timeRange.end, nowMs) : undefined;
  const startMs = timeRange?.start !== undefined ? parseTimeMs('time_range.start', timeRange.start, nowMs) : Math.max(0, (endMs ?? nowMs) - defaultMs);
  endMs ??= timeRange?.start !== undefined ? nowMs : startMs + defaultMs;
  checkOrder('time_range.start', 'time_range.end', startMs, endMs);
  return { startMs, endMs };
}

function checkKey(where: string, key: string): void {
  if (key.length > LABEL_KEY_MAX_LENGTH) throw invalidRequest(`${where} "${key.slice(0, 40)}..." is longer than ${LABEL_KEY_MAX_LENGTH} characters`);
  if (!LABEL_KEY.test(key))
    throw invalidRequest(`${where} "${key}" must start with a letter or underscore, then letters, digits, _, . or -`);
}

function oneOf<T extends string>(field: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw invalidRequest(`${field} must be one of: ${allowed.join(', ')}`);
  return value as T;
}

/** Resolves `time_range` and `step`, and refuses a window implying more than 500 buckets per series. */
export function resolveGrid(clock: Clock, timeRange: TimeRangeInput | undefined, stepName: string | undefined) {
  const step = oneOf('step', stepName, STEPS, DEFAULT_STEP);
  const stepMs = STEP_MS[step];
  const { startMs, endMs } = timeRangeMs(timeRange, clock.now().getTime(), DEFAULT_WINDOW_MS);
  const buckets = Math.floor(endMs / stepMs) - Math.floor(startMs / stepMs) + 1;
  if (buckets > MAX_POINTS_PER_SERIES)
    throw invalidRequest(
      `the request implies ${buckets} points per series; the limit is ${MAX_POINTS_PER_SERIES} points per series (use a larger step or a shorter time_range)`,
      { limit: MAX_POINTS_PER_SERIES, points_per_series: buckets },
    );
  return { step, stepMs, startMs, endMs };
}

/** Checked before the time range, so a request wrong in both is told about its filters or keys first. */
export function aggregateSelection(input: AggregateInput): { aggregation: Aggregation; filters: LabelFilter[]; groupBy: string[] } {
  const aggregation = oneOf('aggregation', input.aggregation, AGGREGATIONS, DEFAULT_AGGREGATION);
  const filters = input.filters ?? [];
  const groupBy = input.group_by ?? [];
  if (filters.length > MAX_FILTERS) throw invalidRequest(`at most ${MAX_FILTERS} filters are allowed`, { limit: MAX_FILTERS });
  if (groupBy.length > MAX_GROUP_BY) throw invalidRequest(`at most ${MAX_GROUP_BY} group_by keys are allowed`, { limit: MAX_GROUP_BY });
  const seenKeys = new Set<string>();
  for (const f of filters) {
    checkKey('filter key', f.key);
    if (seenKeys.has(f.key)) throw invalidRequest(`filter key "${f.key}" appears more than once; put its values in one filter`);
    seenKeys.add(f.key);
    if (f.values.length < 1 || f.values.length > MAX_FILTER_VALUES)
      throw invalidRequest(`filter "${f.key}" must have 1 to ${MAX_FILTER_VALUES} values`, { limit: MAX_FILTER_VALUES });
    if (f.values.some((v) => v === '')) throw invalidRequest(`filter "${f.key}" values must not be empty`);
    if (new Set(f.values).size !== f.values.length) throw invalidRequest(`filter "${f.key}" values must be distinct`);
  }
  for (const k of groupBy) checkKey('group_by key', k);
  if (new Set(groupBy).size !== groupBy.length) throw invalidRequest('group_by keys must be distinct');
  return { aggregation, filters, groupBy };
}

/** The spec answers a result over the series limit with 429 and never truncates it. */
export function tooManySeries() {
  return tooLarge(`the result has more than ${MAX_SERIES} grouped series; the limit is ${MAX_SERIES} (add filters or group by fewer keys)`, {
    limit: MAX_SERIES,
  });
}
