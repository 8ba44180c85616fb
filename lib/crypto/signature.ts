import { createPrivateKey, createPublicKey, sign as signWithOpenSsl, verify as verifyWithOpenSsl, type KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
// Not Buffer: this module is evaluated in the verification page too (through lib/formats).
import { hexToBytes } from '@noble/hashes/utils.js';
import { decodeBase64Url } from './base64url.js';
import type { PublicJwk } from './jwk.js';

/** JOSE algorithm names this platform signs with: Ed25519 (RFC 9864) for data, ES256 for carriers. */
export type SigningAlgorithm = 'Ed25519' | 'ES256';

/** Accepts the fully specified RFC 9864 name and the older polymorphic `EdDSA`. */
export function normalizeAlgorithm(alg: unknown): SigningAlgorithm | undefined {
  if (alg === 'Ed25519' || alg === 'EdDSA') return 'Ed25519';
  if (alg === 'ES256') return 'ES256';
  return undefined;
}

/** DER prefix of an Ed25519 PKCS #8 private key (RFC 8410): the 32 seed bytes follow it. */
const ED25519_PKCS8_PREFIX = hexToBytes('302e020100300506032b657004220420');
/** OpenSSL key objects by the secret key array itself, so no copy of the secret is kept as a string. */
const ed25519PrivateKeyObjects = new WeakMap<Uint8Array, KeyObject>();

function ed25519PrivateKeyObject(secretKey: Uint8Array): KeyObject {
  let key = ed25519PrivateKeyObjects.get(secretKey);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, secretKey]), format: 'der', type: 'pkcs8' });
    ed25519PrivateKeyObjects.set(secretKey, key);
  }
  return key;
}

/**
 * Signs raw bytes. Ed25519 signatures are deterministic (RFC 8032), so OpenSSL's are byte for byte
 * @noble/curves' (the tests hold them equal); OpenSSL is about twenty times faster, which every
 * event append (event and log head) feels. ES256 signatures are r || s (64 bytes) over SHA-256 of
 * the data, as JOSE and COSE both use them.
 */
export function signBytes(alg: SigningAlgorithm, secretKey: Uint8Array, data: Uint8Array): Uint8Array {
  if (alg === 'Ed25519') {
    if (secretKey.length !== 32) throw new RangeError('an Ed25519 secret key has 32 bytes');
    return new Uint8Array(signWithOpenSsl(null, data, ed25519PrivateKeyObject(secretKey)));
  }
  return p256.sign(data, secretKey, { prehash: true });
}

/** DER of a SEC 1 ECPrivateKey on P-256 (RFC 5915) without its optional public key: the 32 scalar bytes go between. */
const P256_SEC1_PREFIX = hexToBytes('30310201010420');
const P256_SEC1_SUFFIX = hexToBytes('a00a06082a8648ce3d030107');

/**
 * The public key of a secret key (Ed25519: 32 bytes; ES256: the uncompressed point, 65 bytes), computed
 * by OpenSSL: @noble/curves would first build its tables for the curve, some 0.1 s of CPU each, at every
 * start that opens its keys. The same answers as @noble/curves' getPublicKey (the tests hold them equal),
 * which also sets the rule for an ES256 secret: a scalar of 32 bytes in 1..n-1.
 */
export function publicKeyOf(alg: SigningAlgorithm, secretKey: Uint8Array): Uint8Array {
  if (alg === 'Ed25519') {
    if (secretKey.length !== 32) throw new RangeError('an Ed25519 secret key has 32 bytes');
    return new Uint8Array(createPublicKey(ed25519PrivateKeyObject(secretKey)).export({ format: 'der', type: 'spki' }).subarray(-32));
  }
  if (!p256.utils.isValidSecretKey(secretKey)) throw new RangeError('an ES256 secret key is a scalar of 32 bytes in 1..n-1');
  const key = createPrivateKey({ key: Buffer.concat([P256_SEC1_PREFIX, secretKey, P256_SEC1_SUFFIX]), format: 'der', type: 'sec1' });
  return new Uint8Array(createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-65));
}

