/**
 * The RFC 6962 Merkle tree over a receipt chain (docs/receipt-chains.md), pure functions over leaf
 * hashes: leaf hash SHA-256(0x00 || leaf), node hash SHA-256(0x01 || left || right), the tree hash of
 * any size (section 2.1; the empty tree hashes to SHA-256 of nothing), audit paths (2.1.1) and
 * consistency proofs (2.1.2), and their verifiers as RFC 9162 sections 2.1.3.2 and 2.1.4.2 state them.
 * Sizes and indexes are plain numbers (exact up to 2^53): the bit steps use arithmetic, not 32-bit operators.
 */
import { createHash } from 'node:crypto';

export const HASH_BYTES = 32;

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

const LEAF = Uint8Array.of(0);
const NODE = Uint8Array.of(1);

/** SHA-256(0x00 || leaf). */
export const leafHash = (leaf: Uint8Array | string): Buffer => sha256(LEAF, typeof leaf === 'string' ? Buffer.from(leaf, 'utf8') : leaf);
/** SHA-256(0x01 || left || right). */
export const nodeHash = (left: Uint8Array, right: Uint8Array): Buffer => sha256(NODE, left, right);
/** The hash of the empty tree: SHA-256 of the empty string. */
export const emptyRoot = (): Buffer => sha256();

/** The largest power of two strictly below n (n >= 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH over leaf hashes hashes[lo, hi). O(hi - lo) hashing, recursion depth log2 of the size. */
function mth(hashes: readonly Uint8Array[], lo: number, hi: number): Buffer {
  const n = hi - lo;
  if (n === 0) return emptyRoot();
  if (n === 1) return Buffer.from(hashes[lo]);
  const k = split(n);
  return nodeHash(mth(hashes, lo, lo + k), mth(hashes, lo + k, hi));
}

/** The tree head (root) over the given leaf hashes. */
export const treeRoot = (leafHashes: readonly Uint8Array[]): Buffer => mth(leafHashes, 0, leafHashes.length);

/** PATH(m, D[n]) of RFC 6962 2.1.1: the audit path of leaf m in the tree of all the given leaves, leaf side first. */
export function inclusionPath(m: number, leafHashes: readonly Uint8Array[]): Buffer[] {
  const n = leafHashes.length;
  if (!Number.isSafeInteger(m) || m < 0 || m >= n) throw new RangeError(`leaf index ${m} is outside a tree of ${n}`);
  const path = (m: number, lo: number, hi: number): Buffer[] => {
    const size = hi - lo;
    if (size === 1) return [];
    const k = split(size);
    return m < k ? [...path(m, lo, lo + k), mth(leafHashes, lo + k, hi)] : [...path(m - k, lo + k, hi), mth(leafHashes, lo, lo + k)];
  };
  return path(m, 0, n);
}

/** PROOF(m, D[n]) of RFC 6962 2.1.2: proves the tree of the first m leaves is a prefix of the tree of all (0 < m <= n). */
export function consistencyProof(m: number, leafHashes: readonly Uint8Array[]): Buffer[] {
  const n = leafHashes.length;
  if (!Number.isSafeInteger(m) || m < 1 || m > n) throw new RangeError(`first size ${m} is outside 1..${n}`);
  const sub = (m: number, lo: number, hi: number, whole: boolean): Buffer[] => {
    const size = hi - lo;
    if (m === size) return whole ? [] : [mth(leafHashes, lo, hi)];
    const k = split(size);
    return m <= k ? [...sub(m, lo, lo + k, whole), mth(leafHashes, lo + k, hi)] : [...sub(m - k, lo + k, hi, false), mth(leafHashes, lo, lo + k)];
  };
  return sub(m, 0, n, true);
}

const odd = (x: number) => x % 2 === 1;
const half = (x: number) => Math.floor(x / 2);
const powerOfTwo = (x: number) => {
  while (x > 1 && !odd(x)) x = half(x);
  return x === 1;
};
const isHash = (h: Uint8Array) => h.length === HASH_BYTES;
const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** RFC 9162 2.1.3.2: does `path` prove the leaf hash at `index` is in the tree of `size` with head `root`? */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, path: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (!isHash(leaf) || !isHash(root) || !path.every(isHash)) return false;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of path) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) while (!odd(fn) && fn !== 0) ((fn = half(fn)), (sn = half(sn)));
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && same(r, root);
}

/** RFC 9162 2.1.4.2: does `proof` show the tree of `first` leaves (head `firstRoot`) is a prefix of the tree of `second` (head `secondRoot`)? */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (!isHash(firstRoot) || !isHash(secondRoot) || !proof.every(isHash)) return false;
  // Equal sizes: the heads must be equal and the proof empty. The empty tree is a prefix of every tree.
  if (first === second) return proof.length === 0 && same(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path: Uint8Array[] = [...proof];
  // A first size that is a power of two is a complete subtree: its head starts the path.
  if (powerOfTwo(first)) path.unshift(firstRoot);
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) ((fn = half(fn)), (sn = half(sn)));
  let fr: Buffer = Buffer.from(path[0]);
  let sr: Buffer = Buffer.from(path[0]);
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) while (!odd(fn) && fn !== 0) ((fn = half(fn)), (sn = half(sn)));
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && same(fr, firstRoot) && same(sr, secondRoot);
}
