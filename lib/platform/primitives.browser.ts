/**
 * primitives.ts for a browser: the verification page's build (rest-facade/verify-page.ts) puts this
 * module in its place, so that the page runs the platform's own rules (lib/crypto, lib/formats,
 * verifier/) unchanged. The same functions with the same answers, over @noble/curves,
 * @noble/hashes and pako (a port of zlib) instead of OpenSSL, Buffer and Node's zlib
 * (test/lib/primitives.test.ts holds the two to each other, test/verifier/one-verifier.test.ts the
 * verdicts built on them).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { bytesToNumberLE, equalBytes } from '@noble/curves/utils.js';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { deflate, Inflate } from 'pako';

export function encodeBase64Url(bytes: Uint8Array | string): string {
  const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  let binary = '';
  for (const byte of data) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function decodeBase64UrlChecked(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
}

export function sha256(...parts: Uint8Array[]): Uint8Array {
  return nobleSha256(parts.length === 1 ? parts[0]! : concatBytes(...parts));
}

/** zlib's own inflate as pako ports it, zlib streams only (no gzip), stopped as soon as the output passes the bound. */
export function inflateZlib(bytes: Uint8Array, maxOutputLength: number): Uint8Array {
  const inflator = new Inflate({ windowBits: 15 });
  const chunks: Uint8Array[] = [];
  let length = 0;
  inflator.onData = (chunk) => {
    length += chunk.length;
    if (length > maxOutputLength) throw new RangeError(`more than ${maxOutputLength} bytes inflated`);
    chunks.push(chunk);
  };
  inflator.push(bytes, true);
  if (inflator.err) throw new Error(inflator.msg);
  if (!inflator.ended) throw new Error('unexpected end of file');
  return concatBytes(...chunks);
}

export function deflateZlib(bytes: Uint8Array): Uint8Array {
  return deflate(bytes, { level: 9 });
}

export function signEd25519(secretKey: Uint8Array, data: Uint8Array): Uint8Array {
  return ed25519.sign(data, secretKey);
}

export function ed25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(secretKey);
}

export function p256PublicKey(secretKey: Uint8Array): Uint8Array {
  return p256.getPublicKey(secretKey, false);
}

const { Point } = ed25519;

/**
 * OpenSSL's Ed25519 verification, step for step: a canonical key not of small order (as Node's side
 * checks first), S < L, and the cofactorless equation checked as OpenSSL does, by encoding
 * [S]B - [k]A and comparing it with R's bytes (so a non-canonical R never verifies). @noble/curves'
 * own verify checks the cofactored equation, which also admits an R with a small-order part.
 */
export function verifyEd25519(publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  let key: InstanceType<typeof Point>;
  try {
    key = Point.fromBytes(publicKey, false);
  } catch {
    return false;
  }
  const r = signature.subarray(0, 32);
  const s = bytesToNumberLE(signature.subarray(32));
  if (key.isSmallOrder() || s >= Point.Fn.ORDER) return false;
  const k = Point.Fn.create(bytesToNumberLE(sha512(concatBytes(r, publicKey, data))));
  return equalBytes(Point.BASE.multiplyUnsafe(s).subtract(key.multiplyUnsafe(k)).toBytes(), r);
}

export function verifyEd25519Async(publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  return Promise.resolve(verifyEd25519(publicKey, data, signature));
}
