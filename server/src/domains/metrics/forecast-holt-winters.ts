/** Forecast model fit: damped additive Holt-Winters, its parameter grid search, fit quality, band width and projection (decisions in forecast-model.ts). */

import type { ForecastPoint } from './forecast-model.js';
import { clamp01 } from './forecast-seasonality.js';

/** Target share of fitted points inside the automatic band. */
export const AUTO_BAND_COVERAGE = 0.95;
export const MIN_BAND_K = 0.5;
export const MAX_BAND_K = 5;
/** Trend damping of the Holt-Winters model. */
export const DAMPING_PHI = 0.98;

const ALPHAS = [0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9];
const BETAS = [0, 0.01, 0.05, 0.15];
const GAMMAS = [0, 0.05, 0.1, 0.2, 0.35];

// ---------------------------------------------------------------------------------------------
// Holt-Winters
// ---------------------------------------------------------------------------------------------

interface HwInit {
  level: number;
  trend: number;
  season: Float64Array;
}

function initialState(z: Float64Array, s: number): HwInit {
  let m1 = 0;
  let m2 = 0;
  for (let j = 0; j < s; j++) {
    m1 += z[j];
    m2 += z[j + s];
  }
  m1 /= s;
  m2 /= s;
  const trend = (m2 - m1) / s;
  const season = new Float64Array(s);
  const mid = (s - 1) / 2;
  let mean = 0;
  for (let j = 0; j < s; j++) {
    const a = z[j] - (m1 + trend * (j - mid));
    const b = z[j + s] - (m2 + trend * (j - mid));
    season[j] = (a + b) / 2;
    mean += season[j];
  }
  mean /= s;
  for (let j = 0; j < s; j++) season[j] -= mean;
  // State "just before t = 0": the first-season mean sits at its middle, (s + 1) / 2 steps later.
  return { level: m1 - (trend * (s + 1)) / 2, trend, season };
}

interface HwRun {
  sse: number;
  level: number;
  trend: number;
}

/**
 * One pass of additive damped Holt-Winters over z. `season` is overwritten with the final
 * seasonal state (indexed by t mod s). One-step errors at observed points t >= s are summed into
 * sse and, when `residuals` is given, appended to it.
 */
function runHoltWinters(
  z: Float64Array,
  observed: Uint8Array,
  s: number,
  alpha: number,
  beta: number,
  gamma: number,
  init: HwInit,
  season: Float64Array,
  residuals?: number[],
): HwRun {
  season.set(init.season);
  const phi = DAMPING_PHI;
  let level = init.level;
  let trend = init.trend;
  let sse = 0;
  const n = z.length;
  for (let t = 0, j = 0; t < n; t++) {
    const sj = season[j];
    const base = level + phi * trend;
    const y = z[t];
    const e = y - base - sj;
    if (t >= s && observed[t] === 1) {
      sse += e * e;
      if (residuals) residuals.push(e);
    }
    const nextLevel = base + alpha * e; // = alpha·(y - sj) + (1 - alpha)·(level + phi·trend)
    trend = beta * (nextLevel - level) + (1 - beta) * phi * trend;
    season[j] = gamma * (y - nextLevel) + (1 - gamma) * sj;
    level = nextLevel;
    j++;
    if (j === s) j = 0;
  }
  return { sse, level, trend };
}

export interface HwFit {
  alpha: number;
  beta: number;
  gamma: number;
  level: number;
  trend: number;
  season: Float64Array;
  residuals: number[];
}

export function fitHoltWinters(z: Float64Array, observed: Uint8Array, s: number): HwFit {
  const init = initialState(z, s);
  const scratch = new Float64Array(s);
  let best = { alpha: ALPHAS[0], beta: BETAS[0], gamma: GAMMAS[0] };
  let bestSse = Number.POSITIVE_INFINITY;
  for (const alpha of ALPHAS) {
    for (const beta of BETAS) {
      for (const gamma of GAMMAS) {
        if (gamma > 1 - alpha + 1e-12) continue;
        const { sse } = runHoltWinters(z, observed, s, alpha, beta, gamma, init, scratch);
        if (sse < bestSse) {
          bestSse = sse;
          best = { alpha, beta, gamma };
        }
      }
    }
  }
  const season = new Float64Array(s);
  const residuals: number[] = [];
  const run = runHoltWinters(z, observed, s, best.alpha, best.beta, best.gamma, init, season, residuals);
  return { ...best, level: run.level, trend: run.trend, season, residuals };
}

