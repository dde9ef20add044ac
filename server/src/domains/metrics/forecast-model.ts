/**
 * Metric forecast model: a pure, dependency-free additive seasonal forecaster with a daily
 * season (spec: metrics "Forecast"). The HTTP layer validates the request body
 * (`metric_name`, `interval`, `horizon`, `sensitivity`, `environment`, `project_id`,
 * `time_range`), reads the history series and calls {@link fitForecast}; this module computes
 * `history_points`, `required_history_points`, `missing_buckets`, `status`, `status_reason`,
 * `confidence`, `band_semantics` and `forecast[]`.
 *
 * Decisions (all deterministic: the same input always yields exactly the same output):
 *
 * Season length and required history
 *   - season length s = round(1 day / interval) grid points, at least 1 (1m -> 1440, 5m -> 288,
 *     1h -> 24). `required_history_points` = 2·s, "the two-daily-season minimum".
 *   - For intervals of one day or longer a daily season is degenerate: s = 1, required = 2.
 *     A one-point season carries no within-day shape, so its seasonal strength is 0 by
 *     definition and such a series is at best FORECAST_FIT_STATUS_NONSEASONAL (never READY).
 *
 * Grid, forward gaps and irregularity
 *   - The grid is epoch-anchored: a timestamp is on the grid iff `ts % intervalMs === 0`.
 *   - `missing_buckets`: take the distinct finite timestamps in ascending order; for every
 *     consecutive pair t0 < t1 count the grid timestamps strictly between them (for on-grid
 *     timestamps, (t1 - t0) / interval - 1). Because the count is taken over the sorted distinct
 *     set, duplicate and out-of-order observations make history irregular without raising it.
 *   - Status precedence: IRREGULAR (shape) > INSUFFICIENT_HISTORY > IRREGULAR (gaps) >
 *     NONSEASONAL > READY.
 *   - IRREGULAR (shape) when, in the order given, any timestamp is duplicated, not strictly
 *     increasing (out of order), off the grid, or any timestamp/value is not a finite number.
 *   - INSUFFICIENT_HISTORY when `history_points` (= number of observations received)
 *     < `required_history_points`.
 *   - IRREGULAR (gaps) when more than 20 % of the grid span first..last is missing
 *     (missing_buckets > 0.2 · (history_points + missing_buckets)), or when a single gap skips
 *     more than one season (s buckets): such a series is too sparse to fill credibly.
 *   - Gap filling for the fit: a skipped bucket at grid index i takes the value one season
 *     earlier (seasonal-naive, i - s; that point is observed or already filled, because no gap
 *     exceeds s). When i < s, or s = 1, it is linearly interpolated between the observations on
 *     either side of the gap. Filled points drive the model state but are excluded from every
 *     score (seasonal strength, residual spread, confidence, SSE of the parameter search).
 *
 * Seasonality test (NONSEASONAL)
 *   - On the observed points: remove a least-squares linear trend (D), take per-phase means of D
 *     as the seasonal profile S, remainder R = D - S. Seasonal strength is the degrees-of-freedom
 *     adjusted share of variance the season explains:
 *         strength = clamp01(1 - (SS(R) / (n - 1 - P)) / (SS(D) / (n - 2)))
 *     with n observed points and P populated phases (the adjustment keeps pure noise near 0 even
 *     with only two seasons of history). A series that is flat after detrending (constant,
 *     linear ramp) has strength 0.
 *   - NONSEASONAL when strength < max(0.3, noise ceiling). 0.3 is
 *     {@link NONSEASONAL_STRENGTH_THRESHOLD}. The noise ceiling is the strength that pure Gaussian
 *     noise would exceed only ~1 % of the time: under noise the unadjusted share R² follows
 *     Beta((P - 1) / 2, (n - 1 - P) / 2); ceiling = adjusted(mean + 2.33·sd). It only matters
 *     for short histories (≈ 0.47 at the 48-point minimum for 1h, ≈ 0.10 for 7 days of 1h), where
 *     each phase is estimated from two or three points and noise can look seasonal.
 *
 * Model
 *   - Additive damped-trend Holt-Winters (level, trend, additive daily season; φ = 0.98 so long
 *     horizons do not extrapolate a trend without bound), fitted on a centred and scaled copy of
 *     the series (z = (y - midrange) / half-range) so huge magnitudes cannot overflow.
 *   - Initial state from the first two seasons (means, per-season trend, detrended and centred
 *     seasonal offsets).
 *   - α, β, γ by grid search (α ∈ {.02,.05,.1,.2,.35,.5,.7,.9}, β ∈ {0,.01,.05,.15},
 *     γ ∈ {0,.05,.1,.2,.35} with γ ≤ 1 - α), minimising the one-step-ahead SSE over observed points
 *     after the first season; ties keep the earliest combination.
 *
 * Band (`band_semantics` = {@link BAND_SEMANTICS})
 *   - Seasonal deviation: observation minus the model's one-step-ahead seasonal expectation
 *     (observed points after the first season). σ = root-mean-square of those deviations.
 *   - lower/upper = expected ∓ k·σ, a constant-width band over the horizon.
 *   - sensitivity 1..10: k = 0.5 · sensitivity (0.5σ .. 5σ; larger sensitivity = wider band).
 *   - sensitivity 0 (automatic): k = (95th percentile, nearest rank, of |deviation|) / σ, clamped to
 *     [0.5, 5], so ~95 % of fitted points fall inside the band (≈ 1.96 for Gaussian deviations).
 *   - When all history values are non-negative, expected and both bounds are floored at zero.
 *
 * Confidence ("a deterministic seasonal-fit score, not a probability"), in [0, 1]:
 *     confidence = strength · max(0, 1 - SSE₁ / SST) · observed_fraction
 *   where SSE₁/SST compares one-step-ahead errors with the variance of the same observed points
 *   and observed_fraction = history_points / grid span. It is 0 for IRREGULAR and
 *   INSUFFICIENT_HISTORY, and (being ≤ strength) below the strength threshold for NONSEASONAL.
 *
 * `forecast[]` is populated only in READY: `horizon` points at last_ts + h·interval, h = 1..horizon.
 * Every number in the output is finite. Invalid arguments (interval not a positive integer,
 * horizon not an integer in 1..1000, sensitivity not 0 or within 1..10) throw a RangeError: the
 * HTTP layer validates them first, so that is a programming error.
 *
 * Performance: one pass per parameter combination (148), so seven days of 1-minute data
 * (10,080 points) fits in a few milliseconds.
 */

