/** Histogram cells of `POST /metrics/histogram`; the cell and increase rules are listed in service.ts. */
import { isoTime } from './request-rules.js';
import type { HistogramSample } from './store.js';

export interface HistogramCell {
  timestamp: string;
  upper_bound: number;
  upper_bound_infinite: boolean;
  count: number | string;
}

/** JSON has 53-bit integers; a larger count is sent as a decimal string. */
export function jsonCount(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
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
      const timestamp = isoTime(key);
      for (const bound of [...b.finite.keys()].sort((x, y) => x - y))
        out.push({ timestamp, upper_bound: bound, upper_bound_infinite: false, count: jsonCount(b.finite.get(bound)!) });
      if (b.hasInf) out.push({ timestamp, upper_bound: b.infBound ?? 0, upper_bound_infinite: true, count: jsonCount(b.inf) });
    }
    return out;
  }
}

/** What one histogram sample adds to its step bucket: its own counts (delta) or its difference from the previous one. */
export interface HistogramIncrease {
  ts: number;
  bounds: number[];
  /** Per bucket, one more than `bounds`. */
  counts: bigint[];
  count: bigint;
  /** Null when a sample of the pair carried no sum: the sum of the increase is then unknown. */
  sum: number | null;
}

/**
 * Turns a stream of samples, ordered by series, temporality, bounds layout and time, into increases.
 * `visibleFromMs` is where the visible window starts (the window start, or just after the metric's tombstone).
 */
export function histogramIncreases(visibleFromMs: number, emit: (inc: HistogramIncrease) => void) {
  let prev: { chain: string; startTs: number | null; counts: bigint[]; count: bigint; sum: number | null } | undefined;
  return {
    push(s: HistogramSample): void {
      // Old histogram data without preserved buckets (or a malformed layout) gives no cells.
      if (s.counts.length === 0 || s.counts.length !== s.bounds.length + 1) return;
      const whole = { ts: s.ts, bounds: s.bounds, counts: s.counts, count: s.count, sum: s.sum };
      if (s.temporality === 'delta') {
        emit(whole);
        return;
      }
      if (s.temporality !== 'cumulative') return;
      const chain = `${s.seriesId}|${s.bounds.join(',')}`;
      if (!prev || prev.chain !== chain) {
        // First sample of the series in the window: an increase only if the series started inside the window.
        if (s.startTs !== null && s.startTs >= visibleFromMs) emit(whole);
      } else {
        const p = prev;
        const reset = s.startTs !== p.startTs || s.count < p.count || s.counts.some((c, i) => c < p.counts[i]);
        if (reset) emit(whole);
        else
          emit({
            ts: s.ts,
            bounds: s.bounds,
            counts: s.counts.map((c, i) => c - p.counts[i]),
            count: s.count - p.count,
            sum: s.sum === null || p.sum === null ? null : s.sum - p.sum,
          });
      }
      prev = { chain, startTs: s.startTs, counts: s.counts, count: s.count, sum: s.sum };
    },
  };
}
