import { decodeBase64Url, encodeBase64Url } from './base64url.js';
import { canonicalBytes } from './jcs.js';
import type { PublicJwk } from './jwk.js';
import { normalizeAlgorithm, publicKeyFromJwk, signBytes, verifyBytes, verifyBytesAsync, type SigningAlgorithm } from './signature.js';

/** Something that can sign under a published key: a key store's current key, or a test key. */
export interface Signer {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  sign(data: Uint8Array): Uint8Array;
}

export function rawKeySigner(alg: SigningAlgorithm, kid: string, secretKey: Uint8Array): Signer {
  return { kid, alg, sign: (data) => signBytes(alg, secretKey, data) };
}

export interface JwsHeader {
  alg: string;
  kid?: string;
  [member: string]: unknown;
}

/** Finds the public key a header names; undefined when the key is not known. */
export type KeyResolver = (header: JwsHeader) => PublicJwk | undefined;

export type JwsFailure = 'MALFORMED' | 'UNSUPPORTED_ALGORITHM' | 'UNKNOWN_KEY' | 'BAD_SIGNATURE';

export class JwsError extends Error {
  constructor(
    readonly reason: JwsFailure,
    message: string,
  ) {
    super(message);
    this.name = 'JwsError';
  }
}

export interface VerifiedJws<T = Uint8Array> {
  header: JwsHeader;
  payload: T;
  key: PublicJwk;
}

/** Compact JWS with the payload detached (RFC 7515 appendix F): `header..signature`. */
export function signDetached(payload: Uint8Array, signer: Signer, extraHeader: Record<string, unknown> = {}): string {
  const header = encodeBase64Url(JSON.stringify({ ...extraHeader, alg: signer.alg, kid: signer.kid }));
  const signature = signer.sign(new TextEncoder().encode(`${header}.${encodeBase64Url(payload)}`));
  return `${header}..${encodeBase64Url(signature)}`;
}

export function verifyDetached(jws: string, payload: Uint8Array, resolveKey: KeyResolver): VerifiedJws {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') throw new JwsError('MALFORMED', 'a detached JWS has the form header..signature');
  return verifyParts(parts[0]!, encodeBase64Url(payload), parts[2]!, resolveKey, payload);
}

/**
 * verifyDetached with the signature check on libuv's thread pool (Ed25519), for callers that check
 * many signatures at once; rejects with the same JwsError verifyDetached throws.
 */
export async function verifyDetachedAsync(jws: string, payload: Uint8Array, resolveKey: KeyResolver): Promise<VerifiedJws> {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') throw new JwsError('MALFORMED', 'a detached JWS has the form header..signature');
  const checked = checkParts(parts[0]!, encodeBase64Url(payload), parts[2]!, resolveKey, payload);
  if (!(await verifyBytesAsync(checked.alg, checked.publicKey, checked.signingInput, checked.signature))) throw badSignature(checked.header);
  return { header: checked.header, payload: checked.payload, key: checked.key };
}

export function verifyCompact(jws: string, resolveKey: KeyResolver): VerifiedJws {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] === '') throw new JwsError('MALFORMED', 'a compact JWS has the form header.payload.signature');
  return verifyParts(parts[0]!, parts[1]!, parts[2]!, resolveKey);
}

/** Reads a JWS protected header without verifying anything, e.g. to find which key it names. */
export function readProtectedHeader(jws: string): JwsHeader {
  const encoded = jws.split('.')[0] ?? '';
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(decodeBase64Url(encoded)));
  } catch {
    throw new JwsError('MALFORMED', 'the JWS protected header is not base64url-encoded JSON');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header) || typeof (header as JwsHeader).alg !== 'string') {
    throw new JwsError('MALFORMED', 'the JWS protected header has no "alg"');
  }
  return header as JwsHeader;
}

function verifyParts(encodedHeader: string, encodedPayload: string, encodedSignature: string, resolveKey: KeyResolver, detachedPayload?: Uint8Array): VerifiedJws {
  const checked = checkParts(encodedHeader, encodedPayload, encodedSignature, resolveKey, detachedPayload);
  if (!verifyBytes(checked.alg, checked.publicKey, checked.signingInput, checked.signature)) throw badSignature(checked.header);
  return { header: checked.header, payload: checked.payload, key: checked.key };
}

/**
 * Everything but the signature itself: header, algorithm, key, and the bytes the signature covers.
 * A detached payload is passed as the bytes the caller has, rather than decoded back.
 */
function checkParts(encodedHeader: string, encodedPayload: string, encodedSignature: string, resolveKey: KeyResolver, detachedPayload?: Uint8Array) {
  const header = readProtectedHeader(encodedHeader);
  if (Array.isArray(header.crit) && header.crit.length > 0) {
    throw new JwsError('MALFORMED', `unsupported critical header parameters: ${header.crit.join(', ')}`);
  }
  const alg = normalizeAlgorithm(header.alg);
  if (!alg) throw new JwsError('UNSUPPORTED_ALGORITHM', `algorithm ${String(header.alg)} is not accepted`);
  const key = resolveKey(header);
  if (!key) throw new JwsError('UNKNOWN_KEY', `no known key has kid ${String(header.kid)}`);
  const publicKey = publicKeyFromJwk(alg, key);
  if (!publicKey) throw new JwsError('UNKNOWN_KEY', `key ${String(header.kid)} is not a ${alg} key`);
  let payload: Uint8Array;
  let signature: Uint8Array;
  try {
    payload = detachedPayload ?? decodeBase64Url(encodedPayload);
    signature = decodeBase64Url(encodedSignature);
  } catch {
    throw new JwsError('MALFORMED', 'the JWS payload or signature is not base64url');
  }
  const signingInput = new TextEncoder().encode(`${encodedHeader}.${encodedPayload}`);
  return { header, alg: alg as SigningAlgorithm, key, publicKey, payload, signature, signingInput };
}

function badSignature(header: JwsHeader): JwsError {
  return new JwsError('BAD_SIGNATURE', `the signature does not verify under key ${String(header.kid)}`);
}

/** A JSON document signed in place: its plain members plus `signature` (DESIGN §3). */
export type SignedJson<T extends object> = T & { signature: string };

/** Signs the RFC 8785 canonical form of the document without its `signature` member. */
export function signJson<T extends object>(document: T, signer: Signer): SignedJson<T> {
  const { signature: _ignored, ...plain } = document as T & { signature?: unknown };
  return { ...(plain as T), signature: signDetached(canonicalBytes(plain), signer) };
}

export function verifyJson(document: unknown, resolveKey: KeyResolver): VerifiedJws<Record<string, unknown>> {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new JwsError('MALFORMED', 'signed JSON must be an object');
  }
  const { signature, ...plain } = document as Record<string, unknown>;
  if (typeof signature !== 'string') throw new JwsError('MALFORMED', 'signed JSON has no "signature" string member');
  const verified = verifyDetached(signature, canonicalBytes(plain), resolveKey);
  return { ...verified, payload: plain };
}

/** Resolves keys from a JWK Set by `kid`. */
export function keySetResolver(keys: readonly PublicJwk[]): KeyResolver {
  return (header) => keys.find((key) => key.kid !== undefined && key.kid === header.kid);
}
