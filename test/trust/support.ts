/**
 * Independent makers for the end-to-end trust tests: keys from Node's crypto (OpenSSL), delegation
 * credentials from jose, cosignatures from Node's crypto. None of the service's own code signs.
 */
import { createHash, generateKeyPairSync, sign as nodeSign, type KeyObject } from 'node:crypto';
import * as jose from 'jose';
import { canonicalize } from '../../lib/crypto/jcs.js';
import { ed25519KeyPair } from '../support/ed25519.js';

export interface Key {
  /** Public JWK with its RFC 7638 thumbprint as kid. */
  readonly jwk: jose.JWK & { kid: string };
  readonly privateKey: KeyObject;
  readonly alg: 'Ed25519' | 'ES256';
  /** Raw signature: Ed25519, or ES256 as r||s. */
  sign(data: Uint8Array): Buffer;
}

export async function newKey(kind: 'Ed25519' | 'P-256' = 'Ed25519'): Promise<Key> {
  const { publicKey, privateKey } = kind === 'Ed25519' ? ed25519KeyPair() : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const exported = publicKey.export({ format: 'jwk' }) as jose.JWK;
  const jwk = { ...exported, kid: thumbprint(exported) };
  const alg = kind === 'Ed25519' ? 'Ed25519' : 'ES256';
  const sign = (data: Uint8Array) => (alg === 'Ed25519' ? nodeSign(null, data, privateKey) : nodeSign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
  return { jwk, privateKey, alg, sign };
}

/**
 * The RFC 7638 thumbprint (SHA-256) of a public OKP or EC JWK: its required members in lexicographic
 * order, hashed by Node's crypto at once (jose's calculateJwkThumbprint gives the same value through
 * an asynchronous WebCrypto digest, which costs more than the hash when thousands of keys are made).
 */
function thumbprint(jwk: jose.JWK): string {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/** NumericDate of a Date or of now, for key lifetimes. */
export const seconds = (date: Date = new Date()) => Math.floor(date.getTime() / 1000);

/** An RFC 3339 instant `offset` milliseconds from now. */
export const fromNow = (offset: number) => new Date(Date.now() + offset).toISOString();

export const DAY = 86_400_000;

/**
 * The key jose signs with for `alg`: jose 6 signs through WebCrypto and turns a KeyObject into a
 * CryptoKey at every signature (about 0.3 ms, three quarters of an Ed25519 signature's cost), so each
 * key's CryptoKey is imported once (by jose) and kept. Another alg gets the KeyObject, as before.
 */
const cryptoKeys = new WeakMap<KeyObject, Promise<jose.CryptoKey>>();
function signingKey(key: Key, alg: unknown): Promise<jose.CryptoKey | KeyObject> {
  if (alg !== key.alg) return Promise.resolve(key.privateKey);
  let imported = cryptoKeys.get(key.privateKey);
  if (!imported) {
    imported = jose.importJWK(key.privateKey.export({ format: 'jwk' }) as jose.JWK, key.alg) as Promise<jose.CryptoKey>;
    cryptoKeys.set(key.privateKey, imported);
  }
  return imported;
}

/** A compact JWS made by jose. */
export async function compactCredential(claims: Record<string, unknown>, key: Key, header: Record<string, unknown> = {}): Promise<string> {
  const protectedHeader = { alg: key.alg, kid: key.jwk.kid, ...header };
  return new jose.CompactSign(new TextEncoder().encode(JSON.stringify(claims))).setProtectedHeader(protectedHeader).sign(await signingKey(key, protectedHeader.alg));
}

/** Signed JSON made by jose: the claims plus a detached JWS (RFC 7515 appendix F) over their JCS form. */
export async function signedJsonCredential(claims: Record<string, unknown>, key: Key): Promise<Record<string, unknown>> {
  const jws = await new jose.FlattenedSign(new TextEncoder().encode(canonicalize(claims))).setProtectedHeader({ alg: key.alg, kid: key.jwk.kid }).sign(await signingKey(key, key.alg));
  return { ...claims, signature: `${jws.protected}..${jws.signature}` };
}

/**
 * A witness cosignature in the C2SP tlog-cosignature shape the service documents: Ed25519 by Node
 * over "cosignature/v1\ntime T\n<origin>\nentry <id>\nsha256 <base64 SHA-256 of the JCS body>\n".
 */
export function cosign(witness: Key, origin: string, entry: { id: string; body: Record<string, unknown> }, time = seconds()) {
  const digest = createHash('sha256').update(canonicalize(entry.body)).digest('base64');
  const message = `cosignature/v1\ntime ${time}\n${origin}\nentry ${entry.id}\nsha256 ${digest}\n`;
  return { kid: witness.jwk.kid, time, signature: witness.sign(Buffer.from(message)).toString('base64url') };
}

/** The JCS bytes a quorum signs to attest a revocation, built independently. */
export function revocationStatement(subject: string, reason: string, effectiveAt: string): Buffer {
  return Buffer.from(canonicalize({ effective_at: effectiveAt, reason, subject }));
}
