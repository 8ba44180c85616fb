import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
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

export function signBytes(alg: SigningAlgorithm, secretKey: Uint8Array, data: Uint8Array): Uint8Array {
  // ES256 signatures are r || s (64 bytes) over SHA-256 of the data, as JOSE and COSE both use them.
  return alg === 'Ed25519' ? ed25519.sign(data, secretKey) : p256.sign(data, secretKey, { prehash: true });
}

export function publicKeyOf(alg: SigningAlgorithm, secretKey: Uint8Array): Uint8Array {
  return alg === 'Ed25519' ? ed25519.getPublicKey(secretKey) : p256.getPublicKey(secretKey, false);
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
 * Verifies a raw signature. Ed25519 follows RFC 8032's strict rules (not ZIP-215) so that this
 * check agrees with OpenSSL and Node's crypto; ES256 accepts high-S signatures as WebCrypto makes them.
 */
export function verifyBytes(alg: SigningAlgorithm, publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (alg === 'Ed25519') return ed25519.verify(signature, data, publicKey, { zip215: false });
    return p256.verify(signature, data, publicKey, { prehash: true, lowS: false });
  } catch {
    return false;
  }
}
