/** The Bloom filter the summaries writer skips lookups with: never a false negative; rare false positives. */
import { describe, expect, it } from 'vitest';
import { BloomFilter } from './bloom.js';

describe('BloomFilter', () => {
  it('has every key added, and few others at its capacity', () => {
    const b = new BloomFilter(50_000);
    for (let i = 0; i < 50_000; i++) b.add(`project\u0000${i.toString(16).padStart(32, '0')}`);
    for (let i = 0; i < 50_000; i++) expect(b.has(`project\u0000${i.toString(16).padStart(32, '0')}`)).toBe(true);
    let fp = 0;
    for (let i = 0; i < 200_000; i++) if (b.has(`project\u0000x${i}`)) fp++;
    expect(fp / 200_000).toBeLessThan(0.0002);
    expect(b.count).toBe(50_000);
  });
});
