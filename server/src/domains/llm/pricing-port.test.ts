/** Exact price arithmetic: USD per million tokens <-> micro-dollars, and the once-rounded step cost. */
import { describe, expect, it } from 'vitest';
import { stepCostNanos } from './pricing-port.js';
import { toMicros } from './service.js';

describe('toMicros', () => {
  it('reads up to 6 decimals exactly', () => {
    expect(toMicros('p', 0)).toBe(0);
    expect(toMicros('p', 0.000001)).toBe(1);
    expect(toMicros('p', 0.15)).toBe(150_000);
    expect(toMicros('p', 2.5)).toBe(2_500_000);
    expect(toMicros('p', 1234.567891)).toBe(1_234_567_891);
    expect(toMicros('p', 10_000)).toBe(10_000_000_000);
    // Every 6-decimal value round-trips through micros / 1e6.
    for (const micros of [1, 7, 123_457, 999_999, 3_000_001, 9_999_999_999]) expect(toMicros('p', micros / 1e6)).toBe(micros);
  });

  it('refuses negative, non-finite, too precise and too large values', () => {
    for (const bad of [-0.5, Number.POSITIVE_INFINITY, Number.NaN, 0.0000001, 1e-7, 1.2345678, 10_000.000001, 1e21])
      expect(() => toMicros('p', bad), String(bad)).toThrow();
  });
});

describe('stepCostNanos', () => {
  const price = (inUsd: number, outUsd: number) => ({ inputNanosPerToken: toMicros('i', inUsd) / 1000, outputNanosPerToken: toMicros('o', outUsd) / 1000 });

  it('is input tokens × input price + output tokens × output price, in nanos', () => {
    // $3 / $15 per million tokens: 3000 / 15000 nanos per token.
    expect(stepCostNanos(price(3, 15), 1000, 200)).toBe(3_000_000 + 3_000_000);
    expect(stepCostNanos(price(3, 15), 0, 0)).toBe(0);
  });

  it('rounds once per step, half up, not per token kind', () => {
    // $0.0004 per million = 0.4 nanos per token: each part alone would round to 0; together 0.8 -> 1.
    expect(stepCostNanos(price(0.0004, 0.0004), 1, 1)).toBe(1);
    // 0.2 + 0.2 = 0.4 -> 0.
    expect(stepCostNanos(price(0.0002, 0.0002), 1, 1)).toBe(0);
    // Exactly half rounds up; just below stays down.
    expect(stepCostNanos(price(0.0005, 0), 1, 0)).toBe(1);
    expect(stepCostNanos(price(0.001499, 0), 1, 0)).toBe(1);
    expect(stepCostNanos(price(0.0015, 0), 1, 0)).toBe(2);
  });

  it('stays exact for large token counts and prices (no floating-point drift)', () => {
    // 10^9 tokens at $0.000001 per million = 10^9 × 0.001 nanos = 10^6 nanos.
    expect(stepCostNanos(price(0.000001, 0), 1_000_000_000, 0)).toBe(1_000_000);
    // 0.1 + 0.2 style sums: 3 tokens at $0.1/M and 3 at $0.2/M = 300 + 600 nanos.
    expect(stepCostNanos(price(0.1, 0.2), 3, 3)).toBe(900);
    // 10^6 tokens at $10,000 per million = $10,000 = 10^13 nanos.
    expect(stepCostNanos(price(10_000, 10_000), 1_000_000, 1_000_000)).toBe(2e13);
  });

  it('the double arithmetic answers exactly what big integers answer, up to the largest safe sums', () => {
    const exact = (inMilli: number, outMilli: number, i: number, o: number) => Number((BigInt(i) * BigInt(inMilli) + BigInt(o) * BigInt(outMilli) + 500n) / 1000n);
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * n);
    };
    const cases: [number, number, number, number][] = [
      [1_000_000_000, 0, 9_007_199, 0], // a sum just under 2^53
      [999_999, 999_999, 4_503_599_627, 4_503_599_627],
      [15_000_000, 60_000_000, 1e9, 1e9],
    ];
    for (let k = 0; k < 2000; k++) cases.push([rand(2e7), rand(2e7), rand(2 ** 30) * (1 + rand(1000)), rand(2 ** 30)]);
    for (const [inMilli, outMilli, i, o] of cases)
      expect(stepCostNanos({ inputNanosPerToken: inMilli / 1000, outputNanosPerToken: outMilli / 1000 }, i, o), `${inMilli} ${outMilli} ${i} ${o}`).toBe(exact(inMilli, outMilli, i, o));
  });
});
