import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { ed25519PublicKey, p256PublicKey, signEd25519, verifyEd25519, verifyEd25519Async } from '../platform/primitives.js';
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

/**
 * Signs raw bytes: Ed25519 through the platform's primitives (OpenSSL in Node); ES256 signatures are
 * r || s (64 bytes) over SHA-256 of the data, as JOSE and COSE both use them.
 */
export function signBytes(alg: SigningAlgorithm, secretKey: Uint8Array, data: Uint8Array): Uint8Array {
  if (alg === 'Ed25519') {
    if (secretKey.length !== 32) throw new RangeError('an Ed25519 secret key has 32 bytes');
    return signEd25519(secretKey, data);
  }
  return p256.sign(data, secretKey, { prehash: true });
}

/**
 * The public key of a secret key (Ed25519: 32 bytes; ES256: the uncompressed point, 65 bytes), computed
 * by the platform's primitives (OpenSSL in Node). The same answers as @noble/curves' getPublicKey (the
 * tests hold them equal), which also sets the rule for an ES256 secret: a scalar of 32 bytes in 1..n-1.
 */
export function publicKeyOf(alg: SigningAlgorithm, secretKey: Uint8Array): Uint8Array {
  if (alg === 'Ed25519') {
    if (secretKey.length !== 32) throw new RangeError('an Ed25519 secret key has 32 bytes');
    return ed25519PublicKey(secretKey);
  }
  if (!p256.utils.isValidSecretKey(secretKey)) throw new RangeError('an ES256 secret key is a scalar of 32 bytes in 1..n-1');
  return p256PublicKey(secretKey);
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

/**
 * Verifies a raw signature. Ed25519 as RFC 8032 strictly reads it (the cofactorless equation, S < L,
 * canonical R and key), keys of small order refused: through OpenSSL in Node (lib/platform), so
 * whatever verifies @noble/curves' strict mode accepts too. ES256 accepts high-S signatures as
 * WebCrypto makes them.
 */
export function verifyBytes(alg: SigningAlgorithm, publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (alg === 'Ed25519') return publicKey.length === 32 && signature.length === 64 && verifyEd25519(publicKey, data, signature);
    return p256.verify(signature, data, publicKey, { prehash: true, lowS: false });
  } catch {
    return false;
  }
}

/**
 * verifyBytes, with Ed25519 off the caller's thread where the platform can (libuv's thread pool in
 * Node), so that many signatures (a long event log) are checked on every core. Same rules, same answers.
 */
export function verifyBytesAsync(alg: SigningAlgorithm, publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (alg !== 'Ed25519' || publicKey.length !== 32 || signature.length !== 64) return Promise.resolve(verifyBytes(alg, publicKey, data, signature));
  return verifyEd25519Async(publicKey, data, signature);
}
