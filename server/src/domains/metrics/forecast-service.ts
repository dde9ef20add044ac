/**
 * Forecast rules around the model (spec 1, "Forecast body", "Forecast response").
 * The model gets one observation per interval bucket (the bucket mean), aligned to the epoch grid; a
 * cumulative counter's samples count as their increases (service.ts, "Counters").
 */
import { invalidRequest } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { ForecastHistoryReader } from './store.js';
import { DAY_MS, DEFAULT_HORIZON, fitForecast } from './forecast-model.js';
import { timeRangeMs } from './request-rules.js';

export const FORECAST_INTERVALS: Record<string, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '10m': 600_000,
  '15m': 900_000,
  '30m': 1_800_000,
  '1h': 3_600_000,
  '6h': 21_600_000,
  '12h': 43_200_000,
  '1d': DAY_MS,
};
export const DEFAULT_INTERVAL = '1h';
/** Default history: the last seven days. */
export const DEFAULT_HISTORY_MS = 7 * DAY_MS;
/** A history window may span at most this many buckets (7 days at 1m is 10,080). */
export const MAX_HISTORY_BUCKETS = 50_000;

export interface ForecastRequest {
  metric_name: string;
  interval?: string;
  horizon?: number;
  sensitivity?: number;
  environment?: string;
  time_range?: { start?: string; end?: string };
}

export class ForecastService {
  constructor(
    private readonly history: ForecastHistoryReader,
    private readonly clock: Clock,
  ) {}

  async forecast(projectId: string, req: ForecastRequest) {
    const interval = req.interval ?? DEFAULT_INTERVAL;
    const intervalMs = FORECAST_INTERVALS[interval];
    const { startMs, endMs } = timeRangeMs(req.time_range, this.clock.now().getTime(), DEFAULT_HISTORY_MS);
    const buckets = Math.floor(endMs / intervalMs) - Math.floor(startMs / intervalMs) + 1;
    if (buckets > MAX_HISTORY_BUCKETS)
      throw invalidRequest(`time_range spans ${buckets} buckets of ${interval}; the limit is ${MAX_HISTORY_BUCKETS}`);
    const horizon = req.horizon ?? DEFAULT_HORIZON;
    const history = await this.history({
      projectId,
      name: req.metric_name,
      environment: req.environment,
      startMs,
      endMs,
      intervalMs,
    });
    const out = fitForecast({ history, intervalMs, horizon, sensitivity: req.sensitivity ?? 0 });
    return {
      metric_name: req.metric_name,
      interval,
      horizon,
      history_points: out.history_points,
      required_history_points: out.required_history_points,
      missing_buckets: out.missing_buckets,
      status: out.status,
      status_reason: out.status_reason,
      confidence: out.confidence,
      band_semantics: out.band_semantics,
      forecast: out.forecast.map((p) => ({ timestamp: new Date(p.timestamp).toISOString(), expected: p.expected, lower: p.lower, upper: p.upper })),
    };
  }
}
