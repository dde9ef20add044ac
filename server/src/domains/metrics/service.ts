/**
 * The rules of the metrics endpoints (spec 1, "Metrics endpoints", "Limits"). No HTTP, no SQL.
 *
 * Decisions the spec leaves open (quoted by the README):
 * - Aggregate buckets are aligned to multiples of `step` since the Unix epoch (UTC): bucket = floor(ts / step) * step.
 *   Timestamps are returned as RFC 3339 strings (the bucket start, UTC, millisecond precision).
 * - A bucket with no points is absent, never zero.
 * - `p50`, `p95`, `p99` are exact continuous quantiles with linear interpolation between the two nearest
 *   samples; `stddev` and `variance` are population statistics (divide by n).
 * - A request implying more than 500 points per series (more than 500 step buckets in the window, counted
 *   as floor(end/step) - floor(start/step) + 1) is 400 `invalid_request` naming the limit, before querying.
 * - A result with more than 50 series is 429 `result_too_large` naming the limit of 50; it is never truncated.
 * - The default window is the 24 hours ending now; with only `end`, the 24 hours ending at `end`; with only
 *   `start`, from `start` to now. A window is closed at both ends.
 * - A series lacking a `group_by` key is grouped under "no value" for that key, and the key is absent from
 *   its `labels` map (series with no value sort after those with one).
 * - Labels are the datapoint attributes only. `service_name` and `environment` are their own filters and
 *   are not listed by `/metrics/{metric_name}/labels`, nor usable as `filters` or `group_by` keys.
 * - Filter and group keys are ASCII: a letter or underscore, then letters, digits, `_`, `.` or `-`, at most
 *   128 characters.
 * - The metric name list is in Unicode code point order; a capped list carries `truncated: true`, and
 *   `total_count` always counts every name.
 * - A metric's `type` is the one its series carry in the window; when series of one name disagree, the
 *   alphabetically first is reported.
 * - Histogram cells are per step bucket and upper bound, counts per bucket (not cumulative), summed over the
 *   series in the step bucket; layouts with different bounds give one cell per distinct bound value.
 * - The +Inf bucket is one cell per step bucket with `upper_bound_infinite: true`; its `upper_bound` is the
 *   largest finite bound of the merged layouts (0 when a layout has no finite bound).
 * - Delta histogram samples add their counts. Cumulative samples become increases per series and bounds
 *   layout by differencing consecutive samples; a changed start time or any decreased count is a reset, and
 *   the new sample's counts are then the increase. The first cumulative sample of a series in the window is
 *   an increase only when its start time is inside the window (the series started there); otherwise (start
 *   before the window, or unknown) it is only the baseline. The visible window starts just after the metric's
 *   tombstone, so a series that started before a delete brings back no counts from before it.
 * - Counters ("Counters"): a cumulative monotonic sum (OTLP Sum, is_monotonic, temporality CUMULATIVE or
 *   UNSPECIFIED; stored with its start time) is read by the aggregate as its increases, by the histogram's
 *   rules: each sample is compared with the previous sample (by time) of the same series and start time
 *   in the visible window, and its value becomes the difference; a value below the previous one is a reset
 *   and counts whole; a changed start time is a new run, whose first sample counts whole when its start
 *   time is inside the visible window. A sample with no earlier sample of its run in the visible window
 *   counts whole only when its start time is inside that window (at or after the window start, after the
 *   tombstone); otherwise (the run started before the window or the tombstone, or its start is unknown) it
 *   is only the baseline and gives no value. Samples before the window are never read, so the increase
 *   between the last sample before the window and the first one in it is not counted (the same as for
 *   histograms: a window's answer depends on its own samples only). The increase is placed at the later
 *   sample's time, so it lands in that sample's bucket. Every aggregation (count and avg included) then
 *   runs over these increases; a bucket whose samples are all baselines is absent, a bucket whose samples
 *   did not move holds 0. Gauges, non-monotonic sums, delta sums and histogram/summary means are read as
 *   stored. The forecast history uses the same increases for its bucket means.
 * - Histogram counts above 2^53-1 are JSON strings, others JSON numbers.
 * - The histogram body follows the aggregate rules for `step`, `time_range` and the 500-bucket limit.
 * - Recorded-content labels (`gen_ai.prompt`, `gen_ai.completion`, `gen_ai.input.messages`,
 *   `gen_ai.output.messages`, `gen_ai.system_instructions`, `gen_ai.tool.call.arguments`,
 *   `gen_ai.tool.call.result`, and keys starting `gen_ai.prompt.` or `gen_ai.completion.`, compared
 *   case-insensitively) are shown, filterable and groupable only with `agents:content:read`; projects have no
 *   content read policy yet, so holding the scope is enough. Otherwise the label is omitted from label
 *   listings and a filter or group_by on it is 403 `permission_denied`, before querying.
 * - Deleting a metric answers 200 `{metric_name, deleted: true, deleted_at}`. It tombstones the name at the
 *   current time (an existing later tombstone is kept) and removes the stored datapoints stamped at or before
 *   it. Deleting a name with no data still tombstones it and answers 200 (idempotent).
 */
