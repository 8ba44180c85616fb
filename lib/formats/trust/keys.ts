/**
 * Node keys: public JWKs after OpenID Federation's historical keys (DESIGN §3).
 *
 * Accepted key types: Ed25519 as OKP (RFC 8037) and P-256 as EC (RFC 7518). The point must decode
 * (canonical encoding, on the curve; Ed25519 keys of small order are refused because they make
 * signatures ambiguous). Private members (`d`, …) are refused, and so is any member neither
 * registered for a public key (RFC 7517 §4, RFC 7518 §6.2.1, RFC 8037 §2) nor one of the platform's
 * own keyrings (lib/keys/key-store.ts): a key any service publishes is accepted as it is. `purpose`,
 * `signs` and `operator` say what a key is for within the service that publishes it; a node keeps the key and
 * its lifetime, not them. `kid` must be the RFC 7638
 * thumbprint; when absent it is filled in. `alg`, if given, must fit the key; `use`, if given,
 * must be `sig`. `iat` is required, `exp` optional; `revoked` is `{revoked_at, reason}`. The three
 * times are NumericDate (RFC 7519: integer seconds since the epoch), as in the JWK Sets every
 * service publishes (DESIGN §3, after OpenID Federation's historical keys).
 *
 * Merging (upsert of a node) is by `kid` and loses nothing:
 * - a key only in the stored set is kept, a key only in the upsert is added;
 * - for the same kid, every member must agree (key material, `iat`, `alg`, `use`), except that
 *   `exp` and `revoked` may be added when the stored key has none; once set they never change;
 * - any disagreement is KEY_CONFLICT, and so is other key material under a stored kid (checked
 *   first: the conflict with the stored key is the reason that matters); an invalid key or a kid
 *   that is not its thumbprint is INVALID_KEY; on any failure nothing is merged.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { canonicalize, jwkThumbprint, publicKeyFromJwk, type PublicJwk, type SigningAlgorithm } from '../../crypto/index.js';
import { failure, success, type TrustResult } from './errors.js';
import { instantFromUnixSeconds, type Instant } from './time.js';

export interface KeyRevocation {
  /** NumericDate. */
  readonly revoked_at: number;
  readonly reason: string;
}

export type Ed25519Jwk = PublicJwk & { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string };
export type P256Jwk = PublicJwk & { kty: 'EC'; crv: 'P-256'; x: string; y: string; kid: string };

/** A node's published key with its lifetime. */
export type NodeKey = (Ed25519Jwk | P256Jwk) & {
  /** NumericDate. */
  readonly iat: number;
  /** NumericDate, exclusive. */
  readonly exp?: number;
  readonly revoked?: KeyRevocation;
};

