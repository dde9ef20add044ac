/**
 * Metric forecast model: a pure, dependency-free additive seasonal forecaster with a daily
 * season (spec: metrics "Forecast"). The HTTP layer validates the request body
 * (`metric_name`, `interval`, `horizon`, `sensitivity`, `environment`, `project_id`,
 * `time_range`), reads the history series and calls {@link fitForecast}; this module computes
 * `history_points`, `required_history_points`, `missing_buckets`, `status`, `status_reason`,
 * `confidence`, `band_semantics` and `forecast[]`.
 *
 * This file holds the public types, constants and the {@link fitForecast} orchestration; the steps
 * live in forecast-grid.ts (scan, gaps, filling, scaling), forecast-seasonality.ts (seasonal
 * strength) and forecast-holt-winters.ts (fit, parameter search, band), re-exported here by name.
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

import { buildGrid, centreAndScale, plural, scanHistory, shapeProblems } from './forecast-grid.js';
import { autoBandK, fitHoltWinters, fitQuality, projectForecast } from './forecast-holt-winters.js';
import { clamp01, seasonalStrengthOf } from './forecast-seasonality.js';

// Parts of the public API that live next to their implementation.
export { AUTO_BAND_COVERAGE, DAMPING_PHI, MAX_BAND_K, MIN_BAND_K } from './forecast-holt-winters.js';
export { seasonalStrengthOf, type SeasonalStrength } from './forecast-seasonality.js';

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
// Public entry point
// ---------------------------------------------------------------------------------------------

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
  const scaled = centreAndScale(history, y, span);
  if (scaled === null) {
    return notReady('FORECAST_FIT_STATUS_NONSEASONAL', 'History is constant, so it has no seasonal component.');
  }
  const { centre, scale, z } = scaled;

  const { strength, noiseCeiling } = seasonalStrengthOf(z, observed, s);
  const strengthThreshold = Math.max(NONSEASONAL_STRENGTH_THRESHOLD, noiseCeiling);
  const fit = fitHoltWinters(z, observed, s);
  const { fitScore, rms } = fitQuality(fit.residuals, z, observed, s);
  const confidence = clamp01(strength * fitScore * (historyPoints / span));

  if (strength < strengthThreshold) {
    return notReady(
      'FORECAST_FIT_STATUS_NONSEASONAL',
      `The daily seasonal component explains too little variance (seasonal strength ${strength.toFixed(2)} < ${strengthThreshold.toFixed(2)}).`,
      confidence,
    );
  }

  const k = sensitivity === 0 ? autoBandK(fit.residuals, rms) : sensitivityToK(sensitivity);
  const forecast = projectForecast(fit, {
    span,
    s,
    centre,
    scale,
    halfWidthZ: k * rms,
    floorAtZero: scan.allNonNegative,
    lastTs: history[history.length - 1].ts,
    intervalMs,
    horizon,
  });

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