import { invalidRequest, permissionDenied, tooLarge } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import {
  AGGREGATION_VALUES,
  METRIC_TYPE_VALUES,
  type Aggregation,
  type HistogramSample,
  type LabelFilter,
  type MetricsStore,
  type MetricType,
  type TimeWindow,
} from './store.js';

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

/**
 * Label keys named after a recorded-content convention (OpenTelemetry GenAI attributes that carry prompts,
 * completions, messages, instructions and tool payloads). Compared case-insensitively, so a differently
 * cased copy is withheld too.
 */
export const RECORDED_CONTENT_LABEL_KEYS: readonly string[] = [
  'gen_ai.prompt',
  'gen_ai.completion',
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
];
/** Indexed forms such as `gen_ai.prompt.0.content`. */
export const RECORDED_CONTENT_LABEL_PREFIXES: readonly string[] = ['gen_ai.prompt.', 'gen_ai.completion.'];

export function isRecordedContentKey(key: string): boolean {
  const k = key.toLowerCase();
  return RECORDED_CONTENT_LABEL_KEYS.includes(k) || RECORDED_CONTENT_LABEL_PREFIXES.some((p) => k.startsWith(p));
}

export const CONTENT_READ_SCOPE = 'agents:content:read';

/**
 * Spec: recorded content is shown only when the credential holds `agents:content:read` AND the project's
 * read policy permits it. Projects have no content read policy yet, so the policy is taken to permit
 * whenever the scope is held; when content policies land, this is the one place to consult them.
 */
export function mayReadRecordedContent(caller: Principal, _projectId: string): boolean {
  return caller.scopes.has(CONTENT_READ_SCOPE);
}

/** RFC 3339 to epoch ms. The schema has already checked the syntax; a leap second (:60) is the next second. */
export function parseTimestamp(field: string, value: string): number {
  const normal = value.toUpperCase().replace(' ', 'T');
  let ms = Date.parse(normal);
  if (Number.isNaN(ms)) {
    const leap = /^(.*T\d{2}:\d{2}:)60(.*)$/.exec(normal);
    if (leap) ms = Date.parse(`${leap[1]}59${leap[2]}`) + SECOND;
  }
  if (!Number.isFinite(ms)) throw invalidRequest(`${field} is not a valid RFC 3339 timestamp`);
  return ms;
}

const iso = (ms: number) => new Date(ms).toISOString();

