/** Forecast seasonality test: degrees-of-freedom adjusted seasonal strength and its pure-noise ceiling (decisions in forecast-model.ts). */

export interface SeasonalStrength {
  /** Degrees-of-freedom adjusted share of detrended variance explained by the daily profile, 0..1. */
  strength: number;
  /** Strength that pure Gaussian noise exceeds only ~1 % of the time for this n and phase count. */
  noiseCeiling: number;
}

const NONE: SeasonalStrength = { strength: 0, noiseCeiling: 0 };

/** x clamped to [0, 1]; non-finite x gives 0. */
export function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** Adjusted strength that pure noise exceeds only ~1 % of the time (normal approximation to the null Beta law of R²). */
function noiseCeilingOf(n: number, populated: number): number {
  const a = (populated - 1) / 2;
  const b = (n - 1 - populated) / 2;
  if (a <= 0 || b <= 0) return 0;
  const mean = a / (a + b);
  const sd = Math.sqrt((a * b) / ((a + b) * (a + b) * (a + b + 1)));
  const r2 = Math.min(1, mean + 2.33 * sd);
  return clamp01(1 - ((1 - r2) * (n - 2)) / (n - 1 - populated));
}

/** Seasonal strength of z on its observed points: linear detrend, per-phase means, adjusted share of variance explained. */
export function seasonalStrengthOf(z: ArrayLike<number>, observed: ArrayLike<number>, s: number): SeasonalStrength {
  if (s < 2) return NONE;
  let n = 0;
  let sumT = 0;
  let sumZ = 0;
  for (let i = 0; i < z.length; i++) {
    if (!observed[i]) continue;
    n++;
    sumT += i;
    sumZ += z[i];
  }
  if (n < 3) return NONE;
  const meanT = sumT / n;
  const meanZ = sumZ / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < z.length; i++) {
    if (!observed[i]) continue;
    const dt = i - meanT;
    sxx += dt * dt;
    sxy += dt * (z[i] - meanZ);
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  const phaseSum = new Float64Array(s);
  const phaseCount = new Float64Array(s);
  let ssD = 0;
  for (let i = 0; i < z.length; i++) {
    if (!observed[i]) continue;
    const d = z[i] - (meanZ + slope * (i - meanT));
    ssD += d * d;
    phaseSum[i % s] += d;
    phaseCount[i % s]++;
  }
  let populated = 0;
  for (let p = 0; p < s; p++) {
    if (phaseCount[p] > 0) {
      populated++;
      phaseSum[p] /= phaseCount[p];
    }
  }
  const noiseCeiling = noiseCeilingOf(n, populated);
  // z is scaled to [-1, 1]; a detrended sum of squares this small is rounding noise: flat series.
  if (!(ssD > 1e-20 * n)) return { strength: 0, noiseCeiling };
  let ssR = 0;
  for (let i = 0; i < z.length; i++) {
    if (!observed[i]) continue;
    const r = z[i] - (meanZ + slope * (i - meanT)) - phaseSum[i % s];
    ssR += r * r;
  }
  const dofR = n - 1 - populated;
  if (dofR <= 0) return { strength: 0, noiseCeiling };
  return { strength: clamp01(1 - ssR / dofR / (ssD / (n - 2))), noiseCeiling };
}
