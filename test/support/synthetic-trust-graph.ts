/**
 * A large trust graph built cheaply, for benchmarks (bench/trust-scale.ts, bench/verify-page.ts) and
 * tests that need one (test/verifier/verify-page-light.test.ts): rows inserted in SQL batches, as a
 * registry of that size would have been filled over years, not written one by one through the API.
 *
 * Layout: `roots` roots; 1 % of the nodes are authorities, each delegated by one root (every tenth
 * by two); the rest are issuers, each delegated by one authority (every twentieth by two). Every
 * node `node-<index>` has one Ed25519 key of its own; every edge is a signed-JSON credential its
 * issuer's key signed, valid from a day ago for a year. The graph grows in place: `growTo` adds the
 * nodes from the current size on, each size's authorities first within its own range.
 */
import { createHash, sign as nodeSign, type KeyObject } from 'node:crypto';
import type pg from 'pg';
import { jwkThumbprint } from '../../lib/crypto/index.js';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { ed25519KeyPair } from './ed25519.js';

export interface SyntheticKey {
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string };
  privateKey: KeyObject;
}

export function syntheticKey(): SyntheticKey {
  const { publicKey, privateKey } = ed25519KeyPair();
  const jwk = { kty: 'OKP' as const, crv: 'Ed25519' as const, x: publicKey.export({ format: 'jwk' }).x!, kid: '' };
  jwk.kid = jwkThumbprint(jwk);
  return { jwk, privateKey };
}

/**
 * Rows per INSERT. Each trust_node and delegation_edge row fires the graph's write counter, which
 * updates one row again and again within its statement's transaction, at a cost that grows with the
 * square of the rows in it: the 9,000 nodes of verify-page-light's growth cost PostgreSQL 2.0 CPU-s
 * 5,000 a statement, 1.46 at 1,000, 1.40 at 500.
 */
const BATCH = 1_000;

export class SyntheticTrustGraph {
  /** The key of node `node-<index>`. */
  readonly keys: SyntheticKey[] = [];
  /** Indexes of the authorities and of the issuers, in the order they were added. */
  readonly authorities: number[] = [];
  readonly issuers: number[] = [];
  size = 0;
  /** Every key's `iat` (NumericDate), and every credential's validity: from a day ago for a year. */
  readonly keyIat = Math.floor(Date.now() / 1000) - 86_400;
  readonly issuedAt = new Date(Date.now() - 86_400_000).toISOString();
  readonly expires = new Date(Date.now() + 365 * 86_400_000).toISOString();
  readonly #db: pg.Client;
  readonly #roots: number;

  /** `db` reaches the platform's database, whose trust service's tables are in schema `trust`. */
  constructor(db: pg.Client, roots = 10) {
    this.#db = db;
    this.#roots = roots;
  }

  /** Adds nodes and their delegations until the graph has `size` synthetic nodes. */
  async growTo(size: number): Promise<void> {
    const added: { id: string; kind: string; document: string }[] = [];
    const edges: ReturnType<SyntheticTrustGraph['edge']>[] = [];
    const written = this.size;
    const kindOf = (index: number, span: number) => (index < this.#roots ? 'root' : index < this.#roots + span / 100 ? 'authority' : 'issuer');
    for (let index = written; index < size; index += 1) {
      this.keys[index] = syntheticKey();
      const kind = index < this.#roots ? 'root' : kindOf(index - written, size - written) === 'issuer' || this.authorities.length >= size / 100 ? 'issuer' : 'authority';
      added.push({ id: `node-${index}`, kind, document: JSON.stringify({ id: `node-${index}`, kind, keys: [{ ...this.keys[index]!.jwk, iat: this.keyIat }] }) });
      if (kind === 'authority') {
        this.authorities.push(index);
        edges.push(this.edge(index % this.#roots, index));
        if (index % 10 === 0) edges.push(this.edge((index + 1) % this.#roots, index));
      } else if (kind === 'issuer') {
        this.issuers.push(index);
        edges.push(this.edge(this.authorities[index % this.authorities.length]!, index));
        if (index % 20 === 0) edges.push(this.edge(this.authorities[(index + 7) % this.authorities.length]!, index));
      }
    }
    for (let start = 0; start < added.length; start += BATCH) {
      const chunk = added.slice(start, start + BATCH);
      await this.#db.query('INSERT INTO trust.trust_node (id, kind, document) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])', [
        chunk.map((node) => node.id),
        chunk.map((node) => node.kind),
        chunk.map((node) => node.document),
      ]);
    }
    for (let start = 0; start < edges.length; start += BATCH) {
      const chunk = edges.slice(start, start + BATCH);
      await this.#db.query('INSERT INTO trust.delegation_edge (id, iss, sub, document) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])', [
        chunk.map((e) => e.id),
        chunk.map((e) => e.iss),
        chunk.map((e) => e.sub),
        chunk.map((e) => JSON.stringify(e)),
      ]);
    }
    this.size = size;
  }

  /** A stored edge as the trust store holds it: the credential, signed JSON, verbatim. */
  private edge(iss: number, sub: number) {
    const claims = { iss: `node-${iss}`, sub: `node-${sub}`, scope: {}, iat: this.issuedAt, exp: this.expires };
    const header = Buffer.from(JSON.stringify({ alg: 'Ed25519', kid: this.keys[iss]!.jwk.kid })).toString('base64url');
    const signingInput = `${header}.${Buffer.from(canonicalize(claims)).toString('base64url')}`;
    const credential = { ...claims, signature: `${header}..${nodeSign(null, Buffer.from(signingInput), this.keys[iss]!.privateKey).toString('base64url')}` };
    const id = createHash('sha256').update(canonicalize(credential)).digest('base64url');
    return { id, iss: claims.iss, sub: claims.sub, scope: claims.scope, iat: this.issuedAt, nbf: this.issuedAt, exp: this.expires, kid: this.keys[iss]!.jwk.kid, credential };
  }
}
