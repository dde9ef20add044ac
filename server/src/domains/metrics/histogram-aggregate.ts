/**
 * `POST /metrics/aggregate` over a histogram metric. A histogram sample is not one value: it is a
 * count of observations, their sum and a count per bucket. So the aggregations are computed from
 * those (after the same delta/cumulative increase rules as `/metrics/histogram`), never from one
 * mean per export:
 *
 * - `count` (observations), `sum` and `avg` (sum / count) are exact. A bucket whose samples did not
 *   all carry a sum has no `sum` or `avg` point: an unknown sum is never shown as a number.
 * - `p50`, `p95`, `p99` are estimates from the buckets: the bucket that holds the rank is found on
 *   the merged bucket counts, and the value is interpolated linearly inside it (the lowest bucket
 *   starts at 0 when its upper bound is positive; a rank in the +Inf bucket gives the largest finite
 *   bound). The answer says `estimated: true`.
 * - `min`, `max`, `stddev` and `variance` cannot be computed from count, sum and buckets: they are
 *   refused with 400 naming the aggregations that can, and `/metrics/histogram` for the distribution.
 */
import { ApiError } from '../../http/errors.js';
import { histogramIncreases, type HistogramIncrease } from './histogram-cells.js';
import type { AggregateRow, Aggregation, HistogramAggregateSample } from './store.js';

export const HISTOGRAM_EXACT_AGGREGATIONS: readonly Aggregation[] = ['count', 'sum', 'avg'];
export const HISTOGRAM_ESTIMATED_AGGREGATIONS: readonly Aggregation[] = ['p50', 'p95', 'p99'];
const QUANTILE: Partial<Record<Aggregation, number>> = { p50: 0.5, p95: 0.95, p99: 0.99 };

/** Refuses, before any read, an aggregation a histogram's count, sum and buckets cannot answer. */
export function checkHistogramAggregation(metricName: string, aggregation: Aggregation): void {
  if (HISTOGRAM_EXACT_AGGREGATIONS.includes(aggregation) || HISTOGRAM_ESTIMATED_AGGREGATIONS.includes(aggregation)) return;
  throw new ApiError(
    400,
    'invalid_request',
    `metric "${metricName}" is a histogram: aggregation "${aggregation}" cannot be computed from its count, sum and buckets; ` +
      `use count, sum or avg (exact), p50, p95 or p99 (estimated from the buckets), or POST /api/v1/metrics/histogram for the distribution`,
    {
      metric_type: 'histogram',
      aggregation,
      exact: [...HISTOGRAM_EXACT_AGGREGATIONS],
      estimated: [...HISTOGRAM_ESTIMATED_AGGREGATIONS],
      histogram_path: '/api/v1/metrics/histogram',
    },
  );
}

export const isEstimate = (aggregation: Aggregation) => HISTOGRAM_ESTIMATED_AGGREGATIONS.includes(aggregation);

/**
 * The q-quantile estimated from per-bucket counts (`finite` by upper bound, `inf` above the largest);
 * undefined when there are no observations or only the +Inf bucket has a bound to give.
 */
export function bucketQuantile(q: number, finite: Map<number, bigint>, inf: bigint): number | undefined {
  const bounds = [...finite.keys()].sort((a, b) => a - b);
  let total = inf;
  for (const b of bounds) total += finite.get(b)!;
  if (total === 0n) return undefined;
  const rank = q * Number(total);
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    const n = Number(finite.get(bounds[i])!);
    if (n > 0 && below + n >= rank) {
      const upper = bounds[i];
      if (i === 0 && upper <= 0) return upper;
      const lower = i === 0 ? 0 : bounds[i - 1];
      return lower + ((upper - lower) * (rank - below)) / n;
    }
    below += n;
  }
  return bounds.length > 0 ? bounds[bounds.length - 1] : undefined;
}

interface StepBucket {
  count: bigint;
  sum: number;
  sumKnown: boolean;
  finite: Map<number, bigint>;
  inf: bigint;
}

/** Accumulates the increases of the samples per group and step bucket, then answers one aggregation. */
export class HistogramAggregate {
  /** In the order the groups arrive (the store sends them in group order). */
  private readonly groups = new Map<string, { group: (string | null)[]; buckets: Map<number, StepBucket> }>();
  private readonly streams = new Map<string, ReturnType<typeof histogramIncreases>>();

  constructor(
    private readonly stepMs: number,
    private readonly visibleFromMs: number,
    private readonly aggregation: Aggregation,
  ) {}

  push(s: HistogramAggregateSample): void {
    const id = JSON.stringify(s.group);
    let stream = this.streams.get(id);
    if (!stream) {
      const entry = { group: s.group, buckets: new Map<number, StepBucket>() };
      this.groups.set(id, entry);
      stream = histogramIncreases(this.visibleFromMs, (inc) => this.add(entry.buckets, inc));
      this.streams.set(id, stream);
    }
    stream.push(s);
  }

  private add(buckets: Map<number, StepBucket>, inc: HistogramIncrease): void {
    const key = Math.floor(inc.ts / this.stepMs) * this.stepMs;
    let b = buckets.get(key);
    if (!b) buckets.set(key, (b = { count: 0n, sum: 0, sumKnown: true, finite: new Map(), inf: 0n }));
    b.count += inc.count;
    if (inc.sum === null) b.sumKnown = false;
    else b.sum += inc.sum;
    for (let i = 0; i < inc.bounds.length; i++) b.finite.set(inc.bounds[i], (b.finite.get(inc.bounds[i]) ?? 0n) + inc.counts[i]);
    b.inf += inc.counts[inc.bounds.length];
  }

  private value(b: StepBucket): number | undefined {
    switch (this.aggregation) {
      case 'count':
        return Number(b.count);
      case 'sum':
        return b.sumKnown ? b.sum : undefined;
      case 'avg':
        return b.sumKnown && b.count > 0n ? b.sum / Number(b.count) : undefined;
      default:
        return bucketQuantile(QUANTILE[this.aggregation]!, b.finite, b.inf);
    }
  }

  rows(): AggregateRow[] {
    const out: AggregateRow[] = [];
    for (const { group, buckets } of this.groups.values()) {
      for (const bucketMs of [...buckets.keys()].sort((a, b) => a - b)) {
        const value = this.value(buckets.get(bucketMs)!);
        if (value !== undefined) out.push({ group, bucketMs, value });
      }
    }
    return out;
  }
}
