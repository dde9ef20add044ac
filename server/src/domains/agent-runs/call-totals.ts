/**
 * A session's model calls summed by model, kept with the session at ingest and priced when read.
 *
 * A call's cost is rounded on its own (cost.ts), so a sum of tokens priced once is the sum of the calls' costs
 * only when no call needs rounding: when the model's prices are a whole number of nanos per token (every
 * price of up to three decimals in dollars per million tokens: $0.15/M is 150 nanos per token). Then a
 * session's cost is its reported costs plus, per model, input tokens x input price + output tokens x output
 * price, whatever the number of calls. A price finer than that (say $0.0375/M) makes `totalsCost` answer
 * null, and the caller prices the session's calls one by one, as before. The answer is the one
 * `pooledGroupCost` gives over the same calls (a test compares them): a call with neither a reported cost
 * nor a token count, or a model without a price, makes the cost unavailable; a sum of 0 is `zero_cost`.
 */
import type { Cost, GroupCostReason, PriceBook } from './cost.js';
import type { ModelUsageRow } from './store.js';

type UsageGroup = Omit<ModelUsageRow, 'traceId'>;

export interface ModelTotals {
  provider: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  calls: number;
}

export interface CallTotals {
  /** Sum of the reported costs (`svc.cost.nanos`) and the number of calls that reported one. */
  reportedNanos: number;
  reportedCalls: number;
  /** Calls with neither a reported cost nor a token count. */
  missingCalls: number;
  /** The other calls, by provider and model. */
  models: ModelTotals[];
}

export const noCalls = (): CallTotals => ({ reportedNanos: 0, reportedCalls: 0, missingCalls: 0, models: [] });

/** Adds (sign 1) or takes away (sign -1) a run's usage groups; `t` is changed. */
export function addCalls(t: CallTotals, usage: readonly UsageGroup[], sign: 1 | -1): void {
  for (const g of usage) {
    const n = g.steps * sign;
    if (g.reportedCostNanos !== null) {
      t.reportedNanos += g.reportedCostNanos * n;
      t.reportedCalls += n;
    } else if (g.inputTokens === null && g.outputTokens === null) t.missingCalls += n;
    else {
      const provider = g.provider || null;
      let m = t.models.find((x) => x.model === g.model && x.provider === provider);
      if (!m) t.models.push((m = { provider, model: g.model, inputTokens: 0, outputTokens: 0, calls: 0 }));
      m.inputTokens += Math.trunc(g.inputTokens ?? 0) * n;
      m.outputTokens += Math.trunc(g.outputTokens ?? 0) * n;
      m.calls += n;
      if (m.calls === 0) t.models.splice(t.models.indexOf(m), 1);
    }
  }
}

const before = (a: ModelTotals, b: ModelTotals) => {
  const ka = `${a.provider ?? ''}\u0000${a.model ?? ''}`;
  const kb = `${b.provider ?? ''}\u0000${b.model ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** As stored: JSON [reported nanos, reported calls, missing calls, [[provider, model, input, output, calls], ...]], models in one order. */
export function totalsText(t: CallTotals): string {
  const models = [...t.models].sort(before).map((m) => [m.provider, m.model, m.inputTokens, m.outputTokens, m.calls]);
  return JSON.stringify([t.reportedNanos, t.reportedCalls, t.missingCalls, models]);
}

type Stored = [number, number, number, [string | null, string | null, number, number, number][]];

/** The totals of `totalsText`; null for none (a row written before totals were kept). */
export function parseTotals(text: string | null): CallTotals | null {
  if (text === null) return null;
  const [reportedNanos, reportedCalls, missingCalls, models] = JSON.parse(text) as Stored;
  return {
    reportedNanos,
    reportedCalls,
    missingCalls,
    models: models.map(([provider, model, inputTokens, outputTokens, calls]) => ({ provider, model, inputTokens, outputTokens, calls })),
  };
}

/** The session's cost from its totals, or null when a price needs each call rounded (price the calls instead). */
export function totalsCost(t: CallTotals, book: PriceBook): Cost<GroupCostReason> | null {
  if (t.missingCalls > 0) return { cost_unavailable_reason: 'run_cost_unavailable' };
  let sum = t.reportedNanos;
  let exact = Number.isSafeInteger(sum);
  for (const m of t.models) {
    const price = book.price(m.provider, m.model);
    if (!price) return { cost_unavailable_reason: 'run_cost_unavailable' };
    // Thousandths of a nano per token, exactly as stored (pricing-port.ts stepCostNanos).
    const inMilli = Math.round(price.inputNanosPerToken * 1000);
    const outMilli = Math.round(price.outputNanosPerToken * 1000);
    if (inMilli % 1000 !== 0 || outMilli % 1000 !== 0) {
      exact = false;
      continue;
    }
    const input = m.inputTokens * (inMilli / 1000);
    const output = m.outputTokens * (outMilli / 1000);
    sum += input + output;
    if (!Number.isSafeInteger(input) || !Number.isSafeInteger(output) || !Number.isSafeInteger(sum) || input < 0 || output < 0) exact = false;
  }
  if (!exact) return null;
  return sum === 0 ? { cost_unavailable_reason: 'zero_cost' } : { cost_nanos: sum };
}