/** The registered members of a public JWK, and the X.509 ones as RFC 7517 §4.6–4.9 type them. */
const REGISTERED = ['kty', 'crv', 'x', 'kid', 'alg', 'use', 'key_ops'];
const X509_MEMBERS: Record<string, (value: unknown) => boolean> = {
  x5u: (value) => typeof value === 'string' && /^https:\/\//.test(value),
  x5c: (value) => Array.isArray(value) && value.length > 0 && value.every((certificate) => typeof certificate === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(certificate)),
  x5t: (value) => typeof value === 'string' && /^[A-Za-z0-9_-]{27}$/.test(value),
  'x5t#S256': (value) => typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value),
};
const PUBLIC_MEMBERS: Record<'OKP' | 'EC', ReadonlySet<string>> = {
  OKP: new Set([...REGISTERED, ...Object.keys(X509_MEMBERS)]),
  EC: new Set([...REGISTERED, 'y', ...Object.keys(X509_MEMBERS)]),
};
const LIFETIME_MEMBERS = new Set(['iat', 'exp', 'revoked']);
/** What the platform's keyrings say of a key besides its lifetime (KeyringEntry in lib/keys/key-store.ts), with their types. */
const KEYRING_DESCRIPTION_MEMBERS: Record<string, (value: unknown) => boolean> = {
  purpose: (value) => typeof value === 'string' && value.length > 0,
  signs: (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'),
  operator: (value) => typeof value === 'string' && value.length > 0,
};
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export function signingAlgorithmOf(key: Ed25519Jwk | P256Jwk): SigningAlgorithm {
  return key.kty === 'OKP' ? 'Ed25519' : 'ES256';
}

/** Checks a public signing JWK without lifetime members; fills in its thumbprint kid. */
export function validatePublicJwk(input: unknown, extraMembers: ReadonlySet<string> = new Set()): TrustResult<Ed25519Jwk | P256Jwk> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('INVALID_KEY', 'a key must be a JWK object');
  const jwk = input as Record<string, unknown>;
  const found = PRIVATE_MEMBERS.find((member) => member in jwk);
  if (found) return failure('INVALID_KEY', `a published key must not carry the private member "${found}"`);
  let alg: SigningAlgorithm;
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') alg = 'Ed25519';
  else if (jwk.kty === 'EC' && jwk.crv === 'P-256') alg = 'ES256';
  else return failure('INVALID_KEY', 'only Ed25519 (kty OKP) and P-256 (kty EC) keys are accepted');
  const allowed = PUBLIC_MEMBERS[jwk.kty];
  const unknown = Object.keys(jwk).find((member) => !allowed.has(member) && !extraMembers.has(member));
  if (unknown) return failure('INVALID_KEY', `unexpected JWK member "${unknown}"`);
  const illTyped = Object.keys(X509_MEMBERS).find((member) => member in jwk && !X509_MEMBERS[member]!(jwk[member]));
  if (illTyped) return failure('INVALID_KEY', `the JWK member "${illTyped}" is not as RFC 7517 §4 defines it`);
  const raw = publicKeyFromJwk(alg, jwk as PublicJwk);
  if (!raw || !isUsablePoint(alg, raw)) return failure('INVALID_KEY', `the ${alg} key material is not a valid public key`);
  if (jwk.alg !== undefined && !(alg === 'Ed25519' ? ['Ed25519', 'EdDSA'] : ['ES256']).includes(jwk.alg as string)) {
    return failure('INVALID_KEY', `alg ${String(jwk.alg)} does not fit a ${String(jwk.crv)} key`);
  }
  if (jwk.use !== undefined && jwk.use !== 'sig') return failure('INVALID_KEY', 'a trust key has use "sig"');
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.every((op) => op === 'verify'))) {
    return failure('INVALID_KEY', 'a trust key may only list key_ops ["verify"]');
  }
  const thumbprint = jwkThumbprint(jwk as PublicJwk);
  if (jwk.kid !== undefined && jwk.kid !== thumbprint) {
    return failure('INVALID_KEY', `kid ${String(jwk.kid)} is not the RFC 7638 thumbprint of its key (${thumbprint})`);
  }
  return success({ ...jwk, kid: thumbprint } as Ed25519Jwk | P256Jwk);
}

function isUsablePoint(alg: SigningAlgorithm, raw: Uint8Array): boolean {
  try {
    if (alg === 'ES256') {
      p256.Point.fromBytes(raw).assertValidity();
      return true;
    }
    return !ed25519.Point.fromBytes(raw, false).isSmallOrder();
  } catch {
    return false;
  }
}

/** Checks a node key: a public JWK plus `iat`, optional `exp` and `revoked`; a keyring's `purpose`, `signs` and `operator` are checked and left out. */
export function validateNodeKey(input: unknown): TrustResult<NodeKey> {
  const checked = validatePublicJwk(input, new Set([...LIFETIME_MEMBERS, ...Object.keys(KEYRING_DESCRIPTION_MEMBERS)]));
  if (!checked.ok) return checked;
  const { purpose, signs, operator, ...kept } = checked.value as NodeKey & { purpose?: unknown; signs?: unknown; operator?: unknown };
  for (const [member, value] of Object.entries({ purpose, signs, operator })) {
    if (value !== undefined && !KEYRING_DESCRIPTION_MEMBERS[member]!(value)) return failure('INVALID_KEY', `the member "${member}" is not as the platform's keyrings write it`);
  }
  const key = kept as NodeKey;
  if (!isNumericDate(key.iat)) return failure('INVALID_KEY', `key ${key.kid} needs "iat" as a NumericDate (integer seconds since the epoch)`);
  if (key.exp !== undefined) {
    if (!isNumericDate(key.exp)) return failure('INVALID_KEY', `key ${key.kid} has an "exp" that is not a NumericDate`);
    if (key.exp <= key.iat) return failure('INVALID_KEY', `key ${key.kid} expires before it is issued`);
  }
  if (key.revoked !== undefined) {
    const revoked = key.revoked as unknown;
    if (
      typeof revoked !== 'object' ||
      revoked === null ||
      Object.keys(revoked).some((member) => member !== 'revoked_at' && member !== 'reason') ||
      !isNumericDate(key.revoked.revoked_at) ||
      typeof key.revoked.reason !== 'string' ||
      key.revoked.reason === ''
    ) {
      return failure('INVALID_KEY', `key ${key.kid} has "revoked" that is not {revoked_at (NumericDate), reason}`);
    }
  }
  return success(key);
}

