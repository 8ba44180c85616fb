import { generateKeyPairSync, sign as nodeSign, type KeyObject } from 'node:crypto';
import { jwkThumbprint, type PublicJwk, type Signer } from '../../../lib/crypto/index.js';
import { ed25519KeyPair } from '../../support/ed25519.js';

/** A key pair made by Node's crypto (OpenSSL), independent of the @noble/curves code under test. */
export interface TestKey {
  readonly jwk: PublicJwk & { kid: string };
  readonly privateKey: KeyObject;
  readonly signer: Signer;
  sign(data: Uint8Array): Uint8Array;
}

export function ed25519Key(): TestKey {
  const { publicKey, privateKey } = ed25519KeyPair();
  const { kty, crv, x } = publicKey.export({ format: 'jwk' });
  const jwk = { kty: kty as 'OKP', crv, x, kid: '' };
  jwk.kid = jwkThumbprint(jwk);
  const sign = (data: Uint8Array) => new Uint8Array(nodeSign(null, data, privateKey));
  return { jwk, privateKey, sign, signer: { kid: jwk.kid, alg: 'Ed25519', sign } };
}

export function p256Key(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const jwk = { kty: kty as 'EC', crv, x, y, kid: '' };
  jwk.kid = jwkThumbprint(jwk);
  const sign = (data: Uint8Array) => new Uint8Array(nodeSign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
  return { jwk, privateKey, sign, signer: { kid: jwk.kid, alg: 'ES256', sign } };
}

/** Microseconds since the epoch for an RFC 3339 literal, computed without the code under test. */
export function t(text: string): number {
  return Date.parse(text) * 1000;
}