function optionalWindow(startField: string, start: string | undefined, endField: string, end: string | undefined): TimeWindow {
  const w: TimeWindow = {};
  if (start !== undefined) w.startMs = parseTimestamp(startField, start);
  if (end !== undefined) w.endMs = parseTimestamp(endField, end);
  if (w.startMs !== undefined && w.endMs !== undefined && w.startMs > w.endMs)
    throw invalidRequest(`${startField} must not be after ${endField}`);
  return w;
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

/** JSON has 53-bit integers; a larger count is sent as a decimal string. */
export function jsonCount(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
}

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

export interface HistogramCell {
  timestamp: string;
  upper_bound: number;
  upper_bound_infinite: boolean;
  count: number | string;
}

/** Sums histogram increases per (step bucket, upper bound); the +Inf buckets of a step bucket merge into one cell. */
export class HistogramCells {
  private readonly buckets = new Map<number, { finite: Map<number, bigint>; inf: bigint; infBound: number | null; hasInf: boolean }>();

  constructor(private readonly stepMs: number) {}

  add(ts: number, bounds: number[], counts: bigint[]): void {
    const key = Math.floor(ts / this.stepMs) * this.stepMs;
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { finite: new Map(), inf: 0n, infBound: null, hasInf: false }));
    for (let i = 0; i < bounds.length; i++) b.finite.set(bounds[i], (b.finite.get(bounds[i]) ?? 0n) + counts[i]);
    b.hasInf = true;
    b.inf += counts[bounds.length];
    if (bounds.length > 0) {
      const top = bounds[bounds.length - 1];
      if (b.infBound === null || top > b.infBound) b.infBound = top;
    }
  }

  cells(): HistogramCell[] {
    const out: HistogramCell[] = [];
    for (const key of [...this.buckets.keys()].sort((a, b) => a - b)) {
      const b = this.buckets.get(key)!;
      const timestamp = iso(key);
      for (const bound of [...b.finite.keys()].sort((x, y) => x - y))
        out.push({ timestamp, upper_bound: bound, upper_bound_infinite: false, count: jsonCount(b.finite.get(bound)!) });
      if (b.hasInf) out.push({ timestamp, upper_bound: b.infBound ?? 0, upper_bound_infinite: true, count: jsonCount(b.inf) });
    }
    return out;
  }
}

/**
 * Turns a stream of samples, ordered by series, temporality, bounds layout and time, into per-bucket increases.
 * `visibleFromMs` is where the visible window starts (the window start, or just after the metric's tombstone).
 */
export function histogramIncreases(stepMs: number, visibleFromMs: number) {
  const cells = new HistogramCells(stepMs);
  let prev: { chain: string; startTs: number | null; counts: bigint[] } | undefined;
  return {
    cells,
    push(s: HistogramSample): void {
      // Old histogram data without preserved buckets (or a malformed layout) gives no cells.
      if (s.counts.length === 0 || s.counts.length !== s.bounds.length + 1) return;
      if (s.temporality === 'delta') {
        cells.add(s.ts, s.bounds, s.counts);
        return;
      }
      if (s.temporality !== 'cumulative') return;
      const chain = `${s.seriesId}|${s.bounds.join(',')}`;
      if (!prev || prev.chain !== chain) {
        // First sample of the series in the window: an increase only if the series started inside the window.
        if (s.startTs !== null && s.startTs >= visibleFromMs) cells.add(s.ts, s.bounds, s.counts);
      } else {
        const p = prev.counts;
        const reset = s.startTs !== prev.startTs || s.counts.some((c, i) => c < p[i]);
        cells.add(s.ts, s.bounds, reset ? s.counts : s.counts.map((c, i) => c - p[i]));
      }
      prev = { chain, startTs: s.startTs, counts: s.counts };
    },
  };
}

export class MetricsService {
  constructor(
    private readonly store: MetricsStore,
    private readonly clock: Clock,
  ) {}

  async names(projectId: string, q: WindowQuery) {
    const window = optionalWindow('start_time', q.start_time, 'end_time', q.end_time);
    const page = await this.store.names(projectId, window, MAX_METRIC_NAMES);
    const metrics = page.names.map((n) =>
      n.type !== null && (METRIC_TYPES as readonly string[]).includes(n.type) ? { name: n.name, type: n.type as MetricType } : { name: n.name },
    );
    return {
      metrics,
      total_count: page.totalCount,
      ...(page.totalCount > metrics.length ? { truncated: true as const } : {}),
      retrieved_at: this.clock.now().toISOString(),
    };
  }

  /**
   * Label keys and values are the datapoint attributes of the metric's series with a visible point in the
   * window; `service_name` and `environment` are not labels (they have their own filters).
   */
  async labels(caller: Principal, projectId: string, metricName: string, q: WindowQuery) {
    const window = optionalWindow('start_time', q.start_time, 'end_time', q.end_time);
    const showContent = mayReadRecordedContent(caller, projectId);
    const rows = await this.store.labels(projectId, metricName, window);
    // A recorded-content label is omitted with all its values unless the caller may read the content.
    return { labels: rows.filter((l) => showContent || !isRecordedContentKey(l.name)) };
  }

