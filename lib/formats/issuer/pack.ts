/**
 * The Tier-A pack, after the EU Digital COVID Certificate (HCERT): claims as a CBOR map with
 * integer keys (CWT style, RFC 8392), signed as COSE_Sign1 with the issuer's P-256 carrier key,
 * zlib-compressed (RFC 1950), Base45-encoded (RFC 9285) and prefixed with `DPP1:`. Every character
 * of the result is in the QR alphanumeric set, so it fits a QR code in alphanumeric mode.
 *
 * The QR budget is the maximum number of characters, prefix included. The default, 1134, is the
 * alphanumeric capacity of a version 22 QR code at error correction level M (ISO/IEC 18004
 * table 7).
 */
import type { KeyResolver, Signer } from '../../crypto/index.js';
import { deflateZlib, inflateZlib } from '../../platform/primitives.js';
import { decodeBase45, encodeBase45 } from './base45.js';
import { manifestDigest } from './disclosure.js';
import { capabilityClassClaims, isCapabilityClass, OPTIONAL_CLAIMS, type CapabilityClass, type OptionalClaim } from './capability.js';
import { verifyLogHead, type SignedLogHead } from './checkpoint.js';
import { decodeCbor, decodeCoseSign1, encodeCbor, encodeCoseSign1, verifyCoseSign1 } from './cose.js';
import { IssuerError } from './errors.js';
import type { EventRecord } from './event-log.js';
import { hashFromHex, hashToHex } from './merkle.js';
import { isPassportStatus, type PassportStatus } from './status.js';

export const PACK_PREFIX = 'DPP1:';
export const DEFAULT_QR_BUDGET = 1134;
/** Inflated packs larger than this are refused before CBOR parsing (a decompression bomb guard). */
export const MAX_INFLATED_BYTES = 16 * 1024;

export interface PackClaims {
  /** The issuing service. */
  iss: string;
  /** The passport id. */
  sub: string;
  /** Issue time, seconds since the epoch. */
  iat: number;
  capability_class: CapabilityClass;
  type_ref: { id: string; version: number };
  status: PassportStatus;
  /** The log head the pack was minted against. */
  log: { size: number; root_hash: string };
  /** Canonical GS1 Digital Link of the product. */
  identity?: string;
  /** Hex SHA-256 of the RFC 8785 form of the passport's committed manifest (its config vector, restricted members as digests). */
  manifest_digest?: string;
  last_event?: { seq: number; type: string; recorded_at: string };
  /** The signed log head's timestamp and detached JWS; with sub and log it is the whole head. */
  log_head?: { timestamp: string; signature: string };
}

type ClaimName = keyof PackClaims;

/** The CBOR key of each claim. Positive keys are CWT's registered claims; negative keys are ours. */
export const PACK_CLAIM_KEYS: readonly { claim: ClaimName; key: number; cbor: string; meaning: string }[] = Object.freeze([
  { claim: 'iss', key: 1, cbor: 'tstr', meaning: 'issuer (CWT iss)' },
  { claim: 'sub', key: 2, cbor: 'tstr', meaning: 'passport id (CWT sub)' },
  { claim: 'iat', key: 6, cbor: 'uint', meaning: 'issued at, seconds since the epoch (CWT iat)' },
  { claim: 'capability_class', key: -1, cbor: 'tstr', meaning: 'capability class: "identify", "trace" or "verify-offline"' },
  { claim: 'type_ref', key: -2, cbor: '[tstr, uint]', meaning: 'registry model id and version' },
  { claim: 'status', key: -3, cbor: 'tstr', meaning: 'passport status when minted' },
  { claim: 'log', key: -4, cbor: '[uint, bstr .size 32]', meaning: 'log head: size and RFC 6962 root hash' },
  { claim: 'identity', key: -5, cbor: 'tstr', meaning: 'canonical GS1 Digital Link of the product' },
  { claim: 'manifest_digest', key: -6, cbor: 'bstr .size 32', meaning: 'SHA-256 of the RFC 8785 form of the config vector' },
  { claim: 'last_event', key: -7, cbor: '[uint, tstr, tstr]', meaning: 'latest event: seq, type, recorded_at' },
  { claim: 'log_head', key: -8, cbor: '[tstr, tstr]', meaning: 'signed log head: timestamp and detached JWS' },
]);

