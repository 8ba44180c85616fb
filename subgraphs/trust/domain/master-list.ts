/**
 * The master list: entries countersigned by a witness set {m, keys}, M-of-K, after C2SP
 * tlog-cosignature.
 *
 * A witness cosigns one entry at a time: an Ed25519 signature (RFC 8032) over the text
 *
 *   cosignature/v1\n
 *   time <unix seconds>\n
 *   <origin>\n
 *   entry <entry id>\n
 *   sha256 <standard base64, padded, of SHA-256 over the RFC 8785 (JCS) bytes of the entry body>\n
 *
 * The first two lines are C2SP's cosignature/v1 header, binding the time the witness signed.
 * The rest is a checkpoint-like note body: the origin line names the master list (one per
 * deployment, so a cosignature cannot be replayed into another service), and since the next line
 * is not a decimal tree size the text can never be taken for a cosigned log checkpoint. Entry ids
 * and origins are 1–256 printable ASCII characters without spaces. The time is bound, not judged.
 *
 * A cosignature is {kid, time, signature}: kid is the RFC 7638 thumbprint of the witness key,
 * signature the 64 bytes in base64url. The quorum verdict is computed live against the CURRENT
 * witness set, so replacing the set changes verdicts at once: each cosignature is VALID,
 * UNKNOWN_WITNESS (kid not in the set), BAD_SIGNATURE, or DUPLICATE (its witness already has a
 * valid cosignature counted on this entry); `valid` counts distinct witnesses, `quorate` is
 * valid >= m.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalBytes, decodeBase64Url, publicKeyFromJwk, verifyBytes } from '../../../lib/crypto/index.js';
import { failure, success, type TrustResult } from '../../../lib/formats/trust/errors.js';
import { validatePublicJwk, type Ed25519Jwk } from '../../../lib/formats/trust/keys.js';

export interface WitnessSet {
  readonly m: number;
  readonly keys: readonly Ed25519Jwk[];
}

export interface Cosignature {
  readonly kid: string;
  readonly time: number;
  readonly signature: string;
}

export interface MasterListEntry {
  readonly id: string;
  readonly body: { readonly [member: string]: unknown };
  readonly cosignatures: readonly Cosignature[];
}

export type CosignatureOutcome = 'VALID' | 'UNKNOWN_WITNESS' | 'BAD_SIGNATURE' | 'DUPLICATE';

export interface CosignatureReason {
  readonly index: number;
  readonly kid: string;
  readonly outcome: CosignatureOutcome;
}

export interface QuorumVerdict {
  readonly valid: number;
  readonly required: number;
  readonly quorate: boolean;
  readonly reasons: readonly CosignatureReason[];
}

const MAX_WITNESSES = 256;
const NOTE_TEXT = /^[\x21-\x7E]{1,256}$/;

export function validateWitnessSet(input: unknown): TrustResult<WitnessSet, 'INVALID_WITNESS_SET'> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('INVALID_WITNESS_SET', 'a witness set is {m, keys}');
  const body = input as Record<string, unknown>;
  const unknown = Object.keys(body).find((member) => member !== 'm' && member !== 'keys');
  if (unknown) return failure('INVALID_WITNESS_SET', `unexpected witness set member "${unknown}"`);
  if (!Array.isArray(body.keys) || body.keys.length === 0 || body.keys.length > MAX_WITNESSES) {
    return failure('INVALID_WITNESS_SET', `keys must list 1 to ${MAX_WITNESSES} witness keys`);
  }
  const keys: Ed25519Jwk[] = [];
  for (const [index, input] of (body.keys as unknown[]).entries()) {
    const checked = validatePublicJwk(input);
    if (!checked.ok) return failure('INVALID_WITNESS_SET', `keys[${index}]: ${checked.message}`);
    if (checked.value.kty !== 'OKP') return failure('INVALID_WITNESS_SET', `keys[${index}]: a witness key is an Ed25519 (OKP) key`);
    if (keys.some((key) => key.kid === checked.value.kid)) return failure('INVALID_WITNESS_SET', `keys[${index}] repeats witness ${checked.value.kid}`);
    keys.push(checked.value);
  }
  const m = body.m;
  if (typeof m !== 'number' || !Number.isSafeInteger(m) || m < 1 || m > keys.length) {
    return failure('INVALID_WITNESS_SET', `m must be an integer from 1 to the number of keys (${keys.length})`);
  }
  return success({ m, keys });
}

export function validateMasterListEntry(input: unknown): TrustResult<MasterListEntry, 'INVALID_MASTER_LIST_ENTRY'> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('INVALID_MASTER_LIST_ENTRY', 'an entry is {id, body, cosignatures}');
  const { id, body, cosignatures = [], ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return failure('INVALID_MASTER_LIST_ENTRY', `unexpected entry member "${Object.keys(rest)[0]}"`);
  if (typeof id !== 'string' || !NOTE_TEXT.test(id)) return failure('INVALID_MASTER_LIST_ENTRY', 'id must be 1 to 256 printable ASCII characters without spaces');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return failure('INVALID_MASTER_LIST_ENTRY', 'body must be a JSON object');
  try {
    canonicalBytes(body);
  } catch (error) {
    return failure('INVALID_MASTER_LIST_ENTRY', `body cannot be canonicalized: ${(error as Error).message}`);
  }
  if (!Array.isArray(cosignatures)) return failure('INVALID_MASTER_LIST_ENTRY', 'cosignatures must be a list');
  for (const [index, cosignature] of cosignatures.entries()) {
    const { kid, time, signature, ...more } = (typeof cosignature === 'object' && cosignature !== null ? cosignature : {}) as Record<string, unknown>;
    if (typeof kid !== 'string' || typeof signature !== 'string' || typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0 || Object.keys(more).length > 0) {
      return failure('INVALID_MASTER_LIST_ENTRY', `cosignatures[${index}] is not {kid, time (unix seconds), signature}`);
    }
  }
  return success({ id, body: body as MasterListEntry['body'], cosignatures: cosignatures as Cosignature[] });
}

/** The checkpoint-like body a witness cosigns for an entry (everything after the time line). */
export function cosignedBody(origin: string, entry: Pick<MasterListEntry, 'id' | 'body'>): string {
  if (!NOTE_TEXT.test(origin) || !NOTE_TEXT.test(entry.id)) throw new TypeError('origin and entry id are 1 to 256 printable ASCII characters without spaces');
  const digest = Buffer.from(sha256(canonicalBytes(entry.body))).toString('base64');
  return `${origin}\nentry ${entry.id}\nsha256 ${digest}\n`;
}