function isNumericDate(value: unknown): value is number {
  // Up to the year 9999, the range RFC 3339 (and so every other time of this service) can write.
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= 253_402_300_799;
}

/** Merges an upsert's keys into the stored ones by kid; see the rules at the top of this file. */
export function mergeNodeKeys(existing: readonly NodeKey[], incoming: readonly unknown[]): TrustResult<NodeKey[]> {
  const merged = new Map<string, NodeKey>(existing.map((key) => [key.kid, key]));
  for (const input of incoming) {
    const claimed = typeof input === 'object' && input !== null ? (input as { kid?: unknown }).kid : undefined;
    const holder = typeof claimed === 'string' ? merged.get(claimed) : undefined;
    // Other material under a published kid is a conflict with what is stored, whatever else is wrong with it.
    if (holder && !sameMaterial(holder, input as Record<string, unknown>)) {
      return failure('KEY_CONFLICT', `key ${holder.kid} is already published with other key material; a kid names one key for good`);
    }
    const checked = validateNodeKey(input);
    if (!checked.ok) return checked;
    const key = checked.value;
    const stored = merged.get(key.kid);
    if (!stored) {
      merged.set(key.kid, key);
      continue;
    }
    const combined = combineKey(stored, key);
    if (!combined.ok) return combined;
    merged.set(key.kid, combined.value);
  }
  return success([...merged.values()]);
}

function sameMaterial(stored: NodeKey, incoming: Record<string, unknown>): boolean {
  const members = stored.kty === 'OKP' ? (['kty', 'crv', 'x'] as const) : (['kty', 'crv', 'x', 'y'] as const);
  return members.every((member) => (stored as Record<string, unknown>)[member] === incoming[member]);
}

function combineKey(stored: NodeKey, incoming: NodeKey): TrustResult<NodeKey> {
  const fixed = (key: NodeKey) => {
    const { exp: _exp, revoked: _revoked, ...rest } = key;
    return canonicalize(rest);
  };
  if (fixed(stored) !== fixed(incoming)) {
    return failure('KEY_CONFLICT', `key ${stored.kid} is already published with different members; a published key does not change`);
  }
  for (const member of ['exp', 'revoked'] as const) {
    if (stored[member] !== undefined && incoming[member] !== undefined && canonicalize(stored[member]) !== canonicalize(incoming[member])) {
      return failure('KEY_CONFLICT', `key ${stored.kid} already has "${member}" ${canonicalize(stored[member])}; it cannot change`);
    }
  }
  return success({
    ...stored,
    ...(incoming.exp !== undefined && { exp: incoming.exp }),
    ...(incoming.revoked !== undefined && { revoked: incoming.revoked }),
  } as NodeKey);
}

/** A key is current at t when iat <= t < exp; exp is exclusive as for JWT `exp`. */
export function keyIsCurrentAt(key: NodeKey, at: Instant): boolean {
  return instantFromUnixSeconds(key.iat) <= at && (key.exp === undefined || at < instantFromUnixSeconds(key.exp));
}

/** When the key's own `revoked` member takes effect, if it has one. */
export function keyRevokedAt(key: NodeKey): Instant | undefined {
  return key.revoked === undefined ? undefined : instantFromUnixSeconds(key.revoked.revoked_at);
}
