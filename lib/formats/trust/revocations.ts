/**
 * Revocations, bitemporal.
 *
 * A revocation names its subject as `<node id>` (the node and all its keys) or
 * `<node id>#<kid>` (one key), a reason (RFC 5280 §5.3.1 CRLReason names; `certificateHold` and
 * `removeFromCRL` do not exist here because nothing is ever un-revoked), `effective_at` (valid
 * time, like RFC 5280's invalidityDate; defaults to the recording instant) and `recorded_at`
 * (transaction time: the server's clock when it accepted the declaration).
 *
 * Effect: a revoked node stands in no delegation path from `effective_at` on. A revoked key
 * invalidates what it signed at or after `effective_at` (its earlier signatures keep their
 * standing, as with historical keys); it never signs an attestation again.
 *
 * Retroactive means `effective_at < recorded_at`. Such a declaration needs a quorate attestation
 * by a quorum node over the revocation's canonical form: the RFC 8785 (JCS) bytes of
 * `{"effective_at", "reason", "subject"}` with the three strings exactly as declared (so
 * `effective_at` is signed in the spelling the declarer used). The attestation is either
 * - `{quorum, slots: [{kid, signature}]}`: raw signatures (Ed25519, or ES256 as r‖s), base64url,
 *   over those bytes by distinct member keys of the quorum that are current and unrevoked when
 *   the declaration is recorded; every slot must verify (else BAD_ATTESTATION) and there must be
 *   at least `threshold` of them (else MISSING_QUORUM); or
 * - `{quorum, group_signature}`: one Ed25519 signature, base64url, that verifies (RFC 8032,
 *   strict) under the FROST (RFC 9591) group key pinned on the quorum node (else BAD_ATTESTATION).
 * An attestation naming a node that is not a quorum is UNKNOWN_QUORUM. An attestation sent with
 * a revocation that is not retroactive is checked all the same: it is never stored unverified.
 *
 * Queries (all optional, combined with AND):
 * - `at`: effective by then (effective_at <= at): what is revoked in the world at that instant;
 * - `known_by`: recorded by then (recorded_at <= known_by): what the service knew then;
 *   both together answer "was it revoked at `at`, as known at `known_by`";
 * - `window`: `start/end`, effective_at in [start, end), either end open;
 * - `subject`: every revocation affecting it: `n` matches `n` and `n#<any kid>`, `n#k` matches
 *   `n#k` and `n` (a node's revocation revokes its keys);
 * - `retroactive`: `true` or `false`.
 */
import { canonicalBytes, decodeBase64Url, publicKeyFromJwk, verifyBytes } from '../../crypto/index.js';
import { failure, success, type TrustResult } from './errors.js';
import { keyIsCurrentAt, keyRevokedAt, signingAlgorithmOf, type NodeKey } from './keys.js';
import { isNodeId, type TrustNode } from './nodes.js';
import { INSTANT_EXPECTED } from '../../time.js';
import { formatInstant, intervalContains, parseInstant, parseInterval, type Instant, type Interval } from './time.js';

export const REVOCATION_REASONS = ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'privilegeWithdrawn', 'aACompromise'] as const;
export type RevocationReason = (typeof REVOCATION_REASONS)[number];

export interface RevocationSubject {
  readonly node_id: string;
  readonly kid?: string;
}

export interface AttestationSlot {
  readonly kid: string;
  readonly signature: string;
}

export type RevocationAttestation = { readonly quorum: string; readonly slots: readonly AttestationSlot[] } | { readonly quorum: string; readonly group_signature: string };

/** What the declarer states and a quorum attests. */
export interface RevocationStatement {
  readonly subject: string;
  readonly reason: RevocationReason;
  readonly effective_at: string;
}

export interface Revocation extends RevocationStatement {
  readonly recorded_at: string;
  readonly retroactive: boolean;
  readonly attestation?: RevocationAttestation;
}

