/**
 * COSE_Sign1 (RFC 9052 §4.2) with ES256 (RFC 9053 §2.1), as the EU Digital COVID Certificate
 * carries its payload: protected header {1: -7, 4: kid}, empty unprotected header, CBOR tag 18,
 * signature r || s over Sig_structure ["Signature1", protected, h'', payload].
 */
import { decode, encode, rfc8949EncodeOptions } from 'cborg';
import { normalizeAlgorithm, publicKeyFromJwk, verifyBytes, type KeyResolver, type Signer } from '../../crypto/index.js';

/** Deterministic RFC 8949 CBOR (§4.2.1: shortest forms, map keys in bytewise order); maps keep integer keys. */
export function encodeCbor(value: unknown): Uint8Array {
  return encode(value, { ...rfc8949EncodeOptions, useMaps: true } as typeof rfc8949EncodeOptions);
}

/** A CBOR tag and the data item it encloses (RFC 8949 §3.4). */
export class CborTag {
  constructor(
    readonly tag: number,
    readonly value: unknown,
  ) {}
}

const COSE_TAGS: ((inner: unknown) => unknown)[] = [];

/** Decodes CBOR with maps as Maps; tag 18 becomes a CborTag, any other tag and duplicate map keys are refused. */
export function decodeCbor(bytes: Uint8Array): unknown {
  return decode(bytes, { useMaps: true, rejectDuplicateMapKeys: true, tags: COSE_TAGS });
}

export const COSE_SIGN1_TAG = 18;
COSE_TAGS[COSE_SIGN1_TAG] = (inner) => new CborTag(COSE_SIGN1_TAG, inner);
/** The initial byte of tag 18: major type 6 with the tag number in its low five bits. */
const COSE_SIGN1_TAG_BYTE = 0xc0 | COSE_SIGN1_TAG;
const HEADER_ALG = 1;
const HEADER_CRIT = 2;
const HEADER_KID = 4;
const ALG_ES256 = -7;

export function encodeCoseSign1(payload: Uint8Array, signer: Signer): Uint8Array {
  if (normalizeAlgorithm(signer.alg) !== 'ES256') throw new TypeError(`COSE carrier signatures use ES256, not ${signer.alg}`);
  const protectedHeader = encodeCbor(
    new Map<number, unknown>([
      [HEADER_ALG, ALG_ES256],
      [HEADER_KID, new TextEncoder().encode(signer.kid)],
    ]),
  );
  const signature = signer.sign(sigStructure(protectedHeader, payload));
  const message = encodeCbor([protectedHeader, new Map(), payload, signature]);
  const tagged = new Uint8Array(message.length + 1);
  tagged[0] = COSE_SIGN1_TAG_BYTE;
  tagged.set(message, 1);
  return tagged;
}

/** The bytes an ES256 COSE_Sign1 signature covers (RFC 9052 §4.4), with empty external AAD. */
export function sigStructure(protectedHeader: Uint8Array, payload: Uint8Array): Uint8Array {
  return encodeCbor(['Signature1', protectedHeader, new Uint8Array(0), payload]);
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
  const message = decodeCbor(bytes);
  if (!(message instanceof CborTag) || message.tag !== COSE_SIGN1_TAG) throw new TypeError('not a tagged COSE_Sign1 (tag 18)');
  const parts = message.value as unknown;
  if (!Array.isArray(parts) || parts.length !== 4) throw new TypeError('a COSE_Sign1 is an array of four');
  const [protectedHeader, unprotected, payload, signature] = parts as unknown[];
  if (!(protectedHeader instanceof Uint8Array) || !(payload instanceof Uint8Array) || !(signature instanceof Uint8Array)) {
    throw new TypeError('COSE_Sign1 protected header, payload and signature must be byte strings');
  }
  if (!(unprotected instanceof Map) || unprotected.size !== 0) throw new TypeError('the unprotected header must be empty');
  const header = decodeCbor(protectedHeader);
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
