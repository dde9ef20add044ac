/**
 * The value of one data point of each OTLP metric kind, or the reason the point is rejected. The checks
 * run in a fixed order per kind, so a point with several faults always gives the same reason.
 */
import type { HistogramRow } from '../../domains/metrics/rows.js';
import type { ExponentialHistogramDataPoint, HistogramDataPoint, Int64, NumberDataPoint, SummaryDataPoint } from './decode.js';
import { exponentialToExplicit } from './exponential.js';
import { int64ToNumber, uint64ToBigInt } from './values.js';

const MIN_SCALE = -10;
const MAX_SCALE = 20;

/** What a histogram or summary point carries; `buckets` is absent for a summary. */
export interface SampleValue {
  count: bigint;
  sum: number | null;
  buckets?: { bounds: number[]; counts: bigint[] };
}

/** A rejection: the reason, kept when it is the request's first. */
export interface Rejected {
  rejected: string;
}

/** AGGREGATION_TEMPORALITY_DELTA = 1, CUMULATIVE = 2; UNSPECIFIED (0) or unknown is read as cumulative. */
export function temporality(t: number | null | undefined): HistogramRow['temporality'] {
  return t === 1 ? 'delta' : 'cumulative';
}

export function numberValue(p: NumberDataPoint): number | Rejected {
  let value: number;
  if (p.asDouble !== null && p.asDouble !== undefined) value = p.asDouble;
  else if (p.asInt !== null && p.asInt !== undefined) value = int64ToNumber(p.asInt);
  else return { rejected: 'a data point has no value' };
  if (!Number.isFinite(value)) return { rejected: 'a data point value is NaN or infinite' };
  return value;
}

export function histogramValue(p: HistogramDataPoint): SampleValue | Rejected {
  const count = uint64ToBigInt(p.count);
  const sum = p.sum ?? null;
  const bounds = p.explicitBounds ?? [];
  const raw = p.bucketCounts ?? [];
  if (count === undefined) return { rejected: 'a histogram count is not a non-negative integer' };
  if (sum !== null && !Number.isFinite(sum)) return { rejected: 'a histogram sum is NaN or infinite' };
  let counts: bigint[];
  // OTLP allows a histogram without buckets (count and sum only): one (-Inf, +Inf) bucket holds the count.
  if (raw.length === 0 && bounds.length === 0) counts = [count];
  else if (raw.length !== bounds.length + 1)
    return { rejected: `a histogram has ${raw.length} bucket_counts for ${bounds.length} explicit_bounds (needs ${bounds.length + 1})` };
  else {
    if (!ascending(bounds)) return { rejected: 'histogram explicit_bounds must be finite and strictly ascending' };
    const c = bigints(raw);
    if (!c) return { rejected: 'a histogram bucket count is not a non-negative integer' };
    counts = c;
  }
  return { count, sum, buckets: { bounds: Array.isArray(bounds) ? bounds : Array.from(bounds), counts } };
}

export function exponentialValue(p: ExponentialHistogramDataPoint): SampleValue | Rejected {
  const scale = p.scale ?? 0;
  const zeroThreshold = p.zeroThreshold ?? 0;
  const count = uint64ToBigInt(p.count);
  const zeroCount = uint64ToBigInt(p.zeroCount);
  const sum = p.sum ?? null;
  const pos = bigints(p.positive?.bucketCounts ?? []);
  const neg = bigints(p.negative?.bucketCounts ?? []);
  if (!Number.isInteger(scale) || scale < MIN_SCALE || scale > MAX_SCALE)
    return { rejected: `an exponential histogram scale ${scale} is outside ${MIN_SCALE}..${MAX_SCALE}` };
  if (!(zeroThreshold >= 0 && Number.isFinite(zeroThreshold)))
    return { rejected: 'an exponential histogram zero_threshold is negative, NaN or infinite' };
  if (count === undefined || zeroCount === undefined || !pos || !neg)
    return { rejected: 'an exponential histogram count is not a non-negative integer' };
  if (sum !== null && !Number.isFinite(sum)) return { rejected: 'an exponential histogram sum is NaN or infinite' };
  const buckets = exponentialToExplicit(
    scale,
    zeroThreshold,
    zeroCount,
    { offset: p.positive?.offset ?? 0, counts: pos },
    { offset: p.negative?.offset ?? 0, counts: neg },
  );
  if (!buckets.bounds.every(Number.isFinite)) return { rejected: 'exponential histogram buckets lie beyond the range of a double' };
  return { count, sum, buckets };
}

export function summaryValue(p: SummaryDataPoint): SampleValue | Rejected {
  const count = uint64ToBigInt(p.count);
  const sum = p.sum ?? 0;
  if (count === undefined) return { rejected: 'a summary count is not a non-negative integer' };
  if (!Number.isFinite(sum)) return { rejected: 'a summary sum is NaN or infinite' };
  // Quantile values have no table; the sample is kept as its mean (and its series as type summary).
  return { count, sum };
}

function ascending(bounds: ArrayLike<number>): boolean {
  for (let i = 0; i < bounds.length; i++) {
    if (!Number.isFinite(bounds[i])) return false;
    if (i > 0 && !(bounds[i] > bounds[i - 1])) return false;
  }
  return true;
}

function bigints(raw: Int64[]): bigint[] | undefined {
  const out = new Array<bigint>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const v = uint64ToBigInt(raw[i]);
    if (v === undefined) return undefined;
    out[i] = v;
  }
  return out;
}