export interface RevocationQuery {
  readonly at?: Instant;
  readonly known_by?: Instant;
  readonly window?: Interval;
  readonly subject?: RevocationSubject;
  readonly retroactive?: boolean;
}

const KID = /^[A-Za-z0-9_-]{43}$/;

export function parseRevocationSubject(text: unknown): RevocationSubject | undefined {
  if (typeof text !== 'string') return undefined;
  const hash = text.indexOf('#');
  if (hash < 0) return isNodeId(text) ? { node_id: text } : undefined;
  const nodeId = text.slice(0, hash);
  const kid = text.slice(hash + 1);
  return isNodeId(nodeId) && KID.test(kid) ? { node_id: nodeId, kid } : undefined;
}

/**
 * The nodes a declaration names, the revoked node and the attesting quorum, read unchecked so that a
 * store can load (and lock) what `declareRevocation` will look up; validation judges the rest.
 */
export function revocationParties(input: unknown): string[] {
  if (typeof input !== 'object' || input === null) return [];
  const { subject, attestation } = input as { subject?: unknown; attestation?: unknown };
  const quorum = typeof attestation === 'object' && attestation !== null ? (attestation as { quorum?: unknown }).quorum : undefined;
  return [...new Set([parseRevocationSubject(subject)?.node_id, quorum].filter(isNodeId))];
}

/** The bytes a quorum signs to attest a revocation. */
export function revocationMessage(statement: RevocationStatement): Uint8Array {
  return canonicalBytes({ effective_at: statement.effective_at, reason: statement.reason, subject: statement.subject });
}

export interface RevocationContext {
  /** The server's clock: becomes `recorded_at`. */
  readonly now: Instant;
  readonly node: (id: string) => TrustNode | undefined;
  /** Revocations already recorded, so that a revoked member key cannot attest. */
  readonly revocations?: readonly Revocation[];
}

const DECLARATION_MEMBERS = new Set(['subject', 'reason', 'effective_at', 'attestation']);

/** Validates a declaration and returns the revocation to record, stamped with `now`. */
export function declareRevocation(input: unknown, context: RevocationContext): TrustResult<Revocation> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('INVALID_REVOCATION', 'a revocation must be a JSON object');
  const body = input as Record<string, unknown>;
  const unknown = Object.keys(body).find((member) => !DECLARATION_MEMBERS.has(member));
  if (unknown) return failure('INVALID_REVOCATION', `unexpected revocation member "${unknown}"`);
  const subject = parseRevocationSubject(body.subject);
  if (!subject) return failure('INVALID_REVOCATION', 'subject is a node id, or a node id and a key thumbprint as "<node id>#<kid>"');
  if (!REVOCATION_REASONS.includes(body.reason as RevocationReason)) {
    return failure('INVALID_REVOCATION', `reason must be one of ${REVOCATION_REASONS.join(', ')}`);
  }
  const effectiveAtText = body.effective_at ?? formatInstant(context.now);
  const effectiveAt = parseInstant(effectiveAtText);
  if (effectiveAt === undefined) return failure('INVALID_REVOCATION', `effective_at must be ${INSTANT_EXPECTED}`);

  const node = context.node(subject.node_id);
  if (!node) return failure('UNKNOWN_SUBJECT', `there is no node ${subject.node_id}`);
  if (subject.kid !== undefined && !node.keys.some((key) => key.kid === subject.kid)) {
    return failure('UNKNOWN_SUBJECT', `node ${node.id} has no key ${subject.kid}`);
  }

  const statement: RevocationStatement = {
    subject: body.subject as string,
    reason: body.reason as RevocationReason,
    effective_at: effectiveAtText as string,
  };
  const retroactive = effectiveAt < context.now;
  if (body.attestation === undefined) {
    if (retroactive) {
      return failure('MISSING_QUORUM', `effective_at lies before the recording time ${formatInstant(context.now)}; a retroactive revocation needs a quorate attestation`);
    }
  } else {
    const verdict = verifyRevocationAttestation(statement, body.attestation, context);
    if (!verdict.ok) return verdict;
  }
  return success({
    ...statement,
    recorded_at: formatInstant(context.now),
    retroactive,
    ...(body.attestation !== undefined && { attestation: body.attestation as RevocationAttestation }),
  });
}

