/**
 * RFC 6962 Merkle functions against the certificate-transparency reference data (the eight leaves
 * "", 00, 10, 2021, 3031, 40414243, 5051525354555657, 606162636465666768696a6b6c6d6e6f with the roots of
 * every prefix and their audit paths and consistency proofs, as the transparency-dev merkle and Trillian
 * tests publish them), plus properties over every size 1..64. Both implementations run every test: the
 * service's and the offline verifier's deliberate copy (cli/src/verify/merkle.ts).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as verifierMerkle from '../../../../cli/src/verify/merkle.js';
import * as serviceMerkle from './merkle.js';

const h = (hex: string) => Buffer.from(hex, 'hex');
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(h);
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
// Leaf numbers are 1-based in the reference data: { leaf, size, path }.
const INCLUSION = [
  { leaf: 1, size: 1, path: [] as string[] },
  {
    leaf: 1,
    size: 8,
    path: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    leaf: 6,
    size: 8,
    path: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { leaf: 3, size: 3, path: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    leaf: 2,
    size: 5,
    path: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];
const CONSISTENCY = [
  { first: 1, second: 1, proof: [] as string[] },
  {
    first: 1,
    second: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    first: 6,
    second: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    first: 2,
    second: 5,
    proof: ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b'],
  },
  {
    first: 6,
    second: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];
describe.each([
  ['the service', serviceMerkle],
  ['the offline verifier', verifierMerkle],
] as const)('%s', (_name, m) => {
  const { consistencyProof, emptyRoot, inclusionPath, leafHash, nodeHash, treeRoot, verifyConsistency, verifyInclusion } = m;
  const HASHES = LEAVES.map((l) => leafHash(l));
  const hex = (bs: Buffer[]) => bs.map((b) => b.toString('hex'));

  describe('RFC 6962 hashing (section 2.1)', () => {
    it('the empty tree is SHA-256 of the empty string; an empty leaf, a leaf and a node hash as the reference data says', () => {
      expect(emptyRoot().toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
      expect(treeRoot([]).toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
      expect(leafHash(Buffer.alloc(0)).toString('hex')).toBe('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
      expect(leafHash('L123456').toString('hex')).toBe('395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56');
      expect(nodeHash(Buffer.from('N123'), Buffer.from('N456')).toString('hex')).toBe('aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb');
    });

    it('MTH of every prefix of the eight reference leaves equals the published root', () => {
      for (let n = 1; n <= 8; n++) expect(treeRoot(HASHES.slice(0, n)).toString('hex'), `size ${n}`).toBe(ROOTS[n - 1]);
    });
  });

  describe('audit paths (RFC 6962 2.1.1, verified as RFC 9162 2.1.3.2)', () => {
    it('PATH(m, D[n]) equals the published audit paths, and each verifies against the published root', () => {
      for (const v of INCLUSION) {
        const path = inclusionPath(v.leaf - 1, HASHES.slice(0, v.size));
        expect(hex(path), `leaf ${v.leaf} of ${v.size}`).toEqual(v.path);
        expect(verifyInclusion(v.leaf - 1, v.size, HASHES[v.leaf - 1], path, h(ROOTS[v.size - 1]))).toBe(true);
      }
    });

    it('a wrong index, size, leaf or root, extra or missing path elements, or a flipped bit all fail', () => {
      for (const v of INCLUSION.filter((x) => x.path.length > 0)) {
        const path = v.path.map(h);
        const root = h(ROOTS[v.size - 1]);
        const leaf = HASHES[v.leaf - 1];
        const i = v.leaf - 1;
        const some = h('abacaba000000000000000000000000000000000000000000060061e00123456');
        const probes: [number, number, Buffer, Buffer[], Buffer][] = [
          [i - 1, v.size, leaf, path, root],
          [i + 1, v.size, leaf, path, root],
          [i ^ 2, v.size, leaf, path, root],
          [i, v.size * 2, leaf, path, root],
          [i, Math.floor(v.size / 2), leaf, path, root],
          [i, v.size, Buffer.from('WrongLeaf'), path, root],
          [i, v.size, leaf, path, emptyRoot()],
          [i, v.size, leaf, path, some],
          [i, v.size, leaf, [...path, Buffer.alloc(0)], root],
          [i, v.size, leaf, [...path, root], root],
          [i, v.size, leaf, [Buffer.alloc(0), ...path], root],
          [i, v.size, leaf, [root, ...path], root],
          [i, v.size, leaf, path.slice(0, -1), root],
        ];
        if (path.length > 1) probes.push([i, v.size, leaf, [path[0], some, ...path.slice(1)], root]);
        path.forEach((_, k) => {
          const bad = path.map((p) => Buffer.from(p));
          bad[k][0] ^= 8;
          probes.push([i, v.size, leaf, bad, root]);
        });
        for (const [idx, size, l, p, r] of probes) expect(verifyInclusion(idx, size, l, p, r), `${idx}/${size}`).toBe(false);
      }
    });

    it('index and size out of range fail (0 of 0, 1 of 0, 2 of 1) without throwing', () => {
      const some = HASHES[1];
      for (const [i, n] of [[0, 0], [1, 0], [2, 1], [-1, 4], [0.5, 4]]) expect(verifyInclusion(i, n, some, [], emptyRoot())).toBe(false);
    });
  });

  describe('consistency proofs (RFC 6962 2.1.2, verified as RFC 9162 2.1.4.2)', () => {
    it('PROOF(m, D[n]) equals the published proofs, and each verifies between the published roots', () => {
      for (const v of CONSISTENCY) {
        const proof = consistencyProof(v.first, HASHES.slice(0, v.second));
        expect(hex(proof), `${v.first} -> ${v.second}`).toEqual(v.proof);
        expect(verifyConsistency(v.first, v.second, h(ROOTS[v.first - 1]), h(ROOTS[v.second - 1]), proof)).toBe(true);
      }
    });

    it('the always-consistent and never-consistent sizes of the reference tests', () => {
      const r1 = HASHES[1];
      const r2 = HASHES[2];
      expect(verifyConsistency(0, 0, r1, r1, [])).toBe(true);
      expect(verifyConsistency(0, 1, r1, r2, [])).toBe(true);
      expect(verifyConsistency(1, 1, r2, r2, [])).toBe(true);
      expect(verifyConsistency(1, 1, r1, r2, [])).toBe(false);
      expect(verifyConsistency(1, 0, r1, r2, [])).toBe(false);
      expect(verifyConsistency(2, 1, r1, r2, [])).toBe(false);
      expect(verifyConsistency(1, 2, r1, r2, [])).toBe(false);
      expect(verifyConsistency(0, 1, emptyRoot(), emptyRoot(), [emptyRoot()])).toBe(false);
      expect(verifyConsistency(1, 1, emptyRoot(), emptyRoot(), [emptyRoot()])).toBe(false);
    });

    it('wrong sizes, wrong or swapped roots, an emptied, extended, prefixed or truncated proof, or a flipped bit all fail', () => {
      for (const v of CONSISTENCY.filter((x) => x.proof.length > 0)) {
        const proof = v.proof.map(h);
        const [r1, r2] = [h(ROOTS[v.first - 1]), h(ROOTS[v.second - 1])];
        const wrong = Buffer.from('WrongRoot');
        const probes: [number, number, Buffer, Buffer, Buffer[]][] = [
          [v.first - 1, v.second, r1, r2, proof],
          [v.first + 1, v.second, r1, r2, proof],
          [v.first ^ 2, v.second, r1, r2, proof],
          [v.first, v.second * 2, r1, r2, proof],
          [v.first, Math.floor(v.second / 2), r1, r2, proof],
          [v.first, v.second, wrong, r2, proof],
          [v.first, v.second, r1, wrong, proof],
          [v.first, v.second, r2, r1, proof],
          [v.first, v.second, r1, r2, []],
          [v.first, v.second, r1, r2, [...proof, Buffer.alloc(0)]],
          [v.first, v.second, r1, r2, [...proof, r1]],
          [v.first, v.second, r1, r2, [...proof, r2]],
          [v.first, v.second, r1, r2, [Buffer.alloc(0), ...proof]],
          [v.first, v.second, r1, r2, [r1, ...proof]],
          [v.first, v.second, r1, r2, [r2, ...proof]],
          [v.first, v.second, r1, r2, [proof[0], ...proof]],
          [v.first, v.second, r1, r2, proof.slice(0, -1)],
        ];
        proof.forEach((_, k) => {
          const bad = proof.map((p) => Buffer.from(p));
          bad[k][0] ^= 16;
          probes.push([v.first, v.second, r1, r2, bad]);
        });
        for (const [a, b, x, y, p] of probes) expect(verifyConsistency(a, b, x, y, p), `${a} -> ${b}`).toBe(false);
      }
    });
  });

  describe('properties over sizes 1..64', () => {
    const leaves = Array.from({ length: 64 }, (_, i) => leafHash(createHash('sha256').update(`entry ${i}`).digest()));

    it('every audit path of every leaf of every size verifies, and a flipped byte anywhere in it fails', () => {
      for (let n = 1; n <= 64; n++) {
        const tree = leaves.slice(0, n);
        const root = treeRoot(tree);
        for (let m = 0; m < n; m++) {
          const path = inclusionPath(m, tree);
          expect(verifyInclusion(m, n, tree[m], path, root), `${m} of ${n}`).toBe(true);
          if (n > 1) expect(verifyInclusion(m, n, tree[(m + 1) % n], path, root), `other leaf ${m} of ${n}`).toBe(false);
          for (let k = 0; k < path.length; k++) {
            const bad = path.map((p) => Buffer.from(p));
            bad[k][(m + k) % 32] ^= 1;
            expect(verifyInclusion(m, n, tree[m], bad, root)).toBe(false);
          }
        }
      }
    });

    it('every consistency proof between every pair of sizes verifies, and a flipped byte or another root fails', () => {
      const roots = [emptyRoot(), ...Array.from({ length: 64 }, (_, i) => treeRoot(leaves.slice(0, i + 1)))];
      for (let n = 1; n <= 64; n++) {
        const tree = leaves.slice(0, n);
        for (let m = 1; m <= n; m++) {
          const proof = consistencyProof(m, tree);
          expect(verifyConsistency(m, n, roots[m], roots[n], proof), `${m} -> ${n}`).toBe(true);
          if (m > 1 && m < n) expect(verifyConsistency(m, n, roots[m - 1], roots[n], proof), `wrong first root ${m} -> ${n}`).toBe(false);
          if (m < n) expect(verifyConsistency(m, n, roots[m], roots[n - 1], proof), `wrong second root ${m} -> ${n}`).toBe(false);
          for (let k = 0; k < proof.length; k++) {
            const bad = proof.map((p) => Buffer.from(p));
            bad[k][(m + n + k) % 32] ^= 0x80;
            expect(verifyConsistency(m, n, roots[m], roots[n], bad), `flip ${k} ${m} -> ${n}`).toBe(false);
          }
        }
      }
    });

    it('out-of-range indexes and sizes are refused by the provers', () => {
      expect(() => inclusionPath(3, leaves.slice(0, 3))).toThrow(RangeError);
      expect(() => consistencyProof(0, leaves.slice(0, 3))).toThrow(RangeError);
      expect(() => consistencyProof(4, leaves.slice(0, 3))).toThrow(RangeError);
    });
  });
});
