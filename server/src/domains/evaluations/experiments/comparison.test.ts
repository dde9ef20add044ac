/** The comparison math: counts, means, all-scored and paired differences; nothing unmeasured is a 0. */
import { describe, expect, it } from 'vitest';
import { compare, summarize, type Cell } from './comparison.js';

const s = (value: number | null, label: string | null = null): Cell => ({ state: 'scored', value, label });
const U: Cell = { state: 'unmeasured' };
const W: Cell = { state: 'withheld' };
const M: Cell = { state: 'missing' };
const P: Cell = { state: 'pending' };

describe('experiment comparison', () => {
  it('"something not measured is never shown as 0": unmeasured, withheld, missing and pending are counted and left out of the mean', () => {
    const sum = summarize([s(1, 'pass'), s(0, 'fail'), U, W, M, P, s(null, 'pass')]);
    expect(sum.counts).toEqual({ items: 7, scored: 3, numeric: 2, unmeasured: 1, withheld: 1, missing: 1, pending: 1 });
    expect(sum.mean).toBe(0.5);
    expect(sum.labels).toEqual({ pass: 2, fail: 1 });
  });

  it('an arm with nothing scored has no mean (absent, not 0), and a difference needing it is absent too', () => {
    const none = summarize([U, M, P]);
    expect(none.mean).toBeUndefined();
    expect('mean' in none).toBe(false);
    const d = compare([U, M, P], [s(1), s(1), s(0)]);
    expect(d.delta).toBeUndefined();
    expect(d.paired).toEqual({ items: 0 });
  });

  it('delta is candidate − baseline over everything each side scored; paired is over the items scored on both sides only', () => {
    const baseline = [s(1), s(0), s(1), U];
    const candidate = [s(1), s(1), M, s(0)];
    const d = compare(baseline, candidate);
    expect(d.delta).toBeCloseTo(2 / 3 - 2 / 3, 12);
    expect(d.paired).toEqual({ items: 2, baseline_mean: 0.5, candidate_mean: 1, delta: 0.5 });
  });

  it('a measured zero is a real score: it is averaged in', () => {
    expect(summarize([s(0), s(0)]).mean).toBe(0);
    expect(compare([s(0)], [s(0.25)]).delta).toBe(0.25);
  });

  it('cells must be aligned by item', () => {
    expect(() => compare([s(1)], [])).toThrow();
  });
});