export function generateSecretKey(alg: SigningAlgorithm): Uint8Array {
  return alg === 'Ed25519' ? ed25519.utils.randomSecretKey() : p256.utils.randomSecretKey();
}

/** Raw public key bytes of a JWK, or undefined when the JWK is not of the algorithm's type. */
export function publicKeyFromJwk(alg: SigningAlgorithm, jwk: PublicJwk): Uint8Array | undefined {
  try {
    if (alg === 'Ed25519' && jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string') {
      const x = decodeBase64Url(jwk.x);
      return x.length === 32 ? x : undefined;
    }
    if (alg === 'ES256' && jwk.kty === 'EC' && jwk.crv === 'P-256' && typeof jwk.x === 'string' && typeof jwk.y === 'string') {
      const x = decodeBase64Url(jwk.x);
      const y = decodeBase64Url(jwk.y);
      if (x.length !== 32 || y.length !== 32) return undefined;
      const point = new Uint8Array(65);
      point[0] = 0x04;
      point.set(x, 1);
      point.set(y, 33);
      return point;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32 key bytes follow it. */
const ED25519_SPKI_PREFIX = hexToBytes('302a300506032b6570032100');
const ED25519_KEY_CACHE_LIMIT = 4096;
/** Key objects by hex public key; `null` marks a key refused once (invalid or of small order). */
const ed25519KeyObjects = new Map<string, KeyObject | null>();

function ed25519KeyObject(publicKey: Uint8Array): KeyObject | null {
  const id = Buffer.from(publicKey).toString('hex');
  let key = ed25519KeyObjects.get(id);
  if (key === undefined) {
    try {
      // A key of small order lets anyone forge signatures under it; such keys are refused outright.
      const usable = !ed25519.Point.fromBytes(publicKey, false).isSmallOrder();
      key = usable ? createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }) : null;
    } catch {
      key = null;
    }
    if (ed25519KeyObjects.size >= ED25519_KEY_CACHE_LIMIT) ed25519KeyObjects.delete(ed25519KeyObjects.keys().next().value!);
    ed25519KeyObjects.set(id, key);
  }
  return key;
}

/**
 * Verifies a raw signature. Ed25519 goes through OpenSSL (Node's crypto), about fifteen times faster
 * than pure JavaScript on the hot paths (event logs, witness cosignatures). OpenSSL checks RFC 8032's
 * cofactorless equation and refuses S >= L and non-canonical R; with keys of small order or in
 * non-canonical encoding refused first, whatever it accepts @noble/curves' strict mode accepts too.
 * ES256 accepts high-S signatures as WebCrypto makes them.
 */
export function verifyBytes(alg: SigningAlgorithm, publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (alg === 'Ed25519') {
      if (publicKey.length !== 32 || signature.length !== 64) return false;
      const key = ed25519KeyObject(publicKey);
      return key !== null && verifyWithOpenSsl(null, data, key, signature);
    }
    return p256.verify(signature, data, publicKey, { prehash: true, lowS: false });
  } catch {
    return false;
  }
}

/**
 * verifyBytes, with Ed25519 run on libuv's thread pool (Node's asynchronous crypto.verify), so
 * that many signatures (a long event log) are checked on every core. Same rules, same answers.
 */
export function verifyBytesAsync(alg: SigningAlgorithm, publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (alg !== 'Ed25519' || publicKey.length !== 32 || signature.length !== 64) return Promise.resolve(verifyBytes(alg, publicKey, data, signature));
  const key = ed25519KeyObject(publicKey);
  if (key === null) return Promise.resolve(false);
  return new Promise((resolve) => verifyWithOpenSsl(null, data, key, signature, (error, valid) => resolve(!error && valid)));
}
