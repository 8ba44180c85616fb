/**
 * Every worked example of docs/FORMATS.md (docs/formats-examples.json, written by
 * `npm run docs:formats` from a running platform) checked by the table's rules with independent
 * code: jose for JWS, node:crypto for hashes and ES256, node:zlib, cborg for CBOR, and the JCS
 * form and Base45 written out here. Nothing of lib/ is imported.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { decode, encode } from 'cborg';
import * as jose from 'jose';
import { describe, expect, it } from 'vitest';
import { base45Decode } from '../support/pack-reader.js';

const examples = JSON.parse(readFileSync(new URL('../../docs/formats-examples.json', import.meta.url), 'utf8'));
type Jwk = jose.JWK & { kid: string; purpose: string };
const keyring = (service: string): Jwk[] => examples.keyrings[service].keys;

/** RFC 8785 for what the examples hold (strings, integers, booleans, null, arrays, objects): keys sorted by UTF-16 code units. */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${jcs((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Signed JSON: `signature` is a detached JWS over the JCS bytes of the other members; returns the header. */
async function verifySignedJson(document: Record<string, unknown>, keys: Jwk[]) {
  const { signature, ...plain } = document;
  const [protectedHeader, empty, sig] = String(signature).split('.');
  expect(empty).toBe('');
  const header = jose.decodeProtectedHeader(String(signature));
  const jwk = keys.find((key) => key.kid === header.kid)!;
  const key = await jose.importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, ...(jwk.y && { y: jwk.y }) }, String(header.alg));
  await jose.flattenedVerify({ protected: protectedHeader!, payload: Buffer.from(jcs(plain)).toString('base64url'), signature: sig! }, key);
  return { header, key: jwk };
}

const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();

/** RFC 6962 MTH over leaf hashes. */
function merkleRoot(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha256(Buffer.alloc(0));
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(Buffer.from([1]), merkleRoot(leaves.slice(0, k)), merkleRoot(leaves.slice(k)));
}

describe('docs/FORMATS.md worked examples', () => {
  it('keys: kid is the RFC 7638 SHA-256 thumbprint in base64url, and each key says its purpose', async () => {
    for (const service of ['trust', 'registry', 'issuer', 'archive']) {
      for (const key of keyring(service)) {
        expect(key.kid).toBe(await jose.calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x, ...(key.y && { y: key.y }) }, 'sha256'));
        expect(key.purpose).toMatch(/^(service|event|carrier|credential|notary)$/);
      }
    }
  });

  it('health: signed JSON by the service key of each service', async () => {
    for (const service of ['trust', 'registry', 'issuer', 'archive']) {
      const { header, key } = await verifySignedJson(examples.health[service], keyring(service));
      expect([header.alg, key.purpose]).toEqual(['Ed25519', 'service']);
    }
  });

  it('events: signed JSON by the event key, hash-chained by lowercase hex SHA-256 of the JCS of the whole previous record', async () => {
    let previous = '0'.repeat(64);
    for (const event of examples.events) {
      const { header, key } = await verifySignedJson(event, keyring('issuer'));
      expect([header.alg, key.purpose, event.kid]).toEqual(['Ed25519', 'event', header.kid]);
      expect(event.prev_hash).toBe(previous);
      previous = createHash('sha256').update(jcs(event)).digest('hex');
    }
  });

  it('log head: signed JSON by the event key; root_hash is the hex RFC 6962 root over leaves SHA-256(0x00 || JCS of each event with its signature)', async () => {
    const head = examples.log_head;
    const { key } = await verifySignedJson(head, keyring('issuer'));
    expect(key.purpose).toBe('event');
    const leaves = examples.events.map((event: unknown) => sha256(Buffer.from([0]), Buffer.from(jcs(event))));
    expect(head.size).toBe(examples.events.length);
    expect(head.root_hash).toBe(merkleRoot(leaves).toString('hex'));
  });

  it('pack: DPP1: + Base45 of zlib of a tagged COSE_Sign1, ES256 by the carrier key, kid as UTF-8 bytes; the embedded log head rebuilds and verifies', async () => {
    const text: string = examples.pack;
    expect(text.startsWith('DPP1:')).toBe(true);
    const cose = decode(inflateSync(base45Decode(text.slice(5))), { useMaps: true, tags: Object.assign([], { 18: (inner: unknown) => ({ tag: 18, inner }) }) }) as {
      tag: number;
      inner: [Uint8Array, Map<number, unknown>, Uint8Array, Uint8Array];
    };
    expect(cose.tag).toBe(18);
    const [protectedBytes, unprotected, payload, signature] = cose.inner;
    expect(unprotected.size).toBe(0);
    const header = decode(protectedBytes, { useMaps: true }) as Map<number, unknown>;
    expect(header.get(1)).toBe(-7);
    const kid = Buffer.from(header.get(4) as Uint8Array).toString('utf8');
    const carrier = keyring('issuer').find((key) => key.kid === kid)!;
    expect(carrier.purpose).toBe('carrier');
    const sigStructure = encode(['Signature1', protectedBytes, new Uint8Array(0), payload]);
    const publicKey = createPublicKey({ key: { kty: carrier.kty, crv: carrier.crv, x: carrier.x, y: carrier.y } as any, format: 'jwk' });
    expect(verify('sha256', sigStructure, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);

    const claims = decode(payload, { useMaps: true }) as Map<number, any>;
    const [size, root] = claims.get(-4) as [number, Uint8Array];
    expect([size, Buffer.from(root).toString('hex')]).toEqual([examples.log_head.size, examples.log_head.root_hash]);
    const [timestamp, headSignature] = claims.get(-8) as [string, string];
    const rebuilt = { passport_id: claims.get(2), size, root_hash: Buffer.from(root).toString('hex'), timestamp, signature: headSignature };
    expect(rebuilt).toEqual(examples.log_head);
    await verifySignedJson(rebuilt, keyring('issuer'));
  });

  it('anchor bundle: signed JSON by the trust service key, carrying the platform root', async () => {
    const { key } = await verifySignedJson(examples.anchor_bundle, keyring('trust'));
    expect(key.purpose).toBe('service');
    expect(examples.anchor_bundle.roots.map((root: { id: string }) => root.id)).toContain('platform');
  });

  it('notarization: signed JSON by the archive notary key over hex SHA-512 digests', async () => {
    const { key } = await verifySignedJson(examples.notarization, keyring('archive'));
    expect(key.purpose).toBe('notary');
    expect(examples.notarization.bag_sha512).toMatch(/^[0-9a-f]{128}$/);
  });

  it('the passport the examples come from is verified with full coverage on a fresh platform', () => {
    expect(examples.verdict.outcome).toBe('verified');
    expect(examples.verdict.coverage).toMatchObject({ checks_run: 12, checks_total: 12 });
  });
});
