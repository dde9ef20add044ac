/**
 * A session's cost priced from all its runs' model calls at once (`pooledGroupCost`, what the session list
 * does) is the cost `groupCost` gives over its runs' costs (spec 3: "missing or unpriced is not zero"; "a
 * zero is treated as unmeasured"), on random sessions of runs with priced, unpriced, usage-less and
 * reported-cost calls, and runs with no model call.
 */
import { describe, expect, it } from 'vitest';
import { groupCost, pooledGroupCost, PriceBook, runCosts } from './cost.js';
import type { ModelUsageRow } from './store.js';

describe('pooledGroupCost', () => {
  it('equals groupCost over the runs of the session', async () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * n);
    };
    const book = await PriceBook.load(
      { pricesOf: async (_p, refs) => refs.map((r) => (r.model === 'priced' ? { inputNanosPerToken: 0.15, outputNanosPerToken: 0.6 } : undefined)) } as Parameters<typeof PriceBook.load>[0],
      'p',
      [{ provider: null, model: 'priced' }, { provider: null, model: 'unpriced' }],
    );
    const seen = new Set<string>();
    for (let s = 0; s < 500; s++) {
      const usage: ModelUsageRow[] = [];
      const runs = Array.from({ length: rand(5) }, (_, r) => `run-${r}`);
      for (const traceId of runs)
        for (let k = rand(4); k > 0; k--) {
          const kind = rand(10);
          usage.push({
            traceId,
            provider: null,
            model: kind === 0 ? 'unpriced' : kind === 1 ? null : 'priced',
            inputTokens: kind === 2 ? null : rand(3) * 100,
            outputTokens: kind === 2 ? null : rand(3) * 10,
            reportedCostNanos: kind === 3 ? rand(2) * 1000 : null,
            steps: 1 + rand(2),
          });
        }
      const byRuns = groupCost([...runCosts(runs, usage, book).values()]);
      expect(pooledGroupCost(usage, book)).toEqual(byRuns);
      seen.add(JSON.stringify(Object.keys(byRuns).concat('cost_unavailable_reason' in byRuns ? [byRuns.cost_unavailable_reason] : [])));
    }
    // Every kind of answer came up.
    expect(seen).toEqual(new Set(['["cost_nanos"]', '["cost_unavailable_reason","zero_cost"]', '["cost_unavailable_reason","run_cost_unavailable"]']));
  });
});