export type ForecastStatus =
  | 'FORECAST_FIT_STATUS_READY'
  | 'FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY'
  | 'FORECAST_FIT_STATUS_IRREGULAR_HISTORY'
  | 'FORECAST_FIT_STATUS_NONSEASONAL';

/** Names the band model: expected ± k·(spread of additive seasonal deviations). */
export const BAND_SEMANTICS = 'additive_seasonal_deviation_band';

export interface Observation {
  /** ms since epoch, aligned to the interval grid by the caller (bucket start). */
  ts: number;
  value: number;
}

export interface ForecastInput {
  /** In the order the store returned them (duplicates / out-of-order make history irregular). */
  history: Observation[];
  /** Grid step in ms (1m .. 1d). */
  intervalMs: number;
  /** 1..1000 points to forecast after the last history timestamp. */
  horizon: number;
  /** 0 = automatic band width, 1..10 otherwise. */
  sensitivity: number;
}

export interface ForecastPoint {
  /** ms since epoch */
  timestamp: number;
  expected: number;
  lower: number;
  upper: number;
}

export interface ForecastOutput {
  history_points: number;
  required_history_points: number;
  missing_buckets: number;
  status: ForecastStatus;
  status_reason: string;
  confidence: number;
  band_semantics: string;
  forecast: ForecastPoint[];
}

