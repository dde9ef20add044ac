/** docs/agent-model.md "Sampling": keep a trace when h(trace_id) < sampling_rate, h = first 8 bytes of SHA-256(16-byte id) / 2^64. */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keepTrace, traceHash } from './traces-sampling.js';

const ids = (n: number) => Array.from({ length: n }, () => randomBytes(16).toString('hex'));

/** The definition, computed independently with exact integers. */
function byDefinition(hex: string, rate: number): boolean {
  const h = createHash('sha256').update(Buffer.from(hex, 'hex')).digest().readBigUInt64BE(0);
  return Number(h) / 2 ** 64 < rate;
}

describe('keepTrace', () => {
  it('the same trace id always gets the same answer (either case of hex)', () => {
    for (const id of ids(200)) {
      const a = keepTrace(id, 0.5);
      for (let i = 0; i < 3; i++) expect(keepTrace(id, 0.5)).toBe(a);
      expect(keepTrace(id.toUpperCase(), 0.5)).toBe(a);
    }
  });

  it('rate 0 keeps none; rate 1 keeps all', () => {
    for (const id of ids(500)) {
      expect(keepTrace(id, 0)).toBe(false);
      expect(keepTrace(id, 1)).toBe(true);
    }
  });

  it('matches the definition (first 8 bytes of SHA-256 of the 16 id bytes, over 2^64)', () => {
    for (const rate of [0.001, 0.1, 0.25, 0.5, 0.9, 0.999])
      for (const id of ids(300)) expect(keepTrace(id, rate), `${id} @ ${rate}`).toBe(byDefinition(id, rate));
    const id = '0af7651916cd43dd8448eb211c80319c';
    const h = traceHash(Buffer.from(id, 'hex'));
    expect(keepTrace(id, h)).toBe(false); // strictly less than
    expect(keepTrace(id, h + 1e-12)).toBe(true);
  });

  it('keeps about rate x N of random ids', () => {
    const all = ids(20_000);
    for (const rate of [0.1, 0.3, 0.75]) {
      const kept = all.filter((id) => keepTrace(id, rate)).length;
      const sd = Math.sqrt(all.length * rate * (1 - rate));
      expect(Math.abs(kept - rate * all.length), `rate ${rate}: kept ${kept}`).toBeLessThan(5 * sd);
    }
  });

  it('a lower rate keeps a subset of what a higher rate keeps (the same hash, a lower threshold)', () => {
    for (const id of ids(500)) if (keepTrace(id, 0.2)) expect(keepTrace(id, 0.6)).toBe(true);
  });

  it('refuses what is not a trace id', () => {
    expect(() => keepTrace('abc', 0.5)).toThrow(RangeError);
    expect(() => keepTrace('z'.repeat(32), 0.5)).toThrow(RangeError);
  });
});
