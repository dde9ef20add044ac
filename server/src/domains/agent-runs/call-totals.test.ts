/**
 * A session's cost from its calls summed by model equals the cost of its calls priced one by one whenever
 * every price is a whole number of nanos per token; otherwise `totalsCost` declines (null) and the calls are
 * priced one by one.
 */
import { describe, expect, it } from 'vitest';
import { addCalls, noCalls, parseTotals, totalsCost, totalsText } from './call-totals.js';
import { PriceBook, pooledGroupCost } from './cost.js';
import type { ModelUsageRow } from './store.js';

type Group = Omit<ModelUsageRow, 'traceId'>;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const MODELS: [string | null, string | null][] = [
  ['openai', 'gpt-4o-mini'],
  ['anthropic', 'claude'],
  [null, 'local'],
  ['openai', null],
  ['', 'gpt-4o-mini'],
];

async function book(prices: Record<string, { inputNanosPerToken: number; outputNanosPerToken: number } | undefined>, calls: Group[]) {
  return PriceBook.load({ pricesOf: async (_p, models) => models.map((m) => prices[`${m.provider ?? ''}/${m.model}`]) }, 'p', calls);
}

describe('call totals (call-totals.ts)', () => {
  it('equal to the calls priced one by one, on random runs of random calls, when prices are whole nanos per token', async () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const runs: Group[][] = Array.from({ length: 1 + Math.floor(r() * 6) }, () =>
        Array.from({ length: Math.floor(r() * 4) }, () => {
          const [provider, model] = MODELS[Math.floor(r() * MODELS.length)];
          const kind = r();
          return {
            provider,
            model,
            inputTokens: kind < 0.1 ? null : Math.floor(r() * 5000),
            outputTokens: kind < 0.2 ? null : Math.floor(r() * 900),
            reportedCostNanos: kind > 0.85 ? Math.floor(r() * 10_000) : null,
            steps: 1 + Math.floor(r() * 3),
          };
        }),
      );
      const whole = () => (r() < 0.15 ? undefined : { inputNanosPerToken: Math.floor(r() * 4000), outputNanosPerToken: Math.floor(r() * 16000) });
      const prices = { 'openai/gpt-4o-mini': whole(), 'anthropic/claude': whole(), '/local': whole() };
      const calls = runs.flat();
      const b = await book(prices, calls);
      const t = noCalls();
      for (const run of runs) addCalls(t, run, 1);
      expect(totalsCost(t, b), `seed ${seed}`).toEqual(pooledGroupCost(calls, b));
      // As stored and read back.
      expect(totalsCost(parseTotals(totalsText(t))!, b)).toEqual(pooledGroupCost(calls, b));
      // A run taken away leaves the totals of the others.
      const kept = noCalls();
      for (const run of runs.slice(1)) addCalls(kept, run, 1);
      addCalls(t, runs[0], -1);
      expect(totalsText(t)).toBe(totalsText(kept));
    }
  });

  it('a price finer than a whole nano per token declines (each call is rounded on its own), unless the cost is unavailable anyway', async () => {
    const calls: Group[] = [
      { provider: 'openai', model: 'gpt-4o-mini', inputTokens: 5, outputTokens: null, reportedCostNanos: null, steps: 3 },
      { provider: 'anthropic', model: 'claude', inputTokens: 10, outputTokens: 1, reportedCostNanos: null, steps: 1 },
    ];
    const t = noCalls();
    addCalls(t, calls, 1);
    const fine = await book({ 'openai/gpt-4o-mini': { inputNanosPerToken: 37.5, outputNanosPerToken: 150 }, 'anthropic/claude': { inputNanosPerToken: 3000, outputNanosPerToken: 15000 } }, calls);
    expect(totalsCost(t, fine)).toBeNull();
    const unpriced = await book({ 'openai/gpt-4o-mini': { inputNanosPerToken: 37.5, outputNanosPerToken: 150 } }, calls);
    expect(totalsCost(t, unpriced)).toEqual({ cost_unavailable_reason: 'run_cost_unavailable' });
    expect(totalsCost(noCalls(), unpriced)).toEqual({ cost_unavailable_reason: 'zero_cost' });
  });
});
