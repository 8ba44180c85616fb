/**
 * The signed event log of one passport.
 *
 * An event record is signed JSON (DESIGN §3): its plain members plus `signature`, a detached
 * compact JWS (Ed25519) over the RFC 8785 form of the record without `signature`.
 *
 * The record's *canonical signed form* is the RFC 8785 form of the whole record, `signature`
 * included. It is what the log commits to: each record's `prev_hash` is the lowercase hex SHA-256
 * of the previous record's canonical signed form (the first record has GENESIS_PREV_HASH), and the
 * Merkle tree's leaves are these bytes (leaf hash SHA-256(0x00 || bytes), RFC 6962).
 */
import {
  canonicalBytes,
  canonicalize,
  JwsError,
  normalizeAlgorithm,
  readProtectedHeader,
  signJson,
  verifyDetached,
  verifyDetachedAsync,
  type JwsHeader,
  type Json,
  type JwsFailure,
  type KeyResolver,
  type Signer,
} from '../../crypto/index.js';
import { validateEventPayload, type EventType } from './catalogue.js';
import { IssuerError } from './errors.js';
import { appendLeaf, EMPTY_FRONTIER, hashToHex, leafHash, sha256, type Frontier } from './merkle.js';
import { applyEvent, INITIAL_STATUS, type PassportStatus } from './status.js';

/** The trust marker of events the issuer signs itself (spec: "carries trust marker Attested"). */
export const ATTESTED = 'Attested';

/** prev_hash of the first event: 64 zero hex digits, a value no SHA-256 output is known to take. */
export const GENESIS_PREV_HASH = '0'.repeat(64);

/**
 * Who appended an event (docs/OPERATORS.md): the operator the caller acted for (null: the platform
 * itself) and the credential that authenticated it (a token's id or name, or an access token's
 * `sub`). Covered by the event's signature; events of before operators have none.
 */
export interface EventActor {
  operator: string | null;
  credential: string;
}

export interface EventRecord {
  /** Absent from events appended before operators. */
  actor?: EventActor;
  passport_id: string;
  /** Position in the log, from 0. */
  seq: number;
  type: EventType;
  payload: { [member: string]: Json };
  /** RFC 3339 UTC, when the issuer appended the event. */
  recorded_at: string;
  /** Hex SHA-256 of the previous event's canonical signed form, or GENESIS_PREV_HASH. */
  prev_hash: string;
  trust: typeof ATTESTED;
  /** The signing key's kid (RFC 7638 thumbprint); the JWS header names the same kid. */
  kid: string;
  signature: string;
}

export type UnsignedEventRecord = Omit<EventRecord, 'signature'>;

/** What a client asks to append. */
export interface EventInput {
  passport_id: string;
  type: string;
  payload: unknown;
  actor?: EventActor;
}

/** The canonical signed form: RFC 8785 of the complete record. Merkle leaf and hash-chain input. */
export function eventBytes(event: EventRecord): Uint8Array {
  return canonicalBytes(event);
}

/**
 * The canonical signed form from the canonical form without `signature`, without walking the
 * payload again. In RFC 8785 member order `signature` falls between `seq` and `trust`, and a record
 * of the event shape ends in exactly `,"trust":…,"type":…}`; the signature goes before that tail.
 */
export function signedFormFromUnsigned(unsignedCanonical: string, event: Pick<EventRecord, 'signature' | 'trust' | 'type'>): string {
  const tail = `,"trust":${canonicalize(event.trust)},"type":${canonicalize(event.type)}}`;
  if (!unsignedCanonical.endsWith(tail)) throw new RangeError('not the canonical form of an event record without its signature');
  return `${unsignedCanonical.slice(0, -tail.length)},"signature":${canonicalize(event.signature)}${tail}`;
}

/** Hex SHA-256 of the canonical signed form: the next event's prev_hash. */
export function eventDigest(event: EventRecord): string {
  return hashToHex(sha256(eventBytes(event)));
}

