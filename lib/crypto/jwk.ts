import { sha256 } from '@noble/hashes/sha2.js';
import { encodeBase64Url } from './base64url.js';

/** A public JSON Web Key (RFC 7517) as the keyrings publish it. */
export interface PublicJwk {
  kty: 'OKP' | 'EC' | 'RSA';
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  kid?: string;
  alg?: string;
  use?: string;
  [member: string]: unknown;
}

/** The required members per key type that enter the RFC 7638 thumbprint, in lexicographic order. */
const THUMBPRINT_MEMBERS: Record<PublicJwk['kty'], readonly string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
  RSA: ['e', 'kty', 'n'],
};

/** RFC 7638 JWK thumbprint with SHA-256, base64url encoded. */
export function jwkThumbprint(jwk: PublicJwk): string {
  const members = THUMBPRINT_MEMBERS[jwk.kty];
  if (!members) throw new TypeError(`unsupported key type ${String(jwk.kty)}`);
  const parts = members.map((name) => {
    const value = jwk[name];
    if (typeof value !== 'string') throw new TypeError(`JWK lacks the required member "${name}"`);
    return `${JSON.stringify(name)}:${JSON.stringify(value)}`;
  });
  return encodeBase64Url(sha256(new TextEncoder().encode(`{${parts.join(',')}}`)));
}

/** RFC 8037 OKP key for an Ed25519 public key. */
export function ed25519PublicJwk(publicKey: Uint8Array): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(publicKey) };
}

/** RFC 7518 §6.2 EC key for an uncompressed P-256 public key (0x04 || X || Y). */
export function p256PublicJwk(publicKey: Uint8Array): PublicJwk {
  if (publicKey.length !== 65 || publicKey[0] !== 0x04) throw new TypeError('expected an uncompressed P-256 point');
  return {
    kty: 'EC',
    crv: 'P-256',
    x: encodeBase64Url(publicKey.subarray(1, 33)),
    y: encodeBase64Url(publicKey.subarray(33, 65)),
  };
}

/**
 * Why a key of a published keyring (lib/keys/key-store.ts: `iat`, `exp`, `revoked.revoked_at`, NumericDate)
 * was not in force at `at` seconds, or undefined when it was. A revocation without a time counts
 * from the start.
 */
export function keyOutOfForce(key: PublicJwk, at: number): 'not_yet_issued' | 'retired' | 'revoked' | undefined {
  const revoked = key.revoked as { revoked_at?: unknown } | undefined;
  if (typeof key.iat === 'number' && at < key.iat) return 'not_yet_issued';
  if (typeof key.exp === 'number' && at >= key.exp) return 'retired';
  if (revoked !== undefined && (typeof revoked.revoked_at !== 'number' || at >= revoked.revoked_at)) return 'revoked';
  return undefined;
}
