import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  appendLeaf,
  consistencyProof,
  EMPTY_FRONTIER,
  EMPTY_ROOT,
  frontierOf,
  frontierRoot,
  inclusionProof,
  leafHash,
  merkleRoot,
  verifyConsistency,
  verifyInclusion,
} from '../../../lib/formats/issuer/merkle.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

// transparency-dev/merkle testonly/constants.go and proof/verify_test.go (the certificate-transparency
// reference vectors).
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(bytes);
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const LEAF_HASHES = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
  '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7',
  '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
  'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
  '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
  'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
  '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1',
];
// [leaf index (0-based), tree size, proof]
const INCLUSION: [number, number, string[]][] = [
  [0, 1, []],
  [
    0,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    5,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    1,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];
const CONSISTENCY: [number, number, string[]][] = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [2, 5, ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
  [
    6,
    7,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
];

const hashes = LEAVES.map(leafHash);
const flip = (hash: Uint8Array, mask: number) => Uint8Array.from(hash, (byte, i) => (i === 0 ? byte ^ mask : byte));

describe('RFC 6962 Merkle tree', () => {
  it('hashes leaves as SHA-256(0x00 || leaf) (checked with node:crypto and the reference leaf hashes)', () => {
    LEAVES.forEach((leaf, i) => {
      expect(hex(leafHash(leaf))).toBe(
        createHash('sha256')
          .update(Buffer.concat([Buffer.from([0]), leaf]))
          .digest('hex'),
      );
      expect(hex(leafHash(leaf))).toBe(LEAF_HASHES[i]);
    });
  });

  it('gives the reference root for every size 0..8', () => {
    for (let size = 0; size <= 8; size += 1) expect(hex(merkleRoot(hashes.slice(0, size))), `size ${size}`).toBe(ROOTS[size]);
    expect(hex(EMPTY_ROOT)).toBe(ROOTS[0]);
  });

  it('computes the same roots incrementally from the frontier', () => {
    let frontier = EMPTY_FRONTIER;
    expect(hex(frontierRoot(frontier))).toBe(ROOTS[0]);
    hashes.forEach((hash, i) => {
      frontier = appendLeaf(frontier, hash);
      expect(hex(frontierRoot(frontier)), `size ${i + 1}`).toBe(ROOTS[i + 1]);
    });
    expect(frontier.hashes.map(hex)).toEqual([ROOTS[8]]);
    // Seven leaves: subtrees of 4, 2 and 1 (transparency-dev CompactTrees()[7]).
    expect(frontierOf(hashes.slice(0, 7)).hashes.map(hex)).toEqual([ROOTS[4], '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a', LEAF_HASHES[6]]);
  });

  it('agrees with the recursive definition for every size up to 200', () => {
    const many = Array.from({ length: 200 }, (_, i) => leafHash(new TextEncoder().encode(`entry ${i}`)));
    let frontier = EMPTY_FRONTIER;
    for (let size = 1; size <= many.length; size += 1) {
      frontier = appendLeaf(frontier, many[size - 1]!);
      expect(hex(frontierRoot(frontier))).toBe(hex(merkleRoot(many.slice(0, size))));
    }
  });

  it('refuses a frontier whose hashes do not match its size', () => {
    expect(() => appendLeaf({ size: 3, hashes: [hashes[0]!] }, hashes[1]!)).toThrow(RangeError);
  });

  it.each(INCLUSION)('generates and verifies the reference inclusion proof of leaf %i in size %i', (index, size, expected) => {
    const proof = inclusionProof(hashes.slice(0, size), index);
    expect(proof.map(hex)).toEqual(expected);
    const root = bytes(ROOTS[size]!);
    expect(verifyInclusion(hashes[index]!, index, size, proof, root)).toBe(true);
    // The transparency-dev corruption probes.
    const probes: [number, number, Uint8Array[], Uint8Array, Uint8Array][] = [
      [index - 1, size, proof, root, hashes[index]!],
      [index + 1, size, proof, root, hashes[index]!],
      [index ^ 2, size, proof, root, hashes[index]!],
      [index, size * 2, proof, root, hashes[index]!],
      [index, Math.floor(size / 2), proof, root, hashes[index]!],
      [index, size, proof, root, new TextEncoder().encode('WrongLeaf')],
      [index, size, proof, EMPTY_ROOT, hashes[index]!],
      [index, size, [...proof, new Uint8Array(0)], root, hashes[index]!],
      [index, size, [...proof, root], root, hashes[index]!],
      [index, size, [new Uint8Array(0), ...proof], root, hashes[index]!],
      [index, size, [root, ...proof], root, hashes[index]!],
      ...proof.map((_, i) => [index, size, proof.map((p, j) => (j === i ? flip(p, 8) : p)), root, hashes[index]!] as [number, number, Uint8Array[], Uint8Array, Uint8Array]),
      ...(proof.length > 0 ? [[index, size, proof.slice(0, -1), root, hashes[index]!] as [number, number, Uint8Array[], Uint8Array, Uint8Array]] : []),
    ];
    for (const [i, n, p, r, leaf] of probes) expect(verifyInclusion(leaf, i, n, p, r)).toBe(false);
  });

  it.each(CONSISTENCY)('generates and verifies the reference consistency proof from %i to %i', (size1, size2, expected) => {
    const proof = consistencyProof(hashes.slice(0, size2), size1);
    expect(proof.map(hex)).toEqual(expected);
    const root1 = bytes(ROOTS[size1]!);
    const root2 = bytes(ROOTS[size2]!);
    expect(verifyConsistency(size1, size2, proof, root1, root2)).toBe(true);
    if (proof.length === 0) return;
    const wrong = new TextEncoder().encode('WrongRoot');
    const probes: [number, number, Uint8Array[], Uint8Array, Uint8Array][] = [
      [size1 - 1, size2, proof, root1, root2],
      [size1 + 1, size2, proof, root1, root2],
      [size1 ^ 2, size2, proof, root1, root2],
      [size1, size2 * 2, proof, root1, root2],
      [size1, Math.floor(size2 / 2), proof, root1, root2],
      [size1, size2, proof, wrong, root2],
      [size1, size2, proof, root1, wrong],
      [size1, size2, proof, root2, root1],
      [size1, size2, [], root1, root2],
      [size1, size2, [...proof, new Uint8Array(0)], root1, root2],
      [size1, size2, [...proof, root1], root1, root2],
      [size1, size2, [...proof, root2], root1, root2],
      [size1, size2, [new Uint8Array(0), ...proof], root1, root2],
      [size1, size2, [root1, ...proof], root1, root2],
      [size1, size2, [root2, ...proof], root1, root2],
      [size1, size2, [proof[0]!, ...proof], root1, root2],
      [size1, size2, proof.slice(0, -1), root1, root2],
      ...proof.map((_, i) => [size1, size2, proof.map((p, j) => (j === i ? flip(p, 16) : p)), root1, root2] as [number, number, Uint8Array[], Uint8Array, Uint8Array]),
    ];
    for (const [m, n, p, r1, r2] of probes) expect(verifyConsistency(m, n, p, r1, r2)).toBe(false);
  });

  it('decides the trivial consistency cases as transparency-dev does', () => {
    const a = new TextEncoder().encode("don't care 1");
    const b = new TextEncoder().encode("don't care 2");
    expect(verifyConsistency(0, 0, [], a, b)).toBe(false);
    expect(verifyConsistency(1, 1, [], a, b)).toBe(false);
    expect(verifyConsistency(0, 0, [], a, a)).toBe(true);
    expect(verifyConsistency(0, 1, [], a, b)).toBe(true);
    expect(verifyConsistency(1, 1, [], b, b)).toBe(true);
    expect(verifyConsistency(1, 0, [], a, b)).toBe(false);
    expect(verifyConsistency(2, 1, [], a, b)).toBe(false);
    expect(verifyConsistency(1, 2, [], a, b)).toBe(false);
    expect(verifyConsistency(0, 0, [EMPTY_ROOT], EMPTY_ROOT, EMPTY_ROOT)).toBe(false);
    expect(verifyConsistency(0, 1, [EMPTY_ROOT], EMPTY_ROOT, EMPTY_ROOT)).toBe(false);
    expect(verifyConsistency(1, 1, [EMPTY_ROOT], EMPTY_ROOT, EMPTY_ROOT)).toBe(false);
  });

  it('proves and verifies every inclusion and every consistency in trees up to 33 leaves', () => {
    const many = Array.from({ length: 33 }, (_, i) => leafHash(new Uint8Array([i])));
    for (let size = 1; size <= many.length; size += 1) {
      const tree = many.slice(0, size);
      const root = merkleRoot(tree);
      for (let index = 0; index < size; index += 1) {
        expect(verifyInclusion(tree[index]!, index, size, inclusionProof(tree, index), root)).toBe(true);
      }
      for (let size1 = 0; size1 <= size; size1 += 1) {
        const proof = consistencyProof(tree, size1);
        expect(verifyConsistency(size1, size, proof, merkleRoot(many.slice(0, size1)), root), `${size1} -> ${size}`).toBe(true);
        if (size1 > 0 && size1 < size) expect(verifyConsistency(size1, size, proof, merkleRoot(many.slice(1, size1 + 1)), root)).toBe(false);
      }
    }
  });
});