export const DAY_MS = 86_400_000;
export const DEFAULT_HORIZON = 24;
export const MAX_HORIZON = 1000;
export const MIN_SENSITIVITY = 1;
export const MAX_SENSITIVITY = 10;
/** Seasonal strength below this is NONSEASONAL. */
export const NONSEASONAL_STRENGTH_THRESHOLD = 0.3;
/** More than this share of the grid span missing is IRREGULAR. */
export const MAX_MISSING_FRACTION = 0.2;
/** Target share of fitted points inside the automatic band. */
export const AUTO_BAND_COVERAGE = 0.95;
export const MIN_BAND_K = 0.5;
export const MAX_BAND_K = 5;
/** Trend damping of the Holt-Winters model. */
export const DAMPING_PHI = 0.98;

const ALPHAS = [0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9];
const BETAS = [0, 0.01, 0.05, 0.15];
const GAMMAS = [0, 0.05, 0.1, 0.2, 0.35];

function assertInterval(intervalMs: number): void {
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0) {
    throw new RangeError(`intervalMs must be a positive integer number of milliseconds, got ${intervalMs}`);
  }
}

/** Grid points per daily season: round(1 day / interval), at least 1 (1 for intervals of a day or longer). */
export function seasonLength(intervalMs: number): number {
  assertInterval(intervalMs);
  if (intervalMs >= DAY_MS) return 1;
  return Math.max(1, Math.round(DAY_MS / intervalMs));
}

/** The two-daily-season minimum for the interval: 2 · seasonLength(intervalMs). */
export function requiredHistoryPoints(intervalMs: number): number {
  return 2 * seasonLength(intervalMs);
}

/** Band multiplier for an explicit sensitivity 1..10: k = 0.5 · sensitivity. */
export function sensitivityToK(sensitivity: number): number {
  if (!Number.isFinite(sensitivity) || sensitivity < MIN_SENSITIVITY || sensitivity > MAX_SENSITIVITY) {
    throw new RangeError(`sensitivity must be within ${MIN_SENSITIVITY}..${MAX_SENSITIVITY}, got ${sensitivity}`);
  }
  return 0.5 * sensitivity;
}

function assertInput(input: ForecastInput): void {
  assertInterval(input.intervalMs);
  if (!Array.isArray(input.history)) throw new RangeError('history must be an array');
  const { horizon, sensitivity } = input;
  if (!Number.isInteger(horizon) || horizon < 1 || horizon > MAX_HORIZON) {
    throw new RangeError(`horizon must be an integer within 1..${MAX_HORIZON}, got ${horizon}`);
  }
  if (!(sensitivity === 0 || (Number.isFinite(sensitivity) && sensitivity >= MIN_SENSITIVITY && sensitivity <= MAX_SENSITIVITY))) {
    throw new RangeError(`sensitivity must be 0 (automatic) or within ${MIN_SENSITIVITY}..${MAX_SENSITIVITY}, got ${sensitivity}`);
  }
}

// ---------------------------------------------------------------------------------------------
// History scan
// ---------------------------------------------------------------------------------------------

interface HistoryScan {
  duplicates: number;
  outOfOrder: number;
  offGrid: number;
  nonFinite: number;
  /** Grid timestamps skipped between consecutive sorted distinct finite timestamps. */
  missing: number;
  /** Largest number of grid timestamps skipped by one gap. */
  longestGap: number;
  allNonNegative: boolean;
}