/** The RFC 6962 leaf hash of an event. */
export function eventLeafHash(event: EventRecord): Uint8Array {
  return leafHash(eventBytes(event));
}

/**
 * Builds and signs the event that follows `prev` (undefined for the first event). Validates the
 * payload against the catalogue; does not judge the status transition (see appendEvent).
 */
export function buildEvent(prev: EventRecord | undefined, input: EventInput, signer: Signer, now: Date): EventRecord {
  if (signer.alg !== 'Ed25519') {
    throw new IssuerError('WRONG_SIGNING_ALGORITHM', 'events are signed with Ed25519', { expected: 'Ed25519', actual: signer.alg });
  }
  validateEventPayload(input.type, input.payload);
  if (prev && prev.passport_id !== input.passport_id) {
    throw new IssuerError('LOG_MISMATCH', `the previous event belongs to passport ${prev.passport_id}`, {
      reason: 'the previous event belongs to another passport',
    });
  }
  const recordedAt = now.toISOString();
  if (prev && recordedAt < prev.recorded_at) {
    throw new IssuerError('CLOCK_REGRESSION', `the clock reads ${recordedAt}, before the previous event's ${prev.recorded_at}`, {
      previous: prev.recorded_at,
      now: recordedAt,
    });
  }
  const unsigned: UnsignedEventRecord = {
    ...(input.actor ? { actor: { operator: input.actor.operator, credential: input.actor.credential } } : {}),
    passport_id: input.passport_id,
    seq: prev ? prev.seq + 1 : 0,
    type: input.type,
    // A JSON copy: what is stored is exactly what was signed, and later changes to the caller's
    // object cannot reach the record.
    payload: JSON.parse(canonicalize(input.payload)) as EventRecord['payload'],
    recorded_at: recordedAt,
    prev_hash: prev ? eventDigest(prev) : GENESIS_PREV_HASH,
    trust: ATTESTED,
    kid: signer.kid,
  };
  return signJson(unsigned, signer);
}

/** What the data layer keeps per passport to append without reading the whole log. */
export interface LogState {
  passport_id: string;
  status: PassportStatus;
  last?: EventRecord;
  frontier: Frontier;
}

export function emptyLogState(passportId: string): LogState {
  return { passport_id: passportId, status: INITIAL_STATUS, frontier: EMPTY_FRONTIER };
}

/**
 * The whole append decision: rule I6 first (an illegal transition changes nothing), then the
 * payload, the hash chain and the signature; returns the event and the state after it.
 */
export function appendEvent(state: LogState, input: Omit<EventInput, 'passport_id'>, signer: Signer, now: Date): { event: EventRecord; state: LogState } {
  if ((state.last?.seq ?? -1) + 1 !== state.frontier.size) {
    throw new IssuerError('LOG_MISMATCH', 'the stored frontier does not cover the stored last event', {
      reason: `frontier size ${state.frontier.size}, last seq ${state.last?.seq ?? 'none'}`,
    });
  }
  const status = applyEvent(state.status, input.type);
  const event = buildEvent(state.last, { ...input, passport_id: state.passport_id }, signer, now);
  return {
    event,
    state: { passport_id: state.passport_id, status, last: event, frontier: appendLeaf(state.frontier, eventLeafHash(event)) },
  };
}

export type EventFailure = 'NOT_ATTESTED' | 'KID_MISMATCH' | JwsFailure;

export type EventCheck = { ok: true } | { ok: false; reason: EventFailure; message: string };

/**
 * Checks one record on its own: its shape, the Attested marker, and its Ed25519 signature by the
 * key its `kid` names. Chain and position are the log's business (log-verdict.ts).
 */
export function verifyEvent(event: unknown, resolveKey: KeyResolver): EventCheck {
  const shape = eventShapeProblem(event);
  if (shape) return { ok: false, reason: 'MALFORMED', message: shape };
  const record = event as EventRecord;
  if (record.trust !== ATTESTED) return { ok: false, reason: 'NOT_ATTESTED', message: `trust is ${JSON.stringify(record.trust)}, not "Attested"` };
  const { signature, ...unsigned } = record;
  const failure = eventSignatureFailure(record, new TextEncoder().encode(canonicalize(unsigned)), resolveKey);
  return failure ? { ok: false, ...failure } : { ok: true };
}

