/**
 * RFC 6962 §2.1 Merkle Tree Hash over SHA-256, with inclusion and consistency proofs and their
 * verification as RFC 9162 §2.1.3.2 and §2.1.4.2 give the algorithms.
 *
 * Functions take leaf *hashes* (leafHash of each entry), so a caller hashes each entry once. The
 * frontier (a compact range covering [0, size)) lets an appender compute the next root from a
 * handful of stored hashes instead of the whole log.
 */
// Hex without Buffer, so that the pack decoder also runs in the verification page.
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { sha256 } from '../../platform/primitives.js';

export type Hash = Uint8Array;

const LEAF_PREFIX = new Uint8Array([0x00]);
const NODE_PREFIX = new Uint8Array([0x01]);

/** SHA-256 of the parts, one after another (OpenSSL's, one-shot, in Node). */
export { sha256 };

/** MTH({}) = SHA-256(""), written out. */
export const EMPTY_ROOT: Hash = hexToBytes('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');

/** SHA-256(0x00 || entry). */
export function leafHash(entry: Uint8Array): Hash {
  return sha256(LEAF_PREFIX, entry);
}

/** SHA-256(0x01 || left || right). */
export function nodeHash(left: Hash, right: Hash): Hash {
  return sha256(NODE_PREFIX, left, right);
}

/** The largest power of two smaller than n (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[n]) over the leaf hashes. */
export function merkleRoot(leaves: readonly Hash[]): Hash {
  return leaves.length === 0 ? EMPTY_ROOT : subtreeRoot(leaves, 0, leaves.length);
}

function subtreeRoot(leaves: readonly Hash[], start: number, end: number): Hash {
  const n = end - start;
  if (n === 1) return leaves[start]!;
  const k = split(n);
  return nodeHash(subtreeRoot(leaves, start, start + k), subtreeRoot(leaves, start + k, end));
}

/** PATH(m, D[n]) of RFC 6962 §2.1.1: the audit path of leaf `index`. */
export function inclusionProof(leaves: readonly Hash[], index: number): Hash[] {
  if (!Number.isSafeInteger(index) || index < 0 || index >= leaves.length) {
    throw new RangeError(`leaf ${index} is not in a tree of size ${leaves.length}`);
  }
  const proof: Hash[] = [];
  const path = (m: number, start: number, end: number): void => {
    const n = end - start;
    if (n === 1) return;
    const k = split(n);
    if (m < k) {
      path(m, start, start + k);
      proof.push(subtreeRoot(leaves, start + k, end));
    } else {
      path(m - k, start + k, end);
      proof.push(subtreeRoot(leaves, start, start + k));
    }
  };
  path(index, 0, leaves.length);
  return proof;
}

/** PROOF(m, D[n]) of RFC 6962 §2.1.2: proves the tree of size `size1` is a prefix of `leaves`. */
export function consistencyProof(leaves: readonly Hash[], size1: number): Hash[] {
  if (!Number.isSafeInteger(size1) || size1 < 0 || size1 > leaves.length) {
    throw new RangeError(`size ${size1} is not within a tree of size ${leaves.length}`);
  }
  if (size1 === 0 || size1 === leaves.length) return [];
  const proof: Hash[] = [];
  const subproof = (m: number, start: number, end: number, whole: boolean): void => {
    const n = end - start;
    if (m === n) {
      if (!whole) proof.push(subtreeRoot(leaves, start, end));
      return;
    }
    const k = split(n);
    if (m <= k) {
      subproof(m, start, start + k, whole);
      proof.push(subtreeRoot(leaves, start + k, end));
    } else {
      subproof(m - k, start + k, end, false);
      proof.push(subtreeRoot(leaves, start, start + k));
    }
  };
  subproof(size1, 0, leaves.length, true);
  return proof;
}

/** RFC 9162 §2.1.3.2. */
export function verifyInclusion(leaf: Hash, index: number, size: number, proof: readonly Hash[], root: Hash): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  // Sizes up to 2^53 do not fit 32-bit shifts, so halve arithmetically.
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalHashes(r, root);
}

/** RFC 9162 §2.1.4.2, with the trivial cases (size1 = 0, size1 = size2) decided first. */
export function verifyConsistency(size1: number, size2: number, proof: readonly Hash[], root1: Hash, root2: Hash): boolean {
  if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2) || size1 < 0 || size2 < size1) return false;
  if (size1 === size2) return proof.length === 0 && equalHashes(root1, root2);
  if (size1 === 0) return proof.length === 0;
  if (proof.length === 0) return false;

  const path = isPowerOfTwo(size1) ? [root1, ...proof] : [...proof];
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalHashes(fr, root1) && equalHashes(sr, root2);
}

/**
 * A compact range [0, size): the roots of the perfect subtrees that the binary decomposition of
 * `size` gives, left (largest) to right. At most log2(size) + 1 hashes.
 */
export interface Frontier {
  size: number;
  hashes: Hash[];
}

export const EMPTY_FRONTIER: Frontier = Object.freeze({ size: 0, hashes: [] as Hash[] });

/** The frontier after appending one leaf: merge equal-sized subtrees like a binary counter's carry. */
export function appendLeaf(frontier: Frontier, leaf: Hash): Frontier {
  assertFrontier(frontier);
  const hashes = [...frontier.hashes, leaf];
  // Each trailing one bit of the old size is a subtree the new leaf completes.
  for (let size = frontier.size; size % 2 === 1; size = Math.floor(size / 2)) {
    const right = hashes.pop()!;
    const left = hashes.pop()!;
    hashes.push(nodeHash(left, right));
  }
  return { size: frontier.size + 1, hashes };
}

/** MTH of the range: folding from the right reproduces RFC 6962's largest-power-of-two split. */
export function frontierRoot(frontier: Frontier): Hash {
  assertFrontier(frontier);
  if (frontier.size === 0) return EMPTY_ROOT;
  let root = frontier.hashes[frontier.hashes.length - 1]!;
  for (let i = frontier.hashes.length - 2; i >= 0; i -= 1) root = nodeHash(frontier.hashes[i]!, root);
  return root;
}

export function frontierOf(leaves: readonly Hash[]): Frontier {
  return leaves.reduce<Frontier>(appendLeaf, EMPTY_FRONTIER);
}

function assertFrontier(frontier: Frontier): void {
  if (!Number.isSafeInteger(frontier.size) || frontier.size < 0 || frontier.hashes.length !== popcount(frontier.size)) {
    throw new RangeError(`a frontier of size ${frontier.size} must hold ${popcount(frontier.size)} hashes, not ${frontier.hashes.length}`);
  }
}

function popcount(n: number): number {
  let count = 0;
  for (let rest = n; rest > 0; rest = Math.floor(rest / 2)) count += rest % 2;
  return count;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && popcount(n) === 1;
}

export function equalHashes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

export function hashToHex(hash: Hash): string {
  return bytesToHex(hash);
}

/** Strict: 64 lowercase hex digits, as this service writes hashes. */
export function hashFromHex(hex: string): Hash | undefined {
  return /^[0-9a-f]{64}$/.test(hex) ? hexToBytes(hex) : undefined;
}
