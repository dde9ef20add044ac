/** Sampling selection: "selection is derived from a stable hash of the run, so the same run always gets the same answer". */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runFraction, selects } from './selection.js';

const ids = Array.from({ length: 5000 }, () => randomBytes(16).toString('hex'));

describe('sampling selection', () => {
  it('"the same run always gets the same answer": repeated decisions agree, whatever the rule', () => {
    for (const id of ids.slice(0, 1000)) {
      const first = selects('rule-a', id, 0.3);
      expect(selects('rule-a', id, 0.3)).toBe(first);
      expect(selects('rule-b', id, 0.3)).toBe(first);
    }
  });

  it('a higher rate selects a superset of what a lower rate selects', () => {
    const rates = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99];
    for (let i = 1; i < rates.length; i++) {
      const low = ids.filter((id) => selects('r', id, rates[i - 1]));
      const high = new Set(ids.filter((id) => selects('r', id, rates[i])));
      for (const id of low) expect(high.has(id)).toBe(true);
      expect(high.size).toBeGreaterThanOrEqual(low.length);
    }
  });

  it('the share selected follows the rate (5000 random run ids, within 3 points)', () => {
    for (const rate of [0.1, 0.5, 0.9]) {
      const share = ids.filter((id) => selects('r', id, rate)).length / ids.length;
      expect(Math.abs(share - rate)).toBeLessThan(0.03);
    }
  });

  it('"zero rate ... disables a rule": rate 0 selects nothing, rate 1 selects everything', () => {
    expect(ids.some((id) => selects('r', id, 0))).toBe(false);
    expect(ids.every((id) => selects('r', id, 1))).toBe(true);
  });

  it('the run fraction is in [0, 1) and fixed for a run id (a known value, so a change of the hash is caught)', () => {
    for (const id of ids.slice(0, 500)) {
      const f = runFraction(id);
      expect(f).toBeGreaterThanOrEqual(0);
      expect(f).toBeLessThan(1);
    }
    // SHA-256("run-1") = 4e65d3fbe8ad65...: the fraction is its first 13 hex digits (52 bits) over 2^52.
    expect(runFraction('run-1')).toBe(0x4e65d3fbe8ad6 / 2 ** 52);
  });
});
