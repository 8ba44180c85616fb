/**
 * Audiences of a passport's attributes, kept verifiable (issue 44 item 4): a restricted member of the
 * config vector is committed to by a salted digest, in the manner of SD-JWT (RFC 9901). At creation
 * each restricted member becomes a Disclosure, the base64url of the JSON array `[salt, name, value]`
 * (§4.2.1), and its digest, the base64url SHA-256 of that base64url text (§4.2.3), takes its place in
 * the `_sd` array of the committed manifest (§4.2.4.1), sorted so that it hides the members' order.
 * The committed manifest is what the pack's manifest_digest and the credential sign; a disclosure is
 * verified by finding its digest in an `_sd` array (§7.1), so a view without it still verifies.
 *
 * No Node module here: the verification page runs this in a browser.
 */
import { decodeBase64Url, encodeBase64Url } from '../../crypto/base64url.js';
import { canonicalBytes } from '../../crypto/jcs.js';
import { sha256 } from '../../platform/primitives.js';
import { IssuerError } from './errors.js';
import { hashToHex } from './merkle.js';

/** Who may read an attribute: anyone, persons with a legitimate interest, or authorities (Regulation (EU) 2023/1542, Art. 77(2)). */
export const AUDIENCES = ['public', 'legitimate-interest', 'authority'] as const;
export type Audience = (typeof AUDIENCES)[number];
export type RestrictedAudience = Exclude<Audience, 'public'>;
export const RESTRICTED_AUDIENCES: readonly RestrictedAudience[] = ['legitimate-interest', 'authority'];

export function isAudience(value: unknown): value is Audience {
  return typeof value === 'string' && (AUDIENCES as readonly string[]).includes(value);
}

/** The hash of every digest (RFC 9901 §4.1.1 `_sd_alg`; the IANA Named Information name). */
export const SD_ALG = 'sha-256';
/** The member that holds the digests of an object's undisclosed members (RFC 9901 §4.2.4.1). */
export const SD_MEMBER = '_sd';
/** Names a disclosure may not give (RFC 9901 §4.2.1): they would be read as the digests themselves. */
const RESERVED_NAMES = new Set([SD_MEMBER, '...', '_sd_alg']);
/** 128 random bits, the salt's minimum (RFC 9901 §9.3). */
const SALT_BYTES = 16;

/** A disclosure as issued or presented: its text, its digest, and the member it discloses. */
export interface Disclosure {
  /** base64url of the JSON array [salt, name, value]. */
  disclosure: string;
  /** base64url SHA-256 of `disclosure`'s characters. */
  digest: string;
  name: string;
  value: unknown;
}

/** A restricted member of a passport's manifest, committed to at creation. */
export interface AudienceDisclosure extends Disclosure {
  audience: RestrictedAudience;
}

/** RFC 9901 §4.2.3: the digest is over the US-ASCII bytes of the base64url text, not the JSON it encodes. */
export function disclosureDigest(disclosure: string): string {
  return encodeBase64Url(sha256(new TextEncoder().encode(disclosure)));
}

/** A disclosure of one object member (RFC 9901 §4.2.1), with a fresh salt unless one is given (the RFC's examples). */
export function discloseMember(name: string, value: unknown, salt: string = encodeBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(SALT_BYTES)))): Disclosure {
  const disclosure = encodeBase64Url(JSON.stringify([salt, name, value]));
  return { disclosure, digest: disclosureDigest(disclosure), name, value };
}

function invalid(reason: string): never {
  throw new IssuerError('INVALID_DISCLOSURE', `a disclosure is not valid: ${reason}`, { reason });
}