/** The exact bytes a witness signs: the cosignature/v1 header, then the body. */
export function cosignatureMessage(time: number, body: string): Uint8Array {
  return new TextEncoder().encode(`cosignature/v1\ntime ${time}\n${body}`);
}

/** Counts the entry's valid cosignatures from distinct keys of the current witness set. */
export function quorumVerdict(entry: MasterListEntry, witnessSet: WitnessSet, origin: string): QuorumVerdict {
  const body = cosignedBody(origin, entry);
  // lib/crypto's verifyBytes goes through OpenSSL with cached key objects: every read re-verifies
  // every cosignature, so this is the hot path bench/trust.ts measures.
  const witnesses = new Map(witnessSet.keys.map((key) => [key.kid, publicKeyFromJwk('Ed25519', key)!]));
  const counted = new Set<string>();
  const reasons = entry.cosignatures.map(({ kid, time, signature }, index): CosignatureReason => {
    const witness = witnesses.get(kid);
    if (!witness) return { index, kid, outcome: 'UNKNOWN_WITNESS' };
    if (counted.has(kid)) return { index, kid, outcome: 'DUPLICATE' };
    if (!verifyBytes('Ed25519', witness, cosignatureMessage(time, body), decodeSignature(signature))) return { index, kid, outcome: 'BAD_SIGNATURE' };
    counted.add(kid);
    return { index, kid, outcome: 'VALID' };
  });
  return { valid: counted.size, required: witnessSet.m, quorate: counted.size >= witnessSet.m, reasons };
}

function decodeSignature(encoded: string): Uint8Array {
  try {
    return decodeBase64Url(encoded);
  } catch {
    return new Uint8Array(0);
  }
}
