/**
 * RFC 6962's Merkle Tree Hash written out with node:crypto, apart from lib/formats/issuer/merkle.ts:
 * what the tests check the platform's log heads against.
 */
import { createHash } from 'node:crypto';

/** MTH over the entries (each hashed as a leaf), as hex. */
export function referenceTreeHash(entries: string[]): string {
  const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
  const tree = (leaves: Buffer[]): Buffer => {
    if (leaves.length === 0) return createHash('sha256').digest();
    if (leaves.length === 1) return sha(Buffer.from([0]), leaves[0]!);
    let k = 1;
    while (k * 2 < leaves.length) k *= 2;
    return sha(Buffer.from([1]), tree(leaves.slice(0, k)), tree(leaves.slice(k)));
  };
  return tree(entries.map((entry) => Buffer.from(entry))).toString('hex');
}