export interface AttestationVerdict {
  readonly quorum: string;
  readonly method: 'slots' | 'group_signature';
  /** Member kids whose slots counted; empty for a group signature. */
  readonly signers: readonly string[];
}

/** Checks an attestation of `statement` by the quorum node it names, as of `context.now`. */
export function verifyRevocationAttestation(statement: RevocationStatement, attestation: unknown, context: RevocationContext): TrustResult<AttestationVerdict> {
  if (typeof attestation !== 'object' || attestation === null || Array.isArray(attestation)) {
    return failure('BAD_ATTESTATION', 'an attestation is {quorum, slots} or {quorum, group_signature}');
  }
  const body = attestation as Record<string, unknown>;
  const hasSlots = body.slots !== undefined;
  const hasGroup = body.group_signature !== undefined;
  const extra = Object.keys(body).find((member) => !['quorum', 'slots', 'group_signature'].includes(member));
  if (typeof body.quorum !== 'string' || hasSlots === hasGroup || extra) {
    return failure('BAD_ATTESTATION', 'an attestation is {quorum, slots} or {quorum, group_signature}');
  }
  const quorum = context.node(body.quorum);
  if (quorum?.kind !== 'quorum' || quorum.threshold === undefined) {
    return failure('UNKNOWN_QUORUM', `there is no quorum node ${body.quorum}`);
  }
  const message = revocationMessage(statement);

  if (hasGroup) {
    if (!quorum.group_key) return failure('BAD_ATTESTATION', `quorum ${quorum.id} has no pinned group key to verify a group signature`);
    const signature = decodeSignature(body.group_signature);
    const groupKey = publicKeyFromJwk('Ed25519', quorum.group_key)!;
    if (!signature || !verifyBytes('Ed25519', groupKey, message, signature)) {
      return failure('BAD_ATTESTATION', `the group signature does not verify under the group key ${quorum.group_key.kid} of quorum ${quorum.id}`);
    }
    return success({ quorum: quorum.id, method: 'group_signature', signers: [] });
  }

  if (!Array.isArray(body.slots)) return failure('BAD_ATTESTATION', 'slots must be a list of {kid, signature}');
  const signers = new Set<string>();
  for (const [index, slot] of (body.slots as unknown[]).entries()) {
    const { kid, signature: encoded, ...more } = (typeof slot === 'object' && slot !== null ? slot : {}) as Record<string, unknown>;
    // Nothing unverified is stored with an attestation.
    if (typeof kid !== 'string' || Object.keys(more).length > 0) return failure('BAD_ATTESTATION', `slot ${index} is not {kid, signature}`);
    if (signers.has(kid)) return failure('BAD_ATTESTATION', `slot ${index} repeats member key ${kid}`);
    const key = quorum.keys.find((member) => member.kid === kid);
    if (!key) return failure('BAD_ATTESTATION', `slot ${index}: quorum ${quorum.id} has no member key ${kid}`);
    const revokedFrom = keyRevokedFrom(quorum.id, key, context.revocations ?? []);
    if (!keyIsCurrentAt(key, context.now) || (revokedFrom !== undefined && revokedFrom <= context.now)) {
      return failure('BAD_ATTESTATION', `slot ${index}: member key ${kid} is expired or revoked`);
    }
    const alg = signingAlgorithmOf(key);
    const signature = decodeSignature(encoded);
    if (!signature || !verifyBytes(alg, publicKeyFromJwk(alg, key)!, message, signature)) {
      return failure('BAD_ATTESTATION', `slot ${index}: the signature of member key ${kid} does not verify`);
    }
    signers.add(kid);
  }
  if (signers.size < quorum.threshold) {
    return failure('MISSING_QUORUM', `${signers.size} valid member signatures; quorum ${quorum.id} needs ${quorum.threshold}`);
  }
  return success({ quorum: quorum.id, method: 'slots', signers: [...signers] });
}

