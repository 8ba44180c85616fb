/**
 * Pinned anchors: the keys a verifier trusts, saved earlier from the services.
 *
 * - pinned keys: JWK Sets (`GET /keyring` of a service), single JWKs, or bare kids (RFC 7638
 *   thumbprints). A pinned JWK's `kid` must be its thumbprint. A key pinned by thumbprint only
 *   takes its material from the material being verified (a keyring inside a snapshot) or from an
 *   unpinned keyring given for the purpose, and only when that material hashes to the thumbprint;
 * - the trust anchor bundle (`GET /trust/anchor-bundle`, signed JSON): its roots are the roots a
 *   delegation path must start from, and their keys and the quorums' keys count as pinned.
 *
 * Nothing else is trusted: a signature by a key that is not pinned does not verify.
 */
import { jwkThumbprint, keyOutOfForce, keySetResolver, readProtectedHeader, verifyJson, JwsError, type KeyResolver, type PublicJwk } from '../lib/crypto/index.js';
import { failed, info, ok, type Finding } from './report.js';

/** Input the verifier cannot work with (an unreadable or ill-formed pin): could not check. */
export class InputError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'InputError';
  }
}

export interface AnchorRoot {
  readonly id: string;
  readonly jurisdiction?: string;
  readonly keys: readonly PublicJwk[];
}

export interface PinSet {
  /** Every pinned kid. */
  readonly kids: ReadonlySet<string>;
  /** Pinned keys whose material was pinned with them, by kid. */
  readonly keys: ReadonlyMap<string, PublicJwk>;
  /** Unpinned key material (a keyring fetched now), usable for a pinned kid it hashes to. */
  readonly material: readonly PublicJwk[];
  /** The pinned trust anchor bundle, as saved (signed JSON). */
  readonly anchorBundle?: Record<string, unknown>;
  /** The bundle's roots, when a bundle is pinned. */
  readonly roots?: readonly AnchorRoot[];
}

export interface PinSources {
  /** Parsed pinned key files: JWK Sets, single JWKs. */
  readonly keySets?: readonly unknown[];
  /** Pinned thumbprints. */
  readonly kids?: readonly string[];
  /** The parsed trust anchor bundle. */
  readonly anchorBundle?: unknown;
  /** Parsed unpinned keyrings (JWK Sets) that may supply material for pinned kids. */
  readonly keyrings?: readonly unknown[];
}

const KID = /^[A-Za-z0-9_-]{43}$/;

export function isKid(text: string): boolean {
  return KID.test(text);
}

/** The keys of a JWK Set or a single JWK; InputError for anything else. */
export function keysOf(value: unknown, what: string): PublicJwk[] {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (Array.isArray(record.keys)) return record.keys.map((key, index) => checkedJwk(key, `${what}, key ${index}`));
    if (typeof record.kty === 'string') return [checkedJwk(record, what)];
  }
  throw new InputError('MALFORMED_KEYS', `${what} is neither a JWK Set nor a JWK`);
}

function checkedJwk(value: unknown, what: string): PublicJwk {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('MALFORMED_KEYS', `${what} is not a JWK`);
  const jwk = value as PublicJwk;
  let thumbprint: string;
  try {
    thumbprint = jwkThumbprint(jwk);
  } catch (error) {
    throw new InputError('MALFORMED_KEYS', `${what}: ${(error as Error).message}`);
  }
  if (jwk.kid !== undefined && jwk.kid !== thumbprint) throw new InputError('MALFORMED_KEYS', `${what}: kid ${String(jwk.kid)} is not the key's RFC 7638 thumbprint ${thumbprint}`);
  return { ...jwk, kid: thumbprint };
}

export function pinsFrom(sources: PinSources): PinSet {
  const kids = new Set<string>();
  const keys = new Map<string, PublicJwk>();
  const pinKey = (key: PublicJwk) => {
    kids.add(key.kid!);
    keys.set(key.kid!, key);
  };
  for (const [index, set] of (sources.keySets ?? []).entries()) for (const key of keysOf(set, `pinned key file ${index + 1}`)) pinKey(key);
  for (const kid of sources.kids ?? []) {
    if (!isKid(kid)) throw new InputError('MALFORMED_PIN', `"${kid}" is not a key thumbprint (43 base64url characters)`);
    kids.add(kid);
  }
  const material = (sources.keyrings ?? []).flatMap((set, index) => keysOf(set, `keyring ${index + 1}`));
  let anchorBundle: Record<string, unknown> | undefined;
  let roots: AnchorRoot[] | undefined;
  if (sources.anchorBundle !== undefined) {
    anchorBundle = sources.anchorBundle as Record<string, unknown>;
    roots = anchorRoots(anchorBundle, 'roots');
    for (const anchor of [...roots, ...anchorRoots(anchorBundle, 'quorums')]) anchor.keys.forEach(pinKey);
  }
  return { kids, keys, material, ...(anchorBundle && { anchorBundle }), ...(roots && { roots }) };
}

function anchorRoots(bundle: unknown, member: 'roots' | 'quorums'): AnchorRoot[] {
  const list = typeof bundle === 'object' && bundle !== null ? (bundle as Record<string, unknown>)[member] : undefined;
  if (!Array.isArray(list)) throw new InputError('MALFORMED_ANCHORS', `the anchor bundle has no "${member}" list`);
  return list.map((entry, index) => {
    const anchor = entry as Record<string, unknown>;
    if (typeof anchor?.id !== 'string' || !Array.isArray(anchor.keys)) throw new InputError('MALFORMED_ANCHORS', `anchor bundle ${member}[${index}] has no id and keys`);
    const keys = anchor.keys.map((key, at) => checkedJwk(key, `anchor bundle ${member}[${index}] key ${at}`));
    return { id: anchor.id, ...(typeof anchor.jurisdiction === 'string' && { jurisdiction: anchor.jurisdiction }), keys };
  });
}

