import { describe, it, expect } from 'vitest';
import {
  BAND_SEMANTICS,
  fitForecast,
  requiredHistoryPoints,
  seasonLength,
  sensitivityToK,
  NONSEASONAL_STRENGTH_THRESHOLD,
  type ForecastInput,
  type ForecastOutput,
  type Observation,
} from './forecast-model.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** A fixed, grid-aligned start (2024-01-01T00:00:00Z) so every test is reproducible. */
const START = Date.UTC(2024, 0, 1);

/** Tiny seeded PRNG (mulberry32); tests never use Math.random. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal via Box-Muller on the seeded PRNG. */
function gaussian(rand: () => number): () => number {
  return () => {
    const u = Math.max(rand(), 1e-12);
    const v = rand();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}

interface SeriesOptions {
  intervalMs?: number;
  days?: number;
  points?: number;
  base?: number;
  amplitude?: number;
  noise?: number;
  seed?: number;
  start?: number;
}

/** base + amplitude·sin(2π·time-of-day) + N(0, noise²) on the grid. */
function dailySine(opts: SeriesOptions = {}): Observation[] {
  const intervalMs = opts.intervalMs ?? HOUR;
  const points = opts.points ?? Math.round(((opts.days ?? 7) * DAY) / intervalMs);
  const base = opts.base ?? 100;
  const amplitude = opts.amplitude ?? 10;
  const noise = opts.noise ?? 0;
  const start = opts.start ?? START;
  const normal = gaussian(mulberry32(opts.seed ?? 1));
  const out: Observation[] = [];
  for (let i = 0; i < points; i++) {
    const ts = start + i * intervalMs;
    const phase = (2 * Math.PI * (ts % DAY)) / DAY;
    out.push({ ts, value: base + amplitude * Math.sin(phase) + noise * normal() });
  }
  return out;
}

function input(history: Observation[], overrides: Partial<ForecastInput> = {}): ForecastInput {
  return { history, intervalMs: HOUR, horizon: 24, sensitivity: 0, ...overrides };
}

function expectAllFinite(out: ForecastOutput): void {
  for (const n of [out.history_points, out.required_history_points, out.missing_buckets, out.confidence]) {
    expect(Number.isFinite(n)).toBe(true);
  }
  for (const p of out.forecast) {
    expect(Number.isFinite(p.timestamp)).toBe(true);
    expect(Number.isFinite(p.expected)).toBe(true);
    expect(Number.isFinite(p.lower)).toBe(true);
    expect(Number.isFinite(p.upper)).toBe(true);
  }
}

function expectEmptyForecastWithExplanation(out: ForecastOutput): void {
  expect(out.forecast).toEqual([]);
  expect(out.status_reason.length).toBeGreaterThan(0);
  expect(out.band_semantics).toBe(BAND_SEMANTICS);
  expect(out.confidence).toBeGreaterThanOrEqual(0);
  expect(out.confidence).toBeLessThanOrEqual(1);
}

function bandWidth(out: ForecastOutput): number {
  return out.forecast[0].upper - out.forecast[0].lower;
}

describe('forecast model: READY on a daily seasonal series', () => {
  it('a noisy daily sine at 1h over 7 days is READY with `horizon` grid points continuing after the last timestamp', () => {
    const history = dailySine({ noise: 1, seed: 7 });
    const out = fitForecast(input(history, { horizon: 24 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(out.history_points).toBe(168);
    expect(out.required_history_points).toBe(48);
    expect(out.missing_buckets).toBe(0);
    expect(out.band_semantics).toBe(BAND_SEMANTICS);
    expect(out.status_reason).toMatch(/seasonal/i);
    expect(out.forecast).toHaveLength(24);
    const last = history[history.length - 1].ts;
    out.forecast.forEach((p, i) => {
      expect(p.timestamp).toBe(last + (i + 1) * HOUR);
      expect(p.timestamp % HOUR).toBe(0);
      expect(p.lower).toBeLessThanOrEqual(p.expected);
      expect(p.expected).toBeLessThanOrEqual(p.upper);
      expect(p.upper).toBeGreaterThan(p.lower);
    });
    expectAllFinite(out);
  });

  it('the forecast follows the daily shape of the history', () => {
    const history = dailySine({ noise: 1, seed: 11 });
    const out = fitForecast(input(history, { horizon: 48 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    for (const p of out.forecast) {
      const truth = 100 + 10 * Math.sin((2 * Math.PI * (p.timestamp % DAY)) / DAY);
      expect(Math.abs(p.expected - truth)).toBeLessThan(2.5);
    }
  });

  it('band_semantics names the additive seasonal-deviation band model', () => {
    expect(BAND_SEMANTICS).toBe('additive_seasonal_deviation_band');
    const out = fitForecast(input(dailySine({ noise: 1 })));
    expect(out.band_semantics).toBe(BAND_SEMANTICS);
  });

  it('automatic band (sensitivity 0) contains roughly 95% of fresh observations from the same process', () => {
    const all = dailySine({ noise: 2, seed: 99, days: 14 });
    const history = all.slice(0, 168);
    const future = all.slice(168, 168 + 168);
    const out = fitForecast(input(history, { horizon: 168, sensitivity: 0 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    let inside = 0;
    future.forEach((obs, i) => {
      const p = out.forecast[i];
      expect(p.timestamp).toBe(obs.ts);
      if (obs.value >= p.lower && obs.value <= p.upper) inside++;
    });
    expect(inside / future.length).toBeGreaterThan(0.85);
  });
});

describe('forecast model: required_history_points', () => {
  it('"required_history_points is the two-daily-season minimum for the chosen interval"', () => {
    expect(requiredHistoryPoints(HOUR)).toBe(48);
    expect(requiredHistoryPoints(5 * MINUTE)).toBe(576);
    expect(requiredHistoryPoints(MINUTE)).toBe(2880);
    expect(requiredHistoryPoints(15 * MINUTE)).toBe(192);
    expect(seasonLength(HOUR)).toBe(24);
  });

  it('intervals of a day or longer have a degenerate season of 1 point, so required = 2', () => {
    expect(seasonLength(DAY)).toBe(1);
    expect(requiredHistoryPoints(DAY)).toBe(2);
    expect(requiredHistoryPoints(7 * DAY)).toBe(2);
  });

  it('a daily-interval series can only be NONSEASONAL (no within-day shape), with an empty forecast', () => {
    const rand = mulberry32(5);
    const history = Array.from({ length: 60 }, (_, i) => ({ ts: START + i * DAY, value: 50 + 10 * Math.sin(i) + rand() }));
    const out = fitForecast(input(history, { intervalMs: DAY }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_NONSEASONAL');
    expect(out.required_history_points).toBe(2);
    expectEmptyForecastWithExplanation(out);
  });

  it('rejects an invalid interval', () => {
    expect(() => requiredHistoryPoints(0)).toThrow(RangeError);
    expect(() => requiredHistoryPoints(-HOUR)).toThrow(RangeError);
    expect(() => requiredHistoryPoints(1.5)).toThrow(RangeError);
  });
});

describe('forecast model: "forecast[] is populated only in READY; other statuses return an empty forecast plus the explanatory fields"', () => {
  it('INSUFFICIENT_HISTORY below the two-daily-season minimum: empty forecast, required_history_points = 48 for 1h', () => {
    const history = dailySine({ points: 47, noise: 1 });
    const out = fitForecast(input(history));
    expect(out.status).toBe('FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY');
    expect(out.history_points).toBe(47);
    expect(out.required_history_points).toBe(48);
    expect(out.missing_buckets).toBe(0);
    expect(out.confidence).toBe(0);
    expect(out.status_reason).toMatch(/48/);
    expectEmptyForecastWithExplanation(out);
  });

  it('exactly the two-daily-season minimum (48 points at 1h) is enough to be READY', () => {
    const out = fitForecast(input(dailySine({ points: 48, noise: 0.5, seed: 3 })));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(out.forecast).toHaveLength(24);
  });

  it('empty history is INSUFFICIENT_HISTORY', () => {
    const out = fitForecast(input([]));
    expect(out.status).toBe('FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY');
    expect(out.history_points).toBe(0);
    expect(out.missing_buckets).toBe(0);
    expectEmptyForecastWithExplanation(out);
  });

  it('INSUFFICIENT_HISTORY for 5m data needs 576 points', () => {
    const out = fitForecast(input(dailySine({ intervalMs: 5 * MINUTE, points: 575, noise: 1 }), { intervalMs: 5 * MINUTE }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY');
    expect(out.required_history_points).toBe(576);
    expectEmptyForecastWithExplanation(out);
  });
});

describe('forecast model: "missing_buckets counts expected grid timestamps skipped by forward gaps; duplicate and out-of-order observations make history irregular without raising that count"', () => {
  it('a forward gap of 3 buckets gives missing_buckets 3 and the series is still READY', () => {
    const full = dailySine({ noise: 1, seed: 21 });
    const history = [...full.slice(0, 100), ...full.slice(103)];
    const out = fitForecast(input(history));
    expect(out.missing_buckets).toBe(3);
    expect(out.history_points).toBe(165);
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(out.forecast[0].timestamp).toBe(full[full.length - 1].ts + HOUR);
    expectAllFinite(out);
  });

  it('several forward gaps add up', () => {
    const full = dailySine({ noise: 1, seed: 22 });
    const drop = new Set([10, 50, 51, 120, 121, 122, 123]);
    const history = full.filter((_, i) => !drop.has(i));
    const out = fitForecast(input(history));
    expect(out.missing_buckets).toBe(7);
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
  });

  it('gaps are also counted on histories that are not READY', () => {
    const history = [{ ts: START, value: 1 }, { ts: START + 4 * HOUR, value: 2 }, { ts: START + 6 * HOUR, value: 3 }];
    const out = fitForecast(input(history));
    expect(out.status).toBe('FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY');
    expect(out.missing_buckets).toBe(4);
  });

  it('a duplicate timestamp makes history IRREGULAR and does not change missing_buckets', () => {
    const full = dailySine({ noise: 1, seed: 23 });
    const gapped = [...full.slice(0, 60), ...full.slice(62)]; // forward gap of 2
    const withDuplicate = [...gapped.slice(0, 30), { ...gapped[29], value: 5 }, ...gapped.slice(30)];
    const clean = fitForecast(input(gapped));
    const out = fitForecast(input(withDuplicate));
    expect(clean.missing_buckets).toBe(2);
    expect(out.status).toBe('FORECAST_FIT_STATUS_IRREGULAR_HISTORY');
    expect(out.missing_buckets).toBe(2);
    expect(out.history_points).toBe(withDuplicate.length);
    expect(out.status_reason).toMatch(/duplicate/);
    expectEmptyForecastWithExplanation(out);
    expect(out.confidence).toBe(0);
  });

  it('an out-of-order observation makes history IRREGULAR and does not change missing_buckets', () => {
    const full = dailySine({ noise: 1, seed: 24 });
    const swapped = full.slice();
    [swapped[40], swapped[41]] = [swapped[41], swapped[40]];
    const out = fitForecast(input(swapped));
    expect(out.status).toBe('FORECAST_FIT_STATUS_IRREGULAR_HISTORY');
    expect(out.missing_buckets).toBe(0);
    expect(out.status_reason).toMatch(/out-of-order/);
    expectEmptyForecastWithExplanation(out);
  });

  it('a fully reversed history is IRREGULAR with missing_buckets 0', () => {
    const out = fitForecast(input(dailySine({ noise: 1 }).reverse()));
    expect(out.status).toBe('FORECAST_FIT_STATUS_IRREGULAR_HISTORY');
    expect(out.missing_buckets).toBe(0);
  });

  it('a timestamp off the interval grid makes history IRREGULAR', () => {
    const history = dailySine({ noise: 1 });
    history[50] = { ts: history[50].ts + 1, value: history[50].value };
    const out = fitForecast(input(history));
    expect(out.status).toBe('FORECAST_FIT_STATUS_IRREGULAR_HISTORY');
    expect(out.status_reason).toMatch(/grid/);
    // The grid timestamp history[50] should have had is skipped: one missing bucket.
    expect(out.missing_buckets).toBe(1);
    expectEmptyForecastWithExplanation(out);
  });

  it('a non-finite value makes history IRREGULAR (and no NaN leaks into the output)', () => {
    const history = dailySine({ noise: 1 });
    history[10] = { ts: history[10].ts, value: Number.NaN };
    const out = fitForecast(input(history));
    expect(out.status).toBe('FORECAST_FIT_STATUS_IRREGULAR_HISTORY');
    expectAllFinite(out);
  });

  it('a gap longer than one daily season is IRREGULAR', () => {
    const full = dailySine({ noise: 1, seed: 25 });
    const history = [...full.slice(0, 60), ...full.slice(60 + 25)]; // 25 skipped hourly buckets > 24
    const out = fitForecast(input(history));
    expect(out.missing_buckets).toBe(25);
    expect(out.status).toBe('FORECAST_FIT_STATUS_IRREGULAR_HISTORY');
    expect(out.status_reason).toMatch(/gap/);
    expectEmptyForecastWithExplanation(out);
  });

  it('a gap of exactly one season is filled and still READY', () => {
    const full = dailySine({ noise: 1, seed: 26 });
    const history = [...full.slice(0, 60), ...full.slice(60 + 24)];
    const out = fitForecast(input(history));
    expect(out.missing_buckets).toBe(24);
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
  });

  it('more than 20% of the range missing is IRREGULAR', () => {
    const full = dailySine({ noise: 1, seed: 27 });
    const history = full.filter((_, i) => i % 4 !== 1); // 25% missing, all gaps of 1
    const out = fitForecast(input(history));
    expect(out.missing_buckets).toBe(42);
    expect(out.status).toBe('FORECAST_FIT_STATUS_IRREGULAR_HISTORY');
    expect(out.status_reason).toMatch(/sparse/);
  });
});

describe('forecast model: NONSEASONAL', () => {
  it('a constant series is NONSEASONAL with an empty forecast', () => {
    const history = Array.from({ length: 168 }, (_, i) => ({ ts: START + i * HOUR, value: 42 }));
    const out = fitForecast(input(history));
    expect(out.status).toBe('FORECAST_FIT_STATUS_NONSEASONAL');
    expect(out.confidence).toBe(0);
    expectEmptyForecastWithExplanation(out);
  });

  it('a constant series of awkward floats (0.1) is NONSEASONAL', () => {
    const history = Array.from({ length: 168 }, (_, i) => ({ ts: START + i * HOUR, value: 0.1 }));
    expect(fitForecast(input(history)).status).toBe('FORECAST_FIT_STATUS_NONSEASONAL');
  });

  it('pure random noise is NONSEASONAL with an empty forecast', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const normal = gaussian(mulberry32(seed));
      const history = Array.from({ length: 168 }, (_, i) => ({ ts: START + i * HOUR, value: 100 + 5 * normal() }));
      const out = fitForecast(input(history));
      expect(out.status).toBe('FORECAST_FIT_STATUS_NONSEASONAL');
      expect(out.confidence).toBeLessThan(NONSEASONAL_STRENGTH_THRESHOLD);
      expectEmptyForecastWithExplanation(out);
    }
  });

  it('pure noise with only the minimum two seasons is NONSEASONAL (noise ceiling on the strength threshold)', () => {
    for (let seed = 70; seed < 90; seed++) {
      const normal = gaussian(mulberry32(seed));
      const history = Array.from({ length: 48 }, (_, i) => ({ ts: START + i * HOUR, value: 5 * normal() }));
      const out = fitForecast(input(history));
      expect(out.status).toBe('FORECAST_FIT_STATUS_NONSEASONAL');
      expect(out.forecast).toEqual([]);
    }
  });

  it('a linear ramp without a daily shape is NONSEASONAL', () => {
    const history = Array.from({ length: 168 }, (_, i) => ({ ts: START + i * HOUR, value: 3 * i + 7 }));
    expect(fitForecast(input(history)).status).toBe('FORECAST_FIT_STATUS_NONSEASONAL');
  });

  it('a daily sine on top of a trend is READY and keeps following the trend', () => {
    const history = dailySine({ noise: 0.5, seed: 8 }).map((o, i) => ({ ts: o.ts, value: o.value + 0.2 * i }));
    const out = fitForecast(input(history));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    // Trend at the end of history is ~ 100 + 0.2·167; the next day's mean should be above the history mean.
    const mean = out.forecast.reduce((a, p) => a + p.expected, 0) / out.forecast.length;
    expect(mean).toBeGreaterThan(125);
  });
});

describe('forecast model: "When all history values are non-negative, expected and both bounds are floored at zero."', () => {
  it('floors expected and both bounds at zero for non-negative data whose band would go below zero', () => {
    const rand = mulberry32(31);
    const history = Array.from({ length: 168 }, (_, i) => {
      const ts = START + i * HOUR;
      const v = 11 + 10 * Math.sin((2 * Math.PI * (ts % DAY)) / DAY) + (rand() - 0.5) * 1.8;
      return { ts, value: v };
    });
    expect(history.every((o) => o.value >= 0)).toBe(true);
    const out = fitForecast(input(history, { sensitivity: 10 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(out.forecast.some((p) => p.lower === 0)).toBe(true);
    for (const p of out.forecast) {
      expect(p.lower).toBeGreaterThanOrEqual(0);
      expect(p.expected).toBeGreaterThanOrEqual(0);
      expect(p.upper).toBeGreaterThanOrEqual(0);
      expect(p.lower).toBeLessThanOrEqual(p.expected);
      expect(p.expected).toBeLessThanOrEqual(p.upper);
    }
  });

  it('does not floor when some history value is negative', () => {
    const rand = mulberry32(31);
    const history = Array.from({ length: 168 }, (_, i) => {
      const ts = START + i * HOUR;
      const v = 11 + 10 * Math.sin((2 * Math.PI * (ts % DAY)) / DAY) + (rand() - 0.5) * 1.8;
      return { ts, value: v };
    });
    history[5] = { ts: history[5].ts, value: -0.5 };
    const out = fitForecast(input(history, { sensitivity: 10 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(out.forecast.some((p) => p.lower < 0)).toBe(true);
  });

  it('a series that is mostly zero with a daily burst floors expected at zero', () => {
    const rand = mulberry32(32);
    const history = Array.from({ length: 168 }, (_, i) => {
      const hour = i % 24;
      return { ts: START + i * HOUR, value: hour >= 9 && hour < 17 ? 50 + rand() * 10 : rand() * 0.5 };
    });
    const out = fitForecast(input(history, { horizon: 48 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    for (const p of out.forecast) {
      expect(p.expected).toBeGreaterThanOrEqual(0);
      expect(p.lower).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('forecast model: "confidence is a deterministic seasonal-fit score, not a probability."', () => {
  it('two calls with the same input are deep-equal', () => {
    const history = dailySine({ noise: 2, seed: 41 });
    const a = fitForecast(input(history, { horizon: 100 }));
    const b = fitForecast(input(history.map((o) => ({ ...o })), { horizon: 100 }));
    expect(a).toEqual(b);
    expect(Object.is(a.confidence, b.confidence)).toBe(true);
  });

  it('does not mutate its input', () => {
    const history = dailySine({ noise: 2, seed: 42 });
    const copy = history.map((o) => ({ ...o }));
    fitForecast(input(history));
    expect(history).toEqual(copy);
  });

  it('confidence is in [0, 1] for every status and higher for a clean sine than a noisy one', () => {
    const clean = fitForecast(input(dailySine({ noise: 0.1, seed: 43 })));
    const noisy = fitForecast(input(dailySine({ noise: 5, seed: 43 })));
    expect(clean.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(noisy.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(clean.confidence).toBeGreaterThan(noisy.confidence);
    expect(clean.confidence).toBeGreaterThan(0.9);
    const others = [
      fitForecast(input(dailySine({ points: 10 }))),
      fitForecast(input(dailySine({ noise: 1 }).reverse())),
      fitForecast(input(Array.from({ length: 100 }, (_, i) => ({ ts: START + i * HOUR, value: 1 })))),
    ];
    for (const out of [clean, noisy, ...others]) {
      expect(out.confidence).toBeGreaterThanOrEqual(0);
      expect(out.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('missing buckets lower the confidence', () => {
    const full = dailySine({ noise: 0.5, seed: 44 });
    const gapped = full.filter((_, i) => i % 10 !== 5);
    const a = fitForecast(input(full));
    const b = fitForecast(input(gapped));
    expect(b.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(b.confidence).toBeLessThan(a.confidence);
  });
});

describe('forecast model: band width from sensitivity (0 = automatic, or 1 to 10)', () => {
  it('sensitivity 10 gives a wider band than sensitivity 1 (k = 0.5·sensitivity)', () => {
    const history = dailySine({ noise: 2, seed: 51 });
    const s1 = fitForecast(input(history, { sensitivity: 1 }));
    const s10 = fitForecast(input(history, { sensitivity: 10 }));
    expect(bandWidth(s10)).toBeGreaterThan(bandWidth(s1));
    expect(bandWidth(s10) / bandWidth(s1)).toBeCloseTo(10, 6);
    expect(s10.forecast.map((p) => p.expected)).toEqual(s1.forecast.map((p) => p.expected));
    expect(sensitivityToK(1)).toBe(0.5);
    expect(sensitivityToK(10)).toBe(5);
  });

  it('the automatic band lies between sensitivity 1 and 10 and is near 2σ for Gaussian deviations', () => {
    const history = dailySine({ noise: 2, seed: 52 });
    const s1 = bandWidth(fitForecast(input(history, { sensitivity: 1 })));
    const auto = bandWidth(fitForecast(input(history, { sensitivity: 0 })));
    const s10 = bandWidth(fitForecast(input(history, { sensitivity: 10 })));
    expect(auto).toBeGreaterThan(s1);
    expect(auto).toBeLessThan(s10);
    const kAuto = (auto / s1) * 0.5;
    expect(kAuto).toBeGreaterThan(1.4);
    expect(kAuto).toBeLessThan(2.6);
  });

  it('the band width is constant over the horizon', () => {
    const out = fitForecast(input(dailySine({ base: 1000, noise: 2, seed: 53 }), { horizon: 72, sensitivity: 4 }));
    const w = bandWidth(out);
    for (const p of out.forecast) expect(p.upper - p.lower).toBeCloseTo(w, 9);
  });

  it('rejects invalid sensitivity and horizon (the HTTP layer validates them first)', () => {
    const history = dailySine({ noise: 1 });
    expect(() => fitForecast(input(history, { sensitivity: 0.5 }))).toThrow(RangeError);
    expect(() => fitForecast(input(history, { sensitivity: 11 }))).toThrow(RangeError);
    expect(() => fitForecast(input(history, { sensitivity: Number.NaN }))).toThrow(RangeError);
    expect(() => fitForecast(input(history, { horizon: 0 }))).toThrow(RangeError);
    expect(() => fitForecast(input(history, { horizon: 1001 }))).toThrow(RangeError);
    expect(() => fitForecast(input(history, { horizon: 2.5 }))).toThrow(RangeError);
  });
});

describe('forecast model: horizon (integer, max 1000) and numeric safety', () => {
  it('horizon 1000 works, stays on the grid and every number is finite', () => {
    const history = dailySine({ noise: 1, seed: 61 });
    const out = fitForecast(input(history, { horizon: 1000 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(out.forecast).toHaveLength(1000);
    const last = history[history.length - 1].ts;
    expect(out.forecast[999].timestamp).toBe(last + 1000 * HOUR);
    for (let i = 1; i < out.forecast.length; i++) {
      expect(out.forecast[i].timestamp - out.forecast[i - 1].timestamp).toBe(HOUR);
    }
    expectAllFinite(out);
    // Damped trend: 1000 hours out the forecast stays in the range of the data.
    for (const p of out.forecast) {
      expect(p.expected).toBeGreaterThan(70);
      expect(p.expected).toBeLessThan(130);
    }
  });

  it('horizon 1 returns exactly one point', () => {
    const out = fitForecast(input(dailySine({ noise: 1 }), { horizon: 1 }));
    expect(out.forecast).toHaveLength(1);
  });

  it('huge magnitudes do not overflow to Infinity or NaN', () => {
    const history = dailySine({ noise: 0.01, seed: 62 }).map((o) => ({ ts: o.ts, value: o.value * 1e305 }));
    const out = fitForecast(input(history, { horizon: 1000, sensitivity: 10 }));
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expectAllFinite(out);
  });

  it('huge values of both signs stay finite', () => {
    const history = dailySine({ base: 0, amplitude: 1, noise: 0.01, seed: 63 }).map((o) => ({ ts: o.ts, value: o.value * 1.7e308 }));
    const out = fitForecast(input(history, { horizon: 1000, sensitivity: 10 }));
    expectAllFinite(out);
  });

  it('7 days of 1-minute data (10,080 points) fits quickly (timing logged, not asserted)', () => {
    const history = dailySine({ intervalMs: MINUTE, days: 7, noise: 1, seed: 64 });
    expect(history).toHaveLength(10_080);
    fitForecast(input(history, { intervalMs: MINUTE })); // warm-up (JIT)
    const t0 = performance.now();
    const out = fitForecast(input(history, { intervalMs: MINUTE, horizon: 1000 }));
    const ms = performance.now() - t0;
    console.log(`fitForecast: 10,080 one-minute points, horizon 1000: ${ms.toFixed(1)} ms`);
    expect(out.status).toBe('FORECAST_FIT_STATUS_READY');
    expect(out.required_history_points).toBe(2880);
    expect(out.forecast).toHaveLength(1000);
    expectAllFinite(out);
  });
});
