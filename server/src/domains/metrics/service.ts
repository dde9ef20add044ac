/**
 * The rules of the metrics endpoints (spec 1, "Metrics endpoints", "Limits"). No HTTP, no SQL.
 * They are split by meaning: request-rules.ts (steps, windows, label keys, filters, limits), histogram-cells.ts
 * and names-labels.ts (names, labels, recorded content); this file runs them against the store.
 *
 * Decisions the spec leaves open (quoted in docs/reference.md):
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
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import { invalidRequest } from '../../http/errors.js';
import { checkHistogramAggregation, HistogramAggregate, isEstimate } from './histogram-aggregate.js';
import { HistogramCells, histogramIncreases } from './histogram-cells.js';
import { metadataFields, metricNameList, refuseRecordedContentKeys, visibleLabels } from './names-labels.js';
import type { ContentReadPolicy } from '../content-policy/access.js';
import {
  aggregateSelection,
  isoTime,
  MAX_METRIC_NAMES,
  METRIC_TYPES,
  MAX_SERIES,
  optionalWindow,
  resolveGrid,
  tooManySeries,
  type AggregateInput,
  type HistogramInput,
  type WindowQuery,
} from './request-rules.js';
import type { AggregateQuery, AggregateResult, MetricsStore, MetricType } from './store.js';


// The inputs of MetricsService's methods, so callers can name them from where the service is.
export type { AggregateInput, HistogramInput, TimeRangeInput, WindowQuery } from './request-rules.js';

export class MetricsService {
  constructor(
    private readonly store: MetricsStore,
    private readonly clock: Clock,
    private readonly content: ContentReadPolicy,
  ) {}

  async names(projectId: string, q: WindowQuery) {
    const window = optionalWindow(q, this.clock.now().getTime());
    const page = await this.store.names(projectId, window, MAX_METRIC_NAMES);
    return metricNameList(page, this.clock.now());
  }

  /**
   * Label keys and values are the datapoint attributes of the metric's series with a visible point in the
   * window; `service_name` and `environment` are not labels (they have their own filters).
   */
  async labels(caller: Principal, projectId: string, metricName: string, q: WindowQuery) {
    const window = optionalWindow(q, this.clock.now().getTime());
    const rows = await this.store.labels(projectId, metricName, window);
    return { labels: visibleLabels(await this.content.readAccess(caller, projectId), rows) };
  }

  async aggregate(caller: Principal, projectId: string, input: AggregateInput) {
    const { aggregation, filters, groupBy } = aggregateSelection(input);
    const { startMs, endMs, stepMs } = resolveGrid(this.clock, input.time_range, input.step);
    refuseRecordedContentKeys(await this.content.readAccess(caller, projectId), [...filters.map((f) => f.key), ...groupBy]);
    const query = {
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
    };
    // The plain read starts at once, beside the catalogue lookup that says whether it is the right one
    // (almost always): a histogram or a refusal discards it, every other metric waits for one read only.
    const plain = this.store.aggregate(query);
    plain.catch(() => undefined); // settled below or discarded; never an unhandled rejection
    const { types, metadata } = await this.store.describe(projectId, input.metric_name);
    // A name whose series all are histograms is read from their count, sum and buckets; a name whose
    // series disagree on the type (against the OpenTelemetry data model) is read as its stored points.
    const histogram = types.length > 0 && types.every((t) => t === 'histogram');
    if (histogram) checkHistogramAggregation(input.metric_name, aggregation);
    else if (types.length > 0 && types.every((t) => t === 'summary') && (aggregation === 'count' || aggregation === 'sum'))
      throw invalidRequest(
        `metric "${input.metric_name}" is a summary, stored as one mean per sample: aggregation "${aggregation}" would count or add those means, not the observations; use avg, min, max, p50, p95, p99, stddev or variance (over the means)`,
        { metric_type: 'summary', aggregation },
      );
    const result = histogram ? await this.histogramAggregate(query) : await plain;
    if (result.kind === 'too_many_series') throw tooManySeries();

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
      current.points.push({ timestamp: isoTime(row.bucketMs), value: row.value });
    }
    const known = types.filter((t): t is MetricType => t !== null && (METRIC_TYPES as readonly string[]).includes(t));
    const type: MetricType | undefined = known.length === 1 && types.length === 1 ? known[0] : undefined;
    return {
      metric_name: input.metric_name,
      aggregation,
      ...(type !== undefined ? { type } : {}),
      ...metadataFields(metadata),
      estimated: histogram && isEstimate(aggregation),
      series,
    };
  }

  /** A histogram read by its count, sum and buckets (histogram-aggregate.ts), after the tombstone like every read. */
  private async histogramAggregate(q: AggregateQuery): Promise<AggregateResult> {
    const tombstone = await this.store.tombstone(q.projectId, q.metricName);
    const visibleFromMs = tombstone === null ? q.startMs : Math.max(q.startMs, tombstone + 1);
    const acc = new HistogramAggregate(q.stepMs, visibleFromMs, q.aggregation);
    const outcome = await this.store.histogramAggregateSamples(q, (s) => acc.push(s));
    return outcome === 'too_many_series' ? { kind: 'too_many_series' } : { kind: 'rows', rows: acc.rows() };
  }

  async histogram(projectId: string, input: HistogramInput) {
    const { step, stepMs, startMs, endMs } = resolveGrid(this.clock, input.time_range, input.step);
    const tombstone = await this.store.tombstone(projectId, input.metric_name);
    const visibleFromMs = tombstone === null ? startMs : Math.max(startMs, tombstone + 1);
    const cells = new HistogramCells(stepMs);
    const acc = histogramIncreases(visibleFromMs, (inc) => cells.add(inc.ts, inc.bounds, inc.counts));
    if (visibleFromMs <= endMs)
      await this.store.histogramSamples(
        { projectId, metricName: input.metric_name, environment: input.environment, startMs: visibleFromMs, endMs },
        (s) => acc.push(s),
      );
    const { metadata } = await this.store.describe(projectId, input.metric_name);
    return { metric_name: input.metric_name, step, ...metadataFields(metadata), cells: cells.cells() };
  }

  async delete(projectId: string, metricName: string) {
    const at = await this.store.deleteMetric(projectId, metricName, this.clock.now().getTime());
    return { metric_name: metricName, deleted: true as const, deleted_at: isoTime(at) };
  }
}