export function hasPinnedKeys(pins: PinSet): boolean {
  return pins.kids.size > 0;
}

/**
 * The key a pinned kid stands for: pinned material, else material at hand that hashes to the kid.
 * Lifetime members (`exp`, `revoked`) found on the material at hand are kept: a keyring saved later
 * may know of a rotation or revocation the pinned copy predates.
 */
export function pinnedKey(pins: PinSet, kid: string, material: readonly PublicJwk[] = []): PublicJwk | undefined {
  if (!pins.kids.has(kid)) return undefined;
  const candidates = [...material, ...pins.material].filter((key) => key.kid === kid && safeThumbprint(key) === kid);
  const base = pins.keys.get(kid) ?? candidates[0];
  if (!base) return undefined;
  const lifetime: Record<string, unknown> = {};
  for (const candidate of candidates) {
    if (candidate.exp !== undefined && lifetime.exp === undefined) lifetime.exp = candidate.exp;
    if (candidate.revoked !== undefined && lifetime.revoked === undefined) lifetime.revoked = candidate.revoked;
  }
  return { ...base, ...lifetime };
}

/** The key's RFC 7638 thumbprint, or undefined when it is no key. */
export function safeThumbprint(key: PublicJwk): string | undefined {
  try {
    return jwkThumbprint(key);
  } catch {
    return undefined;
  }
}

export interface PinnedResolver {
  readonly resolve: KeyResolver;
  /** Kids that were asked for and are not pinned (or pinned without material anywhere). */
  readonly unresolved: ReadonlySet<string>;
}

/** A KeyResolver that answers pinned keys only, with material from `material` when needed. */
export function pinnedResolver(pins: PinSet, material: readonly PublicJwk[] = []): PinnedResolver {
  const unresolved = new Set<string>();
  return {
    unresolved,
    resolve: (header) => {
      const kid = typeof header.kid === 'string' ? header.kid : '';
      const key = pinnedKey(pins, kid, material);
      if (!key) unresolved.add(kid);
      return key;
    },
  };
}

/** Why a kid did not resolve: not pinned at all, or pinned by thumbprint with no material for it. */
export function unresolvedReason(pins: PinSet, kid: string): { code: string; message: string } {
  if (pins.kids.has(kid)) return { code: 'PINNED_KEY_MATERIAL_MISSING', message: `key ${kid} is pinned by thumbprint, but no keyring at hand holds its material` };
  return { code: 'KEY_NOT_PINNED', message: `key ${kid} is not among the pinned keys` };
}

/**
 * Seconds-based lifetime of a keyring key (NumericDate `iat`, `exp`, `revoked.revoked_at`) at an
 * RFC 3339 instant: undefined when in force, else why not.
 */
export function keyLifetimeProblem(key: PublicJwk, at: string): string | undefined {
  const seconds = Date.parse(at) / 1000;
  if (Number.isNaN(seconds)) return `${at} is not a date-time`;
  const revoked = key.revoked as { revoked_at?: unknown } | undefined;
  switch (keyOutOfForce(key, seconds)) {
    case 'not_yet_issued':
      return `key ${key.kid} was issued at ${iso(key.iat as number)}, after ${at}`;
    case 'retired':
      return `key ${key.kid} was retired at ${iso(key.exp as number)}, before ${at}`;
    case 'revoked':
      return `key ${key.kid} was revoked${typeof revoked?.revoked_at === 'number' ? ` from ${iso(revoked.revoked_at)}` : ''}, before ${at}`;
    default:
      return undefined;
  }
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * The pinned anchor bundle's own signature: checked when its signing key is pinned (the trust
 * service's keyring, pinned or at hand); a bundle pinned as saved is trusted either way.
 */
export function anchorBundleFinding(pins: PinSet, material: readonly PublicJwk[] = []): Finding | undefined {
  return anchorBundleCheck(pins, material)?.finding;
}

/** anchorBundleFinding, and the pinned key that signed the bundle when it verifies. */
export function anchorBundleCheck(pins: PinSet, material: readonly PublicJwk[] = []): { finding: Finding; signer?: PublicJwk } | undefined {
  if (!pins.anchorBundle) return undefined;
  const keys = [...pins.kids].map((kid) => pinnedKey(pins, kid, material)).filter((key): key is PublicJwk => key !== undefined);
  try {
    const verified = verifyJson(pins.anchorBundle, keySetResolver(keys));
    return { finding: ok('anchors.bundle', `the pinned anchor bundle verifies under pinned key ${String(verified.header.kid)}`), signer: verified.key };
  } catch (error) {
    if (!(error instanceof JwsError)) throw error;
    if (error.reason === 'UNKNOWN_KEY') return { finding: info('anchors.bundle', `the pinned anchor bundle is trusted as saved (its signing key is not pinned: ${error.message})`) };
    return { finding: failed('anchors.bundle', `ANCHOR_BUNDLE_${error.reason}`, `the pinned anchor bundle does not verify: ${error.message}`) };
  }
}

/** The kid a JWS header names (unverified), for reports; "undefined" when it names none. */
export function jwsKid(jws: unknown): string {
  try {
    return typeof jws === 'string' ? String(readProtectedHeader(jws).kid) : 'undefined';
  } catch {
    return 'undefined';
  }
}