// ---------------------------------------------------------------------------------------------
// Fit quality and band
// ---------------------------------------------------------------------------------------------

export interface FitQuality {
  /** max(0, 1 - SSE₁ / SST) over observed points after the first season (0 when SST vanishes). */
  fitScore: number;
  /** Root-mean-square one-step-ahead deviation σ (scaled units). */
  rms: number;
}

/** Residual statistics over the observed points after the first season. */
export function fitQuality(residuals: number[], z: Float64Array, observed: Uint8Array, s: number): FitQuality {
  const span = z.length;
  const m = residuals.length;
  let sse = 0;
  for (const e of residuals) sse += e * e;
  let meanZ = 0;
  for (let t = s; t < span; t++) if (observed[t]) meanZ += z[t];
  meanZ /= Math.max(1, m);
  let sst = 0;
  for (let t = s; t < span; t++) {
    if (!observed[t]) continue;
    const d = z[t] - meanZ;
    sst += d * d;
  }
  const fitScore = sst > 1e-20 * m ? clamp01(1 - sse / sst) : 0;
  const rms = m > 0 ? Math.sqrt(sse / m) : 0;
  return { fitScore, rms };
}

/** Automatic band multiplier: (95th percentile, nearest rank, of |deviation|) / σ, clamped to [MIN_BAND_K, MAX_BAND_K]. */
export function autoBandK(residuals: number[], rms: number): number {
  if (!(rms > 0)) return MIN_BAND_K;
  const m = residuals.length;
  const abs = residuals.map(Math.abs).sort((a, b) => a - b);
  const q = abs[Math.max(0, Math.ceil(AUTO_BAND_COVERAGE * m) - 1)];
  return Math.min(MAX_BAND_K, Math.max(MIN_BAND_K, q / rms));
}

function finite(x: number): number {
  if (Number.isNaN(x)) return 0;
  if (x === Number.POSITIVE_INFINITY) return Number.MAX_VALUE;
  if (x === Number.NEGATIVE_INFINITY) return -Number.MAX_VALUE;
  return x;
}

export interface Projection {
  /** Grid points the model was fitted on (first..last history timestamp). */
  span: number;
  /** Season length. */
  s: number;
  centre: number;
  scale: number;
  /** Band half-width k·σ in scaled units. */
  halfWidthZ: number;
  /** Floor expected and both bounds at zero (all history values non-negative). */
  floorAtZero: boolean;
  lastTs: number;
  intervalMs: number;
  horizon: number;
}

/** `horizon` points at lastTs + h·interval: damped-trend expectation ± halfWidth, back in original units, all finite. */
export function projectForecast(fit: HwFit, p: Projection): ForecastPoint[] {
  const { span, s, centre, scale, halfWidthZ, floorAtZero, lastTs, intervalMs, horizon } = p;
  const forecast: ForecastPoint[] = new Array(horizon);
  let damp = 0;
  let phiPow = 1;
  for (let h = 1; h <= horizon; h++) {
    phiPow *= DAMPING_PHI;
    damp += phiPow;
    const zHat = fit.level + damp * fit.trend + fit.season[(span - 1 + h) % s];
    let expected = finite(centre + scale * zHat);
    let lower = finite(centre + scale * (zHat - halfWidthZ));
    let upper = finite(centre + scale * (zHat + halfWidthZ));
    if (floorAtZero) {
      expected = Math.max(0, expected);
      lower = Math.max(0, lower);
      upper = Math.max(0, upper);
    }
    forecast[h - 1] = { timestamp: lastTs + h * intervalMs, expected, lower, upper };
  }
  return forecast;
}
