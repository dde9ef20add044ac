/**
 * The statistics of calibration (docs/evaluations-calibration.md), pure functions with no I/O.
 *
 * - Numeric ratings: Lin's concordance correlation coefficient in its population form (Lin 1989): means,
 *   variances and the covariance all divide by n, not n - 1. It is 1 only on the identity line, so a
 *   judge that is perfectly correlated with reviewers but shifted or rescaled scores below 1.
 * - Verdict labels: Cohen's kappa (chance-corrected agreement), with the raw match rate beside it.
 *
 * Both answer `null` when the statistic cannot be computed: when each side gives one single value
 * throughout (nothing varies, so there is nothing to agree on beyond chance). When only one side is
 * constant the statistic is computable and is exactly 0: a constant judge against varying reviewers is a
 * measured zero, not an undefined value.
 */

/** True when every value is the same (exact comparison, so floating error never makes a constant vary). */
export function isConstant<T>(xs: readonly T[]): boolean {
  return xs.every((x) => x === xs[0]);
}

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/**
 * Lin's concordance correlation coefficient, population form:
 *   ccc = 2·s_xy / (s_x² + s_y² + (x̄ − ȳ)²), with s_xy = Σ(x−x̄)(y−ȳ)/n, s_x² = Σ(x−x̄)²/n.
 * Null when there are no pairs or both sides are constant. Throws when the lengths differ or a value is
 * not finite (a caller bug, never data: stored scores are finite).
 */
export function linsCcc(x: readonly number[], y: readonly number[]): number | null {
  if (x.length !== y.length) throw new Error('linsCcc: the two sides differ in length');
  if (![...x, ...y].every(Number.isFinite)) throw new Error('linsCcc: a value is not finite');
  const n = x.length;
  if (n === 0) return null;
  if (isConstant(x) && isConstant(y)) return null;
  const mx = mean(x);
  const my = mean(y);
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i] - mx;
    const dy = y[i] - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  sxx /= n;
  syy /= n;
  sxy /= n;
  // One constant side: its deviations are exactly 0, so the covariance is exactly 0 and the answer a measured 0.
  if (isConstant(x) || isConstant(y)) return 0;
  return clamp((2 * sxy) / (sxx + syy + (mx - my) ** 2));
}

/** Pearson's r (population moments; the scale cancels). Null when either side is constant. For tests and docs. */
export function pearson(x: readonly number[], y: readonly number[]): number | null {
  if (x.length !== y.length) throw new Error('pearson: the two sides differ in length');
  if (x.length === 0 || isConstant(x) || isConstant(y)) return null;
  const mx = mean(x);
  const my = mean(y);
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < x.length; i++) {
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
    sxy += (x[i] - mx) * (y[i] - my);
  }
  return clamp(sxy / Math.sqrt(sxx * syy));
}

/** The share of pairs whose two labels are equal; null without pairs. */
export function agreementRate(a: readonly string[], b: readonly string[]): number | null {
  if (a.length !== b.length) throw new Error('agreementRate: the two sides differ in length');
  if (a.length === 0) return null;
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  return same / a.length;
}

/**
 * Cohen's kappa: κ = (p_o − p_e) / (1 − p_e), p_o the observed match rate and p_e = Σ_k p_a(k)·p_b(k) the
 * match rate expected by chance from each side's own label frequencies. Categories are the union of both
 * sides' labels, compared exactly. Null when there are no pairs or each side is constant.
 */
export function cohensKappa(a: readonly string[], b: readonly string[]): number | null {
  if (a.length !== b.length) throw new Error('cohensKappa: the two sides differ in length');
  const n = a.length;
  if (n === 0) return null;
  if (isConstant(a) && isConstant(b)) return null;
  const ca = new Map<string, number>();
  const cb = new Map<string, number>();
  let same = 0;
  for (let i = 0; i < n; i++) {
    ca.set(a[i], (ca.get(a[i]) ?? 0) + 1);
    cb.set(b[i], (cb.get(b[i]) ?? 0) + 1);
    if (a[i] === b[i]) same++;
  }
  // One constant side: p_o equals p_e exactly (both are the other side's share of that one label).
  if (isConstant(a) || isConstant(b)) return 0;
  let chance = 0;
  for (const [k, na] of ca) chance += na * (cb.get(k) ?? 0);
  // Counts stay integers until the last division, so the result is as exact as doubles allow.
  return clamp((same * n - chance) / (n * n - chance));
}

/** Rounding can carry a perfect agreement a hair past ±1. */
function clamp(v: number): number {
  return Math.max(-1, Math.min(1, v));
}
