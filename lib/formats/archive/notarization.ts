/**
 * Notarization of a snapshot: signed JSON (DESIGN §3) by the archive's notary key over the digest
 * and size of the exact archive bytes and the time they were notarized. The tag manifest digest
 * is signed too, so the statement still identifies the bag's content if the bag is ever
 * re-serialized.
 */
import { JwsError, keyOutOfForce, keySetResolver, signJson, verifyJson, type PublicJwk, type SignedJson, type Signer } from '../../crypto/index.js';
import { ArchiveError } from './errors.js';

export interface NotarizationClaims {
  readonly snapshot_id: string;
  readonly passport_id: string;
  /** Lowercase hex SHA-512 of the serialized bag, exactly as `GET /snapshots/{id}` serves it. */
  readonly bag_sha512: string;
  /** Length of the serialized bag in bytes. */
  readonly bag_size: number;
  /** RFC 3339 UTC instant. */
  readonly notarized_at: string;
  /** Lowercase hex SHA-512 of the bag's `tagmanifest-sha512.txt`. */
  readonly tagmanifest_sha512?: string;
}

export type Notarization = SignedJson<NotarizationClaims>;

export interface VerifiedNotarization {
  readonly claims: NotarizationClaims;
  /** The keyring key that signed it. */
  readonly key: PublicJwk;
}

const MEMBERS = new Set(['snapshot_id', 'passport_id', 'bag_sha512', 'bag_size', 'notarized_at', 'tagmanifest_sha512', 'signature']);
const SHA512_HEX = /^[0-9a-f]{128}$/;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

/** Signs the claims with the notary key; throws `NOTARIZATION_MALFORMED` for claims it would not accept back. */
export function notarize(claims: NotarizationClaims, signer: Signer): Notarization {
  return signJson(checkClaims(claims), signer);
}

/**
 * Verifies a notarization against the digest of the bag bytes at hand and the notary keyring (JWK
 * Set keys with `kid`, and optionally `iat`/`exp` in seconds and `revoked.revoked_at` after OpenID
 * Federation's historical keys). A key revoked after `notarized_at` still verifies what it signed
 * before; one revoked by then does not. Throws `ArchiveError`.
 */
export function verifyNotarization(document: unknown, bagSha512: string, keys: readonly PublicJwk[]): VerifiedNotarization {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new ArchiveError('NOTARIZATION_MALFORMED', 'a notarization is a JSON object');
  }
  const { signature: _signature, ...claims } = document as Record<string, unknown>;
  const checked = checkClaims(claims);

  let key: PublicJwk;
  try {
    key = verifyJson(document, keySetResolver(keys)).key;
  } catch (error) {
    if (!(error instanceof JwsError)) throw error;
    if (error.reason === 'UNKNOWN_KEY') throw new ArchiveError('NOTARY_KEY_UNKNOWN', error.message);
    if (error.reason === 'BAD_SIGNATURE') throw new ArchiveError('NOTARIZATION_SIGNATURE_INVALID', error.message);
    throw new ArchiveError('NOTARIZATION_MALFORMED', error.message);
  }
  checkKeyInForce(key, Date.parse(checked.notarized_at) / 1000);
  if (checked.bag_sha512 !== bagSha512.toLowerCase()) {
    throw new ArchiveError('NOTARIZATION_DIGEST_MISMATCH', `the notarization is over bag ${checked.bag_sha512}, not ${bagSha512.toLowerCase()}`);
  }
  return { claims: checked, key };
}

function checkClaims(claims: object): NotarizationClaims {
  const record = claims as Record<string, unknown>;
  const unknown = Object.keys(record).filter((member) => !MEMBERS.has(member));
  const problems = [
    unknown.length > 0 && `unknown members ${unknown.join(', ')}`,
    (typeof record.snapshot_id !== 'string' || record.snapshot_id === '') && 'snapshot_id must be a non-empty string',
    (typeof record.passport_id !== 'string' || record.passport_id === '') && 'passport_id must be a non-empty string',
    !(typeof record.bag_sha512 === 'string' && SHA512_HEX.test(record.bag_sha512)) && 'bag_sha512 must be 128 lowercase hex digits',
    !(Number.isSafeInteger(record.bag_size) && (record.bag_size as number) > 0) && 'bag_size must be a positive integer',
    !(typeof record.notarized_at === 'string' && RFC3339_UTC.test(record.notarized_at) && !Number.isNaN(Date.parse(record.notarized_at))) && 'notarized_at must be an RFC 3339 UTC instant',
    record.tagmanifest_sha512 !== undefined && !(typeof record.tagmanifest_sha512 === 'string' && SHA512_HEX.test(record.tagmanifest_sha512)) && 'tagmanifest_sha512 must be 128 lowercase hex digits',
  ].filter((problem): problem is string => typeof problem === 'string');
  if (problems.length > 0) throw new ArchiveError('NOTARIZATION_MALFORMED', problems.join('; '));
  const { signature: _signature, ...plain } = record;
  return plain as unknown as NotarizationClaims;
}

const OUT_OF_FORCE = { not_yet_issued: 'was issued after', retired: 'had expired at', revoked: 'was revoked at' } as const;

function checkKeyInForce(key: PublicJwk, at: number): void {
  const why = keyOutOfForce(key, at);
  if (why) throw new ArchiveError('NOTARY_KEY_NOT_VALID', `key ${key.kid} ${OUT_OF_FORCE[why]} the notarization time`);
}