/** What the pack is minted from. */
export interface PackSource {
  issuer: string;
  passport: {
    id: string;
    /** Canonical GS1 Digital Link (PassportIdentity.digital_link). */
    identity: string;
    type_ref: { id: string; version: number };
    /** The committed manifest: the config vector, its restricted members as digests in `_sd` (disclosure.ts). */
    config_vector: unknown;
    capability_class: CapabilityClass;
    status: PassportStatus;
  };
  head: SignedLogHead;
  /** The event at head.size - 1; absent for an empty log. */
  last_event?: EventRecord;
  now: Date;
}

/** The claims the passport's capability class calls for, from the current passport and head. */
export function buildPackClaims(source: PackSource): PackClaims {
  const { passport, head, last_event: last } = source;
  if (head.passport_id !== passport.id) invalid(`the log head is for passport ${head.passport_id}`);
  if ((last ? last.seq + 1 : 0) !== head.size || (last && last.passport_id !== passport.id)) {
    invalid(`the last event does not end the log head of size ${head.size}`);
  }
  const optional: Partial<Pick<PackClaims, OptionalClaim>> = {};
  for (const claim of capabilityClassClaims(passport.capability_class)) {
    if (claim === 'identity') optional.identity = passport.identity;
    if (claim === 'manifest_digest') optional.manifest_digest = manifestDigest(passport.config_vector);
    if (claim === 'last_event' && last) optional.last_event = { seq: last.seq, type: last.type, recorded_at: last.recorded_at };
    if (claim === 'log_head') optional.log_head = { timestamp: head.timestamp, signature: head.signature };
  }
  return {
    iss: source.issuer,
    sub: passport.id,
    iat: Math.floor(source.now.getTime() / 1000),
    capability_class: passport.capability_class,
    type_ref: { id: passport.type_ref.id, version: passport.type_ref.version },
    status: passport.status,
    log: { size: head.size, root_hash: head.root_hash },
    ...optional,
  };
}

export interface MintedPack {
  text: string;
  /** Characters, prefix included. */
  size: number;
  budget: number;
  kid: string;
}

/** Signs and encodes the claims; PACK_OVER_BUDGET when the text is longer than `budget`. */
export function mintPack(claims: PackClaims, signer: Signer, budget: number = DEFAULT_QR_BUDGET): MintedPack {
  if (!Number.isSafeInteger(budget) || budget <= PACK_PREFIX.length) {
    throw new IssuerError('INVALID_BUDGET', `a QR budget is a whole number of characters above ${PACK_PREFIX.length}`, { budget });
  }
  if (signer.alg !== 'ES256') {
    throw new IssuerError('WRONG_SIGNING_ALGORITHM', 'the pack carrier signature is ES256', { expected: 'ES256', actual: signer.alg });
  }
  const payload = encodeCbor(claimsToMap(claims));
  const text = PACK_PREFIX + encodeBase45(deflateZlib(encodeCoseSign1(payload, signer)));
  if (text.length > budget) {
    throw new IssuerError('PACK_OVER_BUDGET', `the pack has ${text.length} characters, over the QR budget of ${budget}`, {
      size: text.length,
      budget,
    });
  }
  return { text, size: text.length, budget, kid: signer.kid };
}

export interface DecodedPack {
  claims: PackClaims;
  kid: string;
  /** The COSE_Sign1 parts, for verifiers that check the signature themselves. */
  cose: { protected_header: Uint8Array; payload: Uint8Array; signature: Uint8Array; signed_bytes: Uint8Array };
}

/** Undoes every layer without checking the signature; MALFORMED_PACK says which layer failed. */
export function decodePack(text: string): DecodedPack {
  if (!text.startsWith(PACK_PREFIX)) malformed(`a pack starts with ${PACK_PREFIX}`);
  let compressed: Uint8Array;
  try {
    compressed = decodeBase45(text.slice(PACK_PREFIX.length));
  } catch (error) {
    return malformed(`not Base45: ${(error as Error).message}`);
  }
  let coseBytes: Uint8Array;
  try {
    coseBytes = inflateZlib(compressed, MAX_INFLATED_BYTES);
  } catch {
    return malformed(`not zlib data of at most ${MAX_INFLATED_BYTES} bytes`);
  }
  return decodeInflatedPack(coseBytes);
}