function scanHistory(history: Observation[], intervalMs: number): HistoryScan {
  let duplicates = 0;
  let outOfOrder = 0;
  let offGrid = 0;
  let nonFinite = 0;
  let allNonNegative = true;
  const seen = new Set<number>();
  const finiteTs: number[] = [];
  let prev = Number.NaN;
  for (let i = 0; i < history.length; i++) {
    const { ts, value } = history[i];
    if (!Number.isFinite(ts) || !Number.isFinite(value)) nonFinite++;
    if (!(value >= 0)) allNonNegative = false;
    if (Number.isFinite(ts)) {
      if (seen.has(ts)) duplicates++;
      else {
        seen.add(ts);
        finiteTs.push(ts);
      }
      if (ts % intervalMs !== 0) offGrid++;
      if (i > 0 && Number.isFinite(prev) && ts < prev) outOfOrder++;
      prev = ts;
    }
  }
  finiteTs.sort((a, b) => a - b);
  let missing = 0;
  let longestGap = 0;
  for (let i = 1; i < finiteTs.length; i++) {
    // Grid multiples k·interval with t0 < k·interval < t1.
    const skipped = Math.max(0, Math.ceil(finiteTs[i] / intervalMs) - 1 - Math.floor(finiteTs[i - 1] / intervalMs));
    missing += skipped;
    if (skipped > longestGap) longestGap = skipped;
  }
  return { duplicates, outOfOrder, offGrid, nonFinite, missing, longestGap, allNonNegative };
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function shapeProblems(scan: HistoryScan): string[] {
  const problems: string[] = [];
  if (scan.duplicates > 0) problems.push(plural(scan.duplicates, 'duplicate timestamp'));
  if (scan.outOfOrder > 0) problems.push(plural(scan.outOfOrder, 'out-of-order observation'));
  if (scan.offGrid > 0) problems.push(`${plural(scan.offGrid, 'timestamp')} off the interval grid`);
  if (scan.nonFinite > 0) problems.push(`${plural(scan.nonFinite, 'observation')} with a non-finite timestamp or value`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Grid construction and gap filling
// ---------------------------------------------------------------------------------------------

/** Values on the grid first..last (length span) plus a mask of observed points; gaps filled. */
function buildGrid(history: Observation[], intervalMs: number, span: number, s: number): { y: Float64Array; observed: Uint8Array } {
  const y = new Float64Array(span);
  const observed = new Uint8Array(span);
  const t0 = history[0].ts;
  for (const { ts, value } of history) {
    const i = Math.round((ts - t0) / intervalMs);
    y[i] = value;
    observed[i] = 1;
  }
  let i = 0;
  while (i < span) {
    if (observed[i]) {
      i++;
      continue;
    }
    // Gap [i, j): observed[i - 1] and observed[j] are set (first and last grid points are observed).
    let j = i;
    while (!observed[j]) j++;
    const left = y[i - 1];
    const right = y[j];
    const width = j - (i - 1);
    for (let k = i; k < j; k++) {
      if (s >= 2 && k >= s) y[k] = y[k - s];
      else y[k] = left + ((right - left) * (k - (i - 1))) / width;
    }
    i = j;
  }
  return { y, observed };
}

// ---------------------------------------------------------------------------------------------
// Seasonal strength
// ---------------------------------------------------------------------------------------------

export interface SeasonalStrength {
  /** Degrees-of-freedom adjusted share of detrended variance explained by the daily profile, 0..1. */
  strength: number;
  /** Strength that pure Gaussian noise exceeds only ~1 % of the time for this n and phase count. */
  noiseCeiling: number;
}

const NONE: SeasonalStrength = { strength: 0, noiseCeiling: 0 };

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

interface HwFit {
  alpha: number;
  beta: number;
  gamma: number;
  level: number;
  trend: number;
  season: Float64Array;
  residuals: number[];
}

function fitHoltWinters(z: Float64Array, observed: Uint8Array, s: number): HwFit {
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
// Public entry point
// ---------------------------------------------------------------------------------------------

function finite(x: number): number {
  if (Number.isNaN(x)) return 0;
  if (x === Number.POSITIVE_INFINITY) return Number.MAX_VALUE;
  if (x === Number.NEGATIVE_INFINITY) return -Number.MAX_VALUE;
  return x;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** Fits the daily additive seasonal model to the history and forecasts `horizon` grid points. */
export function fitForecast(input: ForecastInput): ForecastOutput {
  assertInput(input);
  const { history, intervalMs, horizon, sensitivity } = input;
  const s = seasonLength(intervalMs);
  const required = 2 * s;
  const historyPoints = history.length;
  const scan = scanHistory(history, intervalMs);

  const notReady = (status: ForecastStatus, reason: string, confidence = 0): ForecastOutput => ({
    history_points: historyPoints,
    required_history_points: required,
    missing_buckets: scan.missing,
    status,
    status_reason: reason,
    confidence: clamp01(confidence),
    band_semantics: BAND_SEMANTICS,
    forecast: [],
  });

  const problems = shapeProblems(scan);
  if (problems.length > 0) {
    return notReady('FORECAST_FIT_STATUS_IRREGULAR_HISTORY', `History is irregular: ${problems.join(', ')}.`);
  }
  if (historyPoints < required) {
    return notReady(
      'FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY',
      `Need at least ${required} history points (two daily seasons at this interval); got ${historyPoints}.`,
    );
  }
  const span = historyPoints + scan.missing;
  if (scan.missing > MAX_MISSING_FRACTION * span) {
    const pct = ((100 * scan.missing) / span).toFixed(1);
    return notReady(
      'FORECAST_FIT_STATUS_IRREGULAR_HISTORY',
      `History is too sparse: ${plural(scan.missing, 'missing bucket')} (${pct}% of the range; at most ${100 * MAX_MISSING_FRACTION}% may be missing).`,
    );
  }
  if (scan.longestGap > s) {
    return notReady(
      'FORECAST_FIT_STATUS_IRREGULAR_HISTORY',
      `History has a gap of ${scan.longestGap} buckets, longer than one daily season (${s} buckets).`,
    );
  }
  if (s < 2) {
    return notReady(
      'FORECAST_FIT_STATUS_NONSEASONAL',
      'An interval of one day or longer cannot express a daily season, so there is no seasonal component to forecast.',
    );
  }

  const { y, observed } = buildGrid(history, intervalMs, span, s);

  // Centre and scale by midrange / half-range (overflow-safe), so z lies in [-1, 1].
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const { value } of history) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const centre = min / 2 + max / 2;
  const scale = max / 2 - min / 2;
  if (!(scale > 1e-12 * Math.max(Math.abs(min), Math.abs(max))) || !(scale > 0)) {
    return notReady('FORECAST_FIT_STATUS_NONSEASONAL', 'History is constant, so it has no seasonal component.');
  }
  const z = new Float64Array(span);
  for (let i = 0; i < span; i++) z[i] = (y[i] - centre) / scale;

  const { strength, noiseCeiling } = seasonalStrengthOf(z, observed, s);
  const strengthThreshold = Math.max(NONSEASONAL_STRENGTH_THRESHOLD, noiseCeiling);
  const fit = fitHoltWinters(z, observed, s);

  // Residual statistics over observed points after the first season.
  const residuals = fit.residuals;
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
  const confidence = clamp01(strength * fitScore * (historyPoints / span));

  if (strength < strengthThreshold) {
    return notReady(
      'FORECAST_FIT_STATUS_NONSEASONAL',
      `The daily seasonal component explains too little variance (seasonal strength ${strength.toFixed(2)} < ${strengthThreshold.toFixed(2)}).`,
      confidence,
    );
  }

  const rms = m > 0 ? Math.sqrt(sse / m) : 0;
  let k: number;
  if (sensitivity === 0) {
    if (rms > 0) {
      const abs = residuals.map(Math.abs).sort((a, b) => a - b);
      const q = abs[Math.max(0, Math.ceil(AUTO_BAND_COVERAGE * m) - 1)];
      k = Math.min(MAX_BAND_K, Math.max(MIN_BAND_K, q / rms));
    } else {
      k = MIN_BAND_K;
    }
  } else {
    k = sensitivityToK(sensitivity);
  }
  const halfWidthZ = k * rms;
  const floorAtZero = scan.allNonNegative;
  const lastTs = history[history.length - 1].ts;

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

  return {
    history_points: historyPoints,
    required_history_points: required,
    missing_buckets: scan.missing,
    status: 'FORECAST_FIT_STATUS_READY',
    status_reason: `Fitted an additive Holt-Winters model with a daily season of ${s} points (seasonal strength ${strength.toFixed(2)}).`,
    confidence,
    band_semantics: BAND_SEMANTICS,
    forecast,
  };
}
