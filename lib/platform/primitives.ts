/**
 * The primitives the platform's formats rest on, taken from Node where it does them faster than
 * JavaScript: Ed25519 through OpenSSL, SHA-256, base64url, zlib. Every rule that uses them (JWS,
 * COSE, packs, event logs, delegations, the offline verifier) is written once, above this module.
 *
 * The verification page runs those same rules in a browser, where none of this exists: its build
 * (rest-facade/verify-page.ts) puts `primitives.browser.ts` in this module's place, the same
 * functions with the same answers over @noble/curves, @noble/hashes and pako
 * (test/lib/primitives.test.ts holds the two to each other).
 */
import { createPrivateKey, createPublicKey, hash, sign as signWithOpenSsl, verify as verifyWithOpenSsl, type KeyObject } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import { ed25519 } from '@noble/curves/ed25519.js';
import { hexToBytes } from '@noble/hashes/utils.js';

/** RFC 4648 §5 base64url without padding of the bytes (a string: of its UTF-8 bytes). */
export function encodeBase64Url(bytes: Uint8Array | string): string {
  return (typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('base64url');
}

/** The bytes of base64url text the caller has checked (lib/crypto/base64url.ts). */
export function decodeBase64UrlChecked(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64url'));
}

/**
 * Node's one-shot SHA-256 (OpenSSL): three times faster than a JavaScript one on log-sized inputs,
 * and without the Hash object a Merkle verdict would otherwise make for each of its ~3n hashes.
 */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  const digest = hash('sha256', parts.length === 1 ? parts[0]! : Buffer.concat(parts), 'buffer');
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
}

/** zlib (RFC 1950) inflate; throws when the data is not zlib or inflates to more than `maxOutputLength` bytes. */
export function inflateZlib(bytes: Uint8Array, maxOutputLength: number): Uint8Array {
  return new Uint8Array(inflateSync(bytes, { maxOutputLength }));
}

/** zlib (RFC 1950) deflate at level 9. */
export function deflateZlib(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(deflateSync(bytes, { level: 9 }));
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
 * An Ed25519 signature (a 32-byte secret key). Ed25519 signatures are deterministic (RFC 8032), so
 * OpenSSL's are byte for byte @noble/curves' (the tests hold them equal); OpenSSL is about twenty
 * times faster, which every event append (event and log head) feels.
 */
export function signEd25519(secretKey: Uint8Array, data: Uint8Array): Uint8Array {
  return new Uint8Array(signWithOpenSsl(null, data, ed25519PrivateKeyObject(secretKey)));
}

/**
 * The public key of an Ed25519 secret key, computed by OpenSSL: @noble/curves would first build
 * its tables for the curve, some 0.1 s of CPU, at every start that opens its keys.
 */
export function ed25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return new Uint8Array(createPublicKey(ed25519PrivateKeyObject(secretKey)).export({ format: 'der', type: 'spki' }).subarray(-32));
}

/** DER of a SEC 1 ECPrivateKey on P-256 (RFC 5915) without its optional public key: the 32 scalar bytes go between. */
const P256_SEC1_PREFIX = hexToBytes('30310201010420');
const P256_SEC1_SUFFIX = hexToBytes('a00a06082a8648ce3d030107');

/** The uncompressed point (65 bytes) of a P-256 scalar the caller has checked, computed by OpenSSL as above. */
export function p256PublicKey(secretKey: Uint8Array): Uint8Array {
  const key = createPrivateKey({ key: Buffer.concat([P256_SEC1_PREFIX, secretKey, P256_SEC1_SUFFIX]), format: 'der', type: 'sec1' });
  return new Uint8Array(createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-65));
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
 * Verifies an Ed25519 signature (32-byte key, 64-byte signature, as the caller has checked) through
 * OpenSSL, about fifteen times faster than pure JavaScript on the hot paths (event logs, witness
 * cosignatures). OpenSSL checks RFC 8032's cofactorless equation and refuses S >= L and
 * non-canonical R; keys of small order or in non-canonical encoding are refused first.
 */
export function verifyEd25519(publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  const key = ed25519KeyObject(publicKey);
  return key !== null && verifyWithOpenSsl(null, data, key, signature);
}

/** verifyEd25519 on libuv's thread pool (Node's asynchronous crypto.verify), so that a long event log is checked on every core. */
export function verifyEd25519Async(publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const key = ed25519KeyObject(publicKey);
  if (key === null) return Promise.resolve(false);
  return new Promise((resolve) => verifyWithOpenSsl(null, data, key, signature, (error, valid) => resolve(!error && valid)));
}
