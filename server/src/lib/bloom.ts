/**
 * A Bloom filter of strings: `has` is false only for a string never added (no false negatives); true for
 * about 0.002% of the others at its capacity (24 bits a key, 10 hashes): each false positive costs a
 * lookup, and a commit of 500 new runs asks for 500 keys. Used to skip lookups of keys certainly absent (a new trace id).
 */
const HASHES = 10;
const BITS_PER_KEY = 24;

/** FNV-1a over the UTF-16 code units, with a seed. */
function fnv(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class BloomFilter {
  private readonly bits: Uint32Array;
  private readonly size: number;
  private added = 0;

  constructor(readonly capacity: number) {
    this.size = Math.max(1024, Math.ceil(capacity * BITS_PER_KEY));
    this.bits = new Uint32Array(Math.ceil(this.size / 32));
  }

  /** Keys added (with repeats): past the capacity, false positives grow; make a larger one. */
  get count(): number {
    return this.added;
  }

  add(key: string): void {
    const a = fnv(key, 0);
    const b = fnv(key, 0x9e3779b9) | 1;
    for (let i = 0; i < HASHES; i++) {
      const bit = (a + Math.imul(i, b)) >>> 0;
      const at = bit % this.size;
      this.bits[at >>> 5] |= 1 << (at & 31);
    }
    this.added++;
  }

  has(key: string): boolean {
    const a = fnv(key, 0);
    const b = fnv(key, 0x9e3779b9) | 1;
    for (let i = 0; i < HASHES; i++) {
      const at = ((a + Math.imul(i, b)) >>> 0) % this.size;
      if ((this.bits[at >>> 5] & (1 << (at & 31))) === 0) return false;
    }
    return true;
  }
}
