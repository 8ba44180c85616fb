/**
 * Verification of detached Ed25519 JWS over JCS documents on Node's native Ed25519 (OpenSSL).
 *
 * It decides exactly what lib/crypto's `verifyJson` decides for Ed25519 (the same header parsing,
 * `crit` rule, key lookup and RFC 8032 strict verification; the tests check agreement case by case)
 * but runs about fifteen times faster, which a verdict over a log of ten thousand events needs.
 */
import { createPublicKey, verify as nodeVerify, type KeyObject } from 'node:crypto';
import {
  canonicalize,
  decodeBase64Url,
  encodeBase64Url,
  normalizeAlgorithm,
  publicKeyFromJwk,
  readProtectedHeader,
  JwsError,
  type JwsHeader,
  type KeyResolver,
} from '../../../lib/crypto/index.js';

export type Ed25519JwsFailure = 'MALFORMED' | 'UNSUPPORTED_ALGORITHM' | 'UNKNOWN_KEY' | 'BAD_SIGNATURE';

export type Ed25519JwsCheck =
  | { ok: true; header: JwsHeader }
  | { ok: false; reason: Ed25519JwsFailure; message: string; header?: JwsHeader };

/** Node key objects by raw public key; keyrings are small, so a bounded map suffices. */
const KEY_OBJECTS = new Map<string, KeyObject>();
const KEY_OBJECT_LIMIT = 256;

function keyObject(publicKey: Uint8Array): KeyObject {
  const x = encodeBase64Url(publicKey);
  let key = KEY_OBJECTS.get(x);
  if (!key) {
    if (KEY_OBJECTS.size >= KEY_OBJECT_LIMIT) KEY_OBJECTS.clear();
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    KEY_OBJECTS.set(x, key);
  }
  return key;
}

/**
 * Checks `jws` (`header..signature`) over the JCS form of `document`. `canonical`, when given,
 * must be `canonicalize(document)`; callers that already have it save the work.
 */
export function verifyEd25519Detached(jws: string, document: unknown, resolveKey: KeyResolver, canonical?: string): Ed25519JwsCheck {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') return { ok: false, reason: 'MALFORMED', message: 'a detached JWS has the form header..signature' };
  let header: JwsHeader;
  try {
    header = readProtectedHeader(jws);
  } catch (error) {
    return { ok: false, reason: 'MALFORMED', message: error instanceof JwsError ? error.message : 'unreadable JWS header' };
  }
  if (Array.isArray(header.crit) && header.crit.length > 0) {
    return { ok: false, reason: 'MALFORMED', message: `unsupported critical header parameters: ${header.crit.join(', ')}`, header };
  }
  if (normalizeAlgorithm(header.alg) !== 'Ed25519') {
    return { ok: false, reason: 'UNSUPPORTED_ALGORITHM', message: `algorithm ${String(header.alg)} is not Ed25519`, header };
  }
  const jwk = resolveKey(header);
  const publicKey = jwk && publicKeyFromJwk('Ed25519', jwk);
  if (!publicKey) return { ok: false, reason: 'UNKNOWN_KEY', message: `no known Ed25519 key has kid ${String(header.kid)}`, header };
  let signature: Uint8Array;
  try {
    signature = decodeBase64Url(parts[2]!);
  } catch {
    return { ok: false, reason: 'MALFORMED', message: 'the JWS signature is not base64url', header };
  }
  const payload = encodeBase64Url(canonical ?? canonicalize(document));
  const signingInput = Buffer.from(`${parts[0]}.${payload}`, 'utf8');
  let valid = false;
  try {
    valid = signature.length === 64 && nodeVerify(null, signingInput, keyObject(publicKey), signature);
  } catch {
    valid = false;
  }
  return valid ? { ok: true, header } : { ok: false, reason: 'BAD_SIGNATURE', message: `the signature does not verify under key ${String(header.kid)}`, header };
}
