/**
 * Exponential histogram buckets as explicit upper bounds, the one layout metric_histograms stores. With base = 2^(2^-scale), positive bucket index i covers
 * (base^i, base^(i+1)] and negative bucket index i covers [-base^(i+1), -base^i). Ascending:
 * an empty bucket up to -base^(top+1) (the lower edge of the most negative bucket), the negative
 * buckets from the most negative up to -base^(offset), the zero bucket up to zero_threshold (0 when
 * unset) holding zero_count, an empty bucket up to base^(offset) when that edge lies above the zero
 * threshold (so the first positive bucket keeps its lower edge), the positive buckets, and last the
 * +Inf bucket, 0 because every exponential bucket is bounded.
 */
export function exponentialToExplicit(
  scale: number,
  zeroThreshold: number,
  zeroCount: bigint,
  positive: { offset: number; counts: bigint[] },
  negative: { offset: number; counts: bigint[] },
): { bounds: number[]; counts: bigint[] } {
  const bounds: number[] = [];
  const counts: bigint[] = [];
  const exp = Math.pow(2, -scale); // base^i = 2^(i * 2^-scale)
  const edge = (i: number) => Math.pow(2, i * exp);
  const push = (bound: number, count: bigint) => {
    const last = bounds.length - 1;
    // A bound not above the previous one (a zero threshold wider than the nearest buckets) merges down.
    if (last >= 0 && !(bound > bounds[last])) counts[last] += count;
    else {
      bounds.push(bound);
      counts.push(count);
    }
  };
  if (negative.counts.length > 0) {
    const top = negative.offset + negative.counts.length - 1;
    push(-edge(top + 1), 0n);
    for (let i = top; i >= negative.offset; i--) push(-edge(i), negative.counts[i - negative.offset]);
  }
  push(zeroThreshold, zeroCount);
  if (positive.counts.length > 0) {
    const low = edge(positive.offset);
    if (low > zeroThreshold) push(low, 0n);
    for (let i = 0; i < positive.counts.length; i++) push(edge(positive.offset + i + 1), positive.counts[i]);
  }
  counts.push(0n);
  return { bounds, counts };
}