/** The inner layers of a pack, once inflated: COSE_Sign1 and the CBOR claims, unverified. */
function decodeInflatedPack(coseBytes: Uint8Array): DecodedPack {
  let cose: ReturnType<typeof decodeCoseSign1>;
  let claimsMap: unknown;
  try {
    cose = decodeCoseSign1(coseBytes);
    claimsMap = decodeCbor(cose.payload);
  } catch (error) {
    return malformed(`not a COSE_Sign1 over CBOR claims: ${(error as Error).message}`);
  }
  const { kid, ...parts } = cose;
  return { claims: mapToClaims(claimsMap), kid, cose: parts };
}

export type PackCheck =
  | { ok: true; claims: PackClaims; kid: string; log_head_signature: 'verified' | 'absent' }
  | {
      ok: false;
      reason: 'MALFORMED' | 'UNKNOWN_KEY' | 'BAD_SIGNATURE' | 'BAD_LOG_HEAD_SIGNATURE';
      message: string;
      claims?: PackClaims;
      kid?: string;
      /** With BAD_LOG_HEAD_SIGNATURE: why the embedded head did not verify (UNKNOWN_KEY, BAD_SIGNATURE, …). */
      log_head_reason?: string;
    };

/**
 * Decodes and verifies a pack: the ES256 carrier signature under the key its kid names, and for
 * class verify-offline the embedded log head's Ed25519 signature (so `resolveKey` should know both keyrings).
 */
export function verifyPack(text: string, resolveKey: KeyResolver): PackCheck {
  let decoded: DecodedPack;
  try {
    decoded = decodePack(text);
  } catch (error) {
    if (error instanceof IssuerError) return { ok: false, reason: 'MALFORMED', message: error.message };
    throw error;
  }
  const { claims, kid } = decoded;
  const carrier = verifyCoseSign1({ ...decoded.cose, kid }, resolveKey);
  if (!carrier.ok) return { ok: false, reason: carrier.reason, message: carrier.message, claims, kid };
  const head = packLogHead(claims);
  if (!head) return { ok: true, claims, kid, log_head_signature: 'absent' };
  const headCheck = verifyLogHead(head, resolveKey);
  if (!headCheck.ok) return { ok: false, reason: 'BAD_LOG_HEAD_SIGNATURE', log_head_reason: headCheck.reason, message: `the embedded log head does not verify: ${headCheck.message}`, claims, kid };
  return { ok: true, claims, kid, log_head_signature: 'verified' };
}

/** The signed log head a verify-offline pack embeds, whole again: its claims sub and log with log_head. */
export function packLogHead(claims: PackClaims): SignedLogHead | undefined {
  if (!claims.log_head) return undefined;
  return { passport_id: claims.sub, size: claims.log.size, root_hash: claims.log.root_hash, timestamp: claims.log_head.timestamp, signature: claims.log_head.signature };
}

function claimsToMap(claims: PackClaims): Map<number, unknown> {
  checkClaims(claims);
  const values: Record<ClaimName, unknown> = {
    iss: claims.iss,
    sub: claims.sub,
    iat: claims.iat,
    capability_class: claims.capability_class,
    type_ref: [claims.type_ref.id, claims.type_ref.version],
    status: claims.status,
    log: [claims.log.size, hashFromHex(claims.log.root_hash)],
    identity: claims.identity,
    manifest_digest: claims.manifest_digest === undefined ? undefined : hashFromHex(claims.manifest_digest),
    last_event: claims.last_event && [claims.last_event.seq, claims.last_event.type, claims.last_event.recorded_at],
    log_head: claims.log_head && [claims.log_head.timestamp, claims.log_head.signature],
  };
  // RFC 8949 §4.2.1 deterministic order: 1, 2, 6, then -1, -2, … (bytewise order of the encoded keys).
  const entries = PACK_CLAIM_KEYS.filter(({ claim }) => values[claim] !== undefined).map(({ claim, key }) => [key, values[claim]] as [number, unknown]);
  return new Map(entries);
}

