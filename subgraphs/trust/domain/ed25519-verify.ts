/**
 * Ed25519 verification for hot paths (master-list verdicts re-verify every cosignature on every
 * read), through Node's native crypto (OpenSSL) with one cached KeyObject per key.
 * bench/trust-ed25519.ts measured it about 18 times faster than @noble/curves here.
 *
 * Both are RFC 8032 verifiers and agree on everything an honest signer produces. They differ
 * only where RFC 8032 leaves a choice: @noble/curves checks the cofactored equation
 * [8][S]B = [8]R + [8][k]A, OpenSSL the cofactorless [S]B = R + [k]A, which accepts a subset
 * (it refuses an R crafted with a small-order component). Both refuse S >= L and non-canonical
 * R. The remaining difference, keys of small order or in non-canonical encoding, is closed here:
 * such keys are refused before OpenSSL ever sees them. So whatever this accepts, the strict
 * @noble/curves check (lib/crypto verifyBytes) accepts too.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { decodeBase64Url } from '../../../lib/crypto/index.js';

const CACHE_LIMIT = 4096;
const keyObjects = new Map<string, KeyObject | null>();

function keyObjectOf(x: string): KeyObject | null {
  let keyObject = keyObjects.get(x);
  if (keyObject !== undefined) return keyObject;
  try {
    const raw = decodeBase64Url(x);
    const usable = raw.length === 32 && !ed25519.Point.fromBytes(raw, false).isSmallOrder();
    keyObject = usable ? createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x } }) : null;
  } catch {
    keyObject = null;
  }
  // Witness sets are small; the bound only keeps a stream of distinct junk keys from growing it.
  if (keyObjects.size >= CACHE_LIMIT) keyObjects.clear();
  keyObjects.set(x, keyObject);
  return keyObject;
}

/** Verifies an Ed25519 signature under the public key given as its JWK `x` (base64url). */
export function verifyEd25519(x: string, message: Uint8Array, signature: Uint8Array): boolean {
  const keyObject = keyObjectOf(x);
  if (!keyObject || signature.length !== 64) return false;
  try {
    return verify(null, message, keyObject, signature);
  } catch {
    return false;
  }
}