export type SignatureFailureReason = { reason: EventFailure; message: string };

/**
 * Checks an event's Ed25519 signature over `unsignedBytes` (the RFC 8785 form of the record without
 * `signature`, which a caller that already has it passes in) with lib/crypto's verifier, and that
 * the JWS names the record's own kid. Events are Ed25519 only: an ES256 JWS by a known key fails.
 */
export function eventSignatureFailure(record: EventRecord, unsignedBytes: Uint8Array, resolveKey: KeyResolver): SignatureFailureReason | undefined {
  try {
    return algorithmFailure(record) ?? kidFailure(record, verifyDetached(record.signature, unsignedBytes, resolveKey).header);
  } catch (error) {
    return jwsFailure(error);
  }
}

/** eventSignatureFailure with the signature checked on the thread pool, for whole logs. */
export async function eventSignatureFailureAsync(record: EventRecord, unsignedBytes: Uint8Array, resolveKey: KeyResolver): Promise<SignatureFailureReason | undefined> {
  try {
    return algorithmFailure(record) ?? kidFailure(record, (await verifyDetachedAsync(record.signature, unsignedBytes, resolveKey)).header);
  } catch (error) {
    return jwsFailure(error);
  }
}

function algorithmFailure(record: EventRecord): SignatureFailureReason | undefined {
  const alg = normalizeAlgorithm(readProtectedHeader(record.signature).alg);
  return alg === 'Ed25519' ? undefined : { reason: 'UNSUPPORTED_ALGORITHM', message: `events are signed with Ed25519, not ${String(alg ?? 'an unknown algorithm')}` };
}

function kidFailure(record: EventRecord, header: JwsHeader): SignatureFailureReason | undefined {
  return header.kid === record.kid ? undefined : { reason: 'KID_MISMATCH', message: `the event names kid ${record.kid} but was signed by ${String(header.kid)}` };
}

function jwsFailure(error: unknown): SignatureFailureReason {
  if (error instanceof JwsError) return { reason: error.reason, message: error.message };
  throw error;
}

const EVENT_MEMBERS = ['actor', 'kid', 'passport_id', 'payload', 'prev_hash', 'recorded_at', 'seq', 'signature', 'trust', 'type'];

/** Why `value` is not an event record, or undefined when it has the record's shape. */
export function eventShapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'an event is a JSON object';
  const record = value as Record<string, unknown>;
  const extra = Object.keys(record).filter((member) => !EVENT_MEMBERS.includes(member));
  if (extra.length > 0) return `unexpected members: ${extra.join(', ')}`;
  for (const member of ['passport_id', 'type', 'recorded_at', 'prev_hash', 'kid', 'signature', 'trust']) {
    if (typeof record[member] !== 'string') return `"${member}" must be a string`;
  }
  if (!Number.isSafeInteger(record.seq) || (record.seq as number) < 0) return '"seq" must be a non-negative integer';
  if (typeof record.payload !== 'object' || record.payload === null || Array.isArray(record.payload)) return '"payload" must be an object';
  if (!/^[0-9a-f]{64}$/.test(record.prev_hash as string)) return '"prev_hash" must be 64 lowercase hex digits';
  if (record.actor !== undefined && actorShapeProblem(record.actor)) return `"actor" ${actorShapeProblem(record.actor)}`;
  return undefined;
}

function actorShapeProblem(actor: unknown): string | undefined {
  if (typeof actor !== 'object' || actor === null || Array.isArray(actor)) return 'must be an object';
  const { operator, credential, ...rest } = actor as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return `has unexpected members: ${Object.keys(rest).join(', ')}`;
  if (operator !== null && typeof operator !== 'string') return 'must name its operator as a string, or null for the platform';
  if (typeof credential !== 'string') return 'must name its credential as a string';
  return undefined;
}