function mapToClaims(map: unknown): PackClaims {
  if (!(map instanceof Map)) return malformed('the claims are not a CBOR map');
  const known = new Set(PACK_CLAIM_KEYS.map(({ key }) => key));
  const unknown = [...map.keys()].filter((key) => !known.has(key as number));
  if (unknown.length > 0) malformed(`unknown claim keys: ${unknown.join(', ')}`);
  const get = (claim: ClaimName): unknown => map.get(PACK_CLAIM_KEYS.find((entry) => entry.claim === claim)!.key);
  const pair = (claim: ClaimName, length: number): unknown[] | undefined => {
    const value = get(claim);
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.length !== length) malformed(`claim ${claim} must be an array of ${length}`);
    return value as unknown[];
  };
  const hex = (value: unknown, claim: string): string => {
    if (!(value instanceof Uint8Array) || value.length !== 32) malformed(`claim ${claim} must hold a 32-byte hash`);
    return hashToHex(value as Uint8Array);
  };
  const typeRef = pair('type_ref', 2);
  const log = pair('log', 2);
  const lastEvent = pair('last_event', 3);
  const logHead = pair('log_head', 2);
  const manifestDigest = get('manifest_digest');
  const claims = {
    iss: get('iss'),
    sub: get('sub'),
    iat: get('iat'),
    capability_class: get('capability_class'),
    type_ref: typeRef && { id: typeRef[0], version: typeRef[1] },
    status: get('status'),
    log: log && { size: log[0], root_hash: hex(log[1], 'log') },
    ...(get('identity') !== undefined ? { identity: get('identity') } : {}),
    ...(manifestDigest !== undefined ? { manifest_digest: hex(manifestDigest, 'manifest_digest') } : {}),
    ...(lastEvent ? { last_event: { seq: lastEvent[0], type: lastEvent[1], recorded_at: lastEvent[2] } } : {}),
    ...(logHead ? { log_head: { timestamp: logHead[0], signature: logHead[1] } } : {}),
  } as PackClaims;
  try {
    checkClaims(claims);
  } catch (error) {
    if (error instanceof IssuerError) malformed(error.message);
    throw error;
  }
  return claims;
}

/** Types of every claim, and exactly the optional claims the capability class calls for. */
function checkClaims(claims: PackClaims): void {
  const text = (value: unknown) => typeof value === 'string' && value.length > 0;
  const count = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
  if (!text(claims.iss) || !text(claims.sub)) invalid('iss and sub must be non-empty text');
  if (!count(claims.iat)) invalid('iat must be whole seconds since the epoch');
  if (!isCapabilityClass(claims.capability_class)) invalid(`unknown capability class ${String(claims.capability_class)}`);
  if (!claims.type_ref || !text(claims.type_ref.id) || !count(claims.type_ref.version)) invalid('type_ref needs an id and a whole version');
  if (!isPassportStatus(claims.status)) invalid(`unknown status ${String(claims.status)}`);
  if (!claims.log || !count(claims.log.size) || !hashFromHex(claims.log.root_hash)) invalid('log needs a size and a 64-hex-digit root_hash');
  if (claims.identity !== undefined && !text(claims.identity)) invalid('identity must be non-empty text');
  if (claims.manifest_digest !== undefined && !hashFromHex(claims.manifest_digest)) invalid('manifest_digest must be 64 hex digits');
  if (claims.last_event !== undefined) {
    const { seq, type, recorded_at } = claims.last_event;
    if (!count(seq) || !text(type) || !text(recorded_at)) invalid('last_event needs seq, type and recorded_at');
    if (seq !== claims.log.size - 1) invalid('last_event must be the last event of the log head');
  }
  if (claims.log_head !== undefined && (!text(claims.log_head.timestamp) || !text(claims.log_head.signature))) {
    invalid('log_head needs a timestamp and a signature');
  }
  const expected = new Set<OptionalClaim>(capabilityClassClaims(claims.capability_class));
  // An empty log has no last event, so trace and verify-offline packs of a new passport go without it.
  if (claims.log.size === 0) expected.delete('last_event');
  const present = OPTIONAL_CLAIMS.filter((claim) => claims[claim] !== undefined);
  const missing = [...expected].filter((claim) => !present.includes(claim));
  const extra = present.filter((claim) => !expected.has(claim));
  if (missing.length > 0 || extra.length > 0) {
    invalid(
      `capability class ${claims.capability_class} packs carry ${[...expected].join(', ') || 'no optional claims'}` +
        (missing.length > 0 ? `; missing ${missing.join(', ')}` : '') +
        (extra.length > 0 ? `; unexpected ${extra.join(', ')}` : ''),
    );
  }
}

function invalid(reason: string): never {
  throw new IssuerError('INVALID_PACK_CLAIMS', `invalid pack claims: ${reason}`, { reason });
}

function malformed(reason: string): never {
  throw new IssuerError('MALFORMED_PACK', `malformed pack: ${reason}`, { reason });
}
