/**
 * COSE_Sign1 (RFC 9052 §4.2) with ES256 (RFC 9053 §2.1), as the EU Digital COVID Certificate
 * carries its payload: protected header {1: -7, 4: kid}, empty unprotected header, CBOR tag 18,
 * signature r || s over Sig_structure ["Signature1", protected, h'', payload].
 */
import { Decoder, Encoder, Tag } from 'cbor-x';
import { normalizeAlgorithm, publicKeyFromJwk, verifyBytes, type KeyResolver, type Signer } from '../../../lib/crypto/index.js';

/** Plain RFC 8949 CBOR: maps stay maps (integer keys, no tag 259), byte strings untagged, no records. */
export const cborEncoder = new Encoder({ useRecords: false, mapsAsObjects: false, tagUint8Array: false, variableMapSize: true });
export const cborDecoder = new Decoder({ useRecords: false, mapsAsObjects: false });

export const COSE_SIGN1_TAG = 18;
const HEADER_ALG = 1;
const HEADER_CRIT = 2;
const HEADER_KID = 4;
const ALG_ES256 = -7;

export function encodeCoseSign1(payload: Uint8Array, signer: Signer): Uint8Array {
  if (normalizeAlgorithm(signer.alg) !== 'ES256') throw new TypeError(`COSE carrier signatures use ES256, not ${signer.alg}`);
  const protectedHeader = cborEncoder.encode(
    new Map<number, unknown>([
      [HEADER_ALG, ALG_ES256],
      [HEADER_KID, new TextEncoder().encode(signer.kid)],
    ]),
  );
  const signature = signer.sign(sigStructure(protectedHeader, payload));
  return cborEncoder.encode(new Tag([protectedHeader, new Map(), payload, signature], COSE_SIGN1_TAG));
}

/** The bytes an ES256 COSE_Sign1 signature covers (RFC 9052 §4.4), with empty external AAD. */
export function sigStructure(protectedHeader: Uint8Array, payload: Uint8Array): Uint8Array {
  return cborEncoder.encode(['Signature1', protectedHeader, new Uint8Array(0), payload]);
}

export interface CoseSign1 {
  protected_header: Uint8Array;
  kid: string;
  payload: Uint8Array;
  signature: Uint8Array;
  /** The Sig_structure bytes the signature covers. */
  signed_bytes: Uint8Array;
}

/** Parses a tagged COSE_Sign1 with an ES256 protected header; throws TypeError saying what is wrong. */
export function decodeCoseSign1(bytes: Uint8Array): CoseSign1 {
  const message = cborDecoder.decode(bytes) as unknown;
  if (!(message instanceof Tag) || message.tag !== COSE_SIGN1_TAG) throw new TypeError('not a tagged COSE_Sign1 (tag 18)');
  const parts = message.value as unknown;
  if (!Array.isArray(parts) || parts.length !== 4) throw new TypeError('a COSE_Sign1 is an array of four');
  const [protectedHeader, unprotected, payload, signature] = parts as unknown[];
  if (!(protectedHeader instanceof Uint8Array) || !(payload instanceof Uint8Array) || !(signature instanceof Uint8Array)) {
    throw new TypeError('COSE_Sign1 protected header, payload and signature must be byte strings');
  }
  if (!(unprotected instanceof Map) || unprotected.size !== 0) throw new TypeError('the unprotected header must be empty');
  const header = cborDecoder.decode(protectedHeader) as unknown;
  if (!(header instanceof Map)) throw new TypeError('the protected header is not a map');
  if (header.get(HEADER_ALG) !== ALG_ES256) throw new TypeError('the protected header does not name ES256 (-7)');
  if (header.has(HEADER_CRIT)) throw new TypeError('critical header parameters are not supported');
  const kid = header.get(HEADER_KID) as unknown;
  if (!(kid instanceof Uint8Array)) throw new TypeError('the protected header has no kid');
  let kidText: string;
  try {
    kidText = new TextDecoder('utf-8', { fatal: true }).decode(kid);
  } catch {
    throw new TypeError('the kid is not UTF-8 text');
  }
  return {
    protected_header: new Uint8Array(protectedHeader),
    kid: kidText,
    payload: new Uint8Array(payload),
    signature: new Uint8Array(signature),
    signed_bytes: sigStructure(new Uint8Array(protectedHeader), new Uint8Array(payload)),
  };
}

export type CoseCheck = { ok: true } | { ok: false; reason: 'UNKNOWN_KEY' | 'BAD_SIGNATURE'; message: string };

export function verifyCoseSign1(message: CoseSign1, resolveKey: KeyResolver): CoseCheck {
  const jwk = resolveKey({ alg: 'ES256', kid: message.kid });
  const publicKey = jwk && publicKeyFromJwk('ES256', jwk);
  if (!publicKey) return { ok: false, reason: 'UNKNOWN_KEY', message: `no known P-256 key has kid ${message.kid}` };
  if (message.signature.length !== 64 || !verifyBytes('ES256', publicKey, message.signed_bytes, message.signature)) {
    return { ok: false, reason: 'BAD_SIGNATURE', message: `the COSE signature does not verify under key ${message.kid}` };
  }
  return { ok: true };
}