  /** Resolves `time_range` and `step`, and refuses a window implying more than 500 buckets per series. */
  private grid(timeRange: TimeRangeInput | undefined, stepName: string | undefined) {
    const step = oneOf('step', stepName, STEPS, DEFAULT_STEP);
    const stepMs = STEP_MS[step];
    const now = this.clock.now().getTime();
    let endMs = timeRange?.end !== undefined ? parseTimestamp('time_range.end', timeRange.end) : undefined;
    const startMs = timeRange?.start !== undefined ? parseTimestamp('time_range.start', timeRange.start) : (endMs ?? now) - DEFAULT_WINDOW_MS;
    endMs ??= timeRange?.start !== undefined ? now : startMs + DEFAULT_WINDOW_MS;
    if (startMs > endMs) throw invalidRequest('time_range.start must not be after time_range.end');
    const buckets = Math.floor(endMs / stepMs) - Math.floor(startMs / stepMs) + 1;
    if (buckets > MAX_POINTS_PER_SERIES)
      throw invalidRequest(
        `the request implies ${buckets} points per series; the limit is ${MAX_POINTS_PER_SERIES} points per series (use a larger step or a shorter time_range)`,
        { limit: MAX_POINTS_PER_SERIES, points_per_series: buckets },
      );
    return { step, stepMs, startMs, endMs };
  }

  async aggregate(caller: Principal, projectId: string, input: AggregateInput) {
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
    const { startMs, endMs, stepMs } = this.grid(input.time_range, input.step);

    // A filter or group_by on a denied classified dimension is refused before querying.
    if (!mayReadRecordedContent(caller, projectId)) {
      const denied = [...filters.map((f) => f.key), ...groupBy].find(isRecordedContentKey);
      if (denied !== undefined)
        throw permissionDenied(`label "${denied}" holds recorded content; filtering or grouping on it needs ${CONTENT_READ_SCOPE}`);
    }

    const result = await this.store.aggregate({
      projectId,
      metricName: input.metric_name,
      serviceName: input.service_name,
      environment: input.environment,
      filters,
      groupBy,
      startMs,
      endMs,
      stepMs,
      aggregation,
      maxSeries: MAX_SERIES,
    });
    if (result.kind === 'too_many_series')
      throw tooLarge(`the result has more than ${MAX_SERIES} grouped series; the limit is ${MAX_SERIES} (add filters or group by fewer keys)`, {
        limit: MAX_SERIES,
      });

    const series: { labels: Record<string, string>; points: { timestamp: string; value: number }[] }[] = [];
    let current: { id: string; points: { timestamp: string; value: number }[] } | undefined;
    for (const row of result.rows) {
      const id = JSON.stringify(row.group);
      if (!current || current.id !== id) {
        const labels: Record<string, string> = {};
        groupBy.forEach((k, i) => {
          if (row.group[i] !== null) labels[k] = row.group[i]!;
        });
        current = { id, points: [] };
        series.push({ labels, points: current.points });
      }
      current.points.push({ timestamp: iso(row.bucketMs), value: row.value });
    }
    return { series };
  }

  async histogram(projectId: string, input: HistogramInput) {
    const { step, stepMs, startMs, endMs } = this.grid(input.time_range, input.step);
    const tombstone = await this.store.tombstone(projectId, input.metric_name);
    const visibleFromMs = tombstone === null ? startMs : Math.max(startMs, tombstone + 1);
    const acc = histogramIncreases(stepMs, visibleFromMs);
    if (visibleFromMs <= endMs)
      await this.store.histogramSamples(
        { projectId, metricName: input.metric_name, environment: input.environment, startMs: visibleFromMs, endMs },
        (s) => acc.push(s),
      );
    return { metric_name: input.metric_name, step, cells: acc.cells.cells() };
  }

  async delete(projectId: string, metricName: string) {
    const at = await this.store.deleteMetric(projectId, metricName, this.clock.now().getTime());
    return { metric_name: metricName, deleted: true as const, deleted_at: iso(at) };
  }
}