function decodeSignature(encoded: unknown): Uint8Array | undefined {
  if (typeof encoded !== 'string') return undefined;
  try {
    const bytes = decodeBase64Url(encoded);
    return bytes.length === 64 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/** Parses the query parameters of GET /revocations; any bad value is INVALID_QUERY. */
export function parseRevocationQuery(params: Readonly<Record<string, string | undefined>>): TrustResult<RevocationQuery, 'INVALID_QUERY'> {
  const query: { -readonly [K in keyof RevocationQuery]: RevocationQuery[K] } = {};
  for (const name of ['at', 'known_by'] as const) {
    if (params[name] === undefined) continue;
    const instant = parseInstant(params[name]);
    if (instant === undefined) return failure('INVALID_QUERY', `${name} must be ${INSTANT_EXPECTED}`);
    query[name] = instant;
  }
  if (params.window !== undefined) {
    const window = parseInterval(params.window);
    if (!window) return failure('INVALID_QUERY', 'window must be an RFC 3339 interval start/end with start before end, each end within years 0001 to 9999 in UTC; an open end is empty or ".."');
    query.window = window;
  }
  if (params.subject !== undefined) {
    const subject = parseRevocationSubject(params.subject);
    if (!subject) return failure('INVALID_QUERY', 'subject is a node id or "<node id>#<kid>"');
    query.subject = subject;
  }
  if (params.retroactive !== undefined) {
    if (params.retroactive !== 'true' && params.retroactive !== 'false') return failure('INVALID_QUERY', 'retroactive must be true or false');
    query.retroactive = params.retroactive === 'true';
  }
  return success(query);
}

export function revocationMatches(revocation: Revocation, query: RevocationQuery): boolean {
  const effectiveAt = parseInstant(revocation.effective_at)!;
  if (query.at !== undefined && effectiveAt > query.at) return false;
  if (query.known_by !== undefined && parseInstant(revocation.recorded_at)! > query.known_by) return false;
  if (query.window !== undefined && !intervalContains(query.window, effectiveAt)) return false;
  if (query.retroactive !== undefined && revocation.retroactive !== query.retroactive) return false;
  if (query.subject !== undefined) {
    const subject = parseRevocationSubject(revocation.subject)!;
    if (subject.node_id !== query.subject.node_id) return false;
    if (subject.kid !== undefined && query.subject.kid !== undefined && subject.kid !== query.subject.kid) return false;
  }
  return true;
}

/**
 * The instant from which a node is revoked, by revocation records recorded by `knownBy`
 * (all of them when it is undefined).
 */
export function nodeRevokedFrom(nodeId: string, revocations: readonly Revocation[], knownBy?: Instant): Instant | undefined {
  return earliest(revocations, knownBy, (subject) => subject.node_id === nodeId && subject.kid === undefined);
}

/** The instant from which a key is revoked: its own `revoked` member, or a record of it or of its node. */
export function keyRevokedFrom(nodeId: string, key: NodeKey, revocations: readonly Revocation[], knownBy?: Instant): Instant | undefined {
  const recorded = earliest(revocations, knownBy, (subject) => subject.node_id === nodeId && (subject.kid === undefined || subject.kid === key.kid));
  const own = keyRevokedAt(key);
  if (own === undefined) return recorded;
  return recorded === undefined ? own : Math.min(own, recorded);
}

function earliest(revocations: readonly Revocation[], knownBy: Instant | undefined, affects: (subject: RevocationSubject) => boolean): Instant | undefined {
  let result: Instant | undefined;
  for (const revocation of revocations) {
    if (knownBy !== undefined && parseInstant(revocation.recorded_at)! > knownBy) continue;
    if (!affects(parseRevocationSubject(revocation.subject)!)) continue;
    const effectiveAt = parseInstant(revocation.effective_at)!;
    if (result === undefined || effectiveAt < result) result = effectiveAt;
  }
  return result;
}