/** Reads a disclosure of an object member; INVALID_DISCLOSURE for anything else (an array element's, malformed text). */
export function readDisclosure(text: string): Disclosure {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(decodeBase64Url(text)));
  } catch {
    invalid('it is not the base64url of a JSON array');
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) invalid('it is not an array of salt, name and value');
  const [salt, name, value] = parsed as unknown[];
  if (typeof salt !== 'string' || typeof name !== 'string') invalid('its salt and name are not strings');
  if (RESERVED_NAMES.has(name)) invalid(`it names ${name}, which is reserved`);
  return { disclosure: text, digest: disclosureDigest(text), name, value };
}

/**
 * The manifest as committed to: the config vector with each member the audiences restrict replaced
 * by its digest in `_sd`, and the disclosures of those members. A config vector none of whose
 * members is restricted is committed to as it is (the same object, no `_sd`).
 */
export function commitManifest(configVector: Record<string, unknown>, audiences: Readonly<Record<string, Audience>>): { committed: Record<string, unknown>; disclosures: AudienceDisclosure[] } {
  const restricted = Object.keys(configVector).filter((name) => (audiences[name] ?? 'public') !== 'public');
  if (restricted.length === 0) return { committed: configVector, disclosures: [] };
  const committed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(configVector)) if (!restricted.includes(name)) committed[name] = value;
  const disclosures = restricted.map((name) => ({ ...discloseMember(name, configVector[name]), audience: audiences[name] as RestrictedAudience }));
  committed[SD_MEMBER] = disclosures.map((disclosure) => disclosure.digest).sort();
  return { committed, disclosures };
}

/** Whether a committed manifest commits to restricted members (holds `_sd`). */
export function hasRestrictedMembers(committed: unknown): boolean {
  return committed !== null && typeof committed === 'object' && Object.hasOwn(committed, SD_MEMBER);
}

/** Hex SHA-256 of the RFC 8785 form of the committed manifest: the pack's manifest_digest. */
export function manifestDigest(committed: unknown): string {
  return hashToHex(sha256(canonicalBytes(committed)));
}

/**
 * RFC 9901 §7.1 steps 3 to 5 over a signed payload: every disclosure's digest found in exactly one
 * `_sd` array (at any depth), none twice, none naming a member the object already has; the payload
 * with those members in place and every `_sd` removed (and `_sd_alg` at the top). INVALID_DISCLOSURE
 * when a disclosure fails. Digests no disclosure matches are left out: the members they hide stay hidden.
 */
export function applyDisclosures<T>(payload: T, disclosureTexts: readonly string[]): { processed: T; disclosed: Disclosure[] } {
  const byDigest = new Map<string, Disclosure>();
  for (const text of disclosureTexts) {
    const disclosure = readDisclosure(text);
    if (byDigest.has(disclosure.digest)) invalid(`the disclosure of ${disclosure.name} is given twice`);
    byDigest.set(disclosure.digest, disclosure);
  }
  const used = new Set<string>();
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value)) if (name !== SD_MEMBER) out[name] = walk(member);
    const digests = (value as Record<string, unknown>)[SD_MEMBER];
    if (digests === undefined) return out;
    if (!Array.isArray(digests) || digests.some((digest) => typeof digest !== 'string')) invalid('an _sd member is not an array of digests');
    for (const digest of digests as string[]) {
      const disclosure = byDigest.get(digest);
      if (!disclosure) continue;
      if (used.has(digest)) invalid(`the digest of ${disclosure.name} appears twice`);
      if (Object.hasOwn(out, disclosure.name)) invalid(`the object already has a member ${disclosure.name}`);
      used.add(digest);
      out[disclosure.name] = walk(disclosure.value);
    }
    return out;
  };
  const processed = walk(payload) as T;
  if (processed !== null && typeof processed === 'object' && !Array.isArray(processed)) delete (processed as Record<string, unknown>)._sd_alg;
  const unmatched = [...byDigest.values()].filter((disclosure) => !used.has(disclosure.digest));
  if (unmatched.length > 0) invalid(`no _sd array holds the digest of the disclosure of ${unmatched.map((disclosure) => disclosure.name).join(', ')}`);
  return { processed, disclosed: [...byDigest.values()] };
}
