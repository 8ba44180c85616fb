/**
 * A passport as it stood at an instant (EN 18222 ReadDPPVersionByIdAndDate), derived from its
 * signed event log alone: the status that the lifecycle events up to then lead to (rule I6's
 * table), and the log head over exactly those events. Events are appended with non-decreasing
 * `recorded_at` (CLOCK_REGRESSION), so the events up to an instant are a prefix of the log and the
 * head at that instant is a prefix of today's: any later head is consistent with it (RFC 9162
 * §2.1.4), which a verifier checks with a consistency proof.
 *
 * Plain data in, plain data out: no database, GraphQL or HTTP.
 */
import type { SignedLogHead } from './checkpoint.js';
import { IssuerError } from './errors.js';
import { eventBytes, type EventRecord } from './event-log.js';
import { appendLeaf, EMPTY_FRONTIER, frontierRoot, hashToHex, leafHash, type Frontier } from './merkle.js';
import { applyEvent, INITIAL_STATUS, type PassportStatus } from './status.js';

/** The log head at an instant: size and RFC 6962 root of the events up to then. */
export interface HeadAt {
  size: number;
  /** Lowercase hex MTH of the first `size` events. */
  root_hash: string;
}

export interface PassportState {
  passport_id: string;
  /** The instant asked about, RFC 3339 UTC (milliseconds). */
  at: string;
  /** The status the log's lifecycle events up to `at` lead to. */
  status: PassportStatus;
  /** How many events the log held at `at`: the head's size. */
  event_count: number;
  head: HeadAt;
  /**
   * The checkpoint the issuer signed over exactly this head (at the last append up to `at`, or at
   * creation for an empty log), verbatim; undefined when none was kept (events appended before
   * heads were kept), when only a consistency proof to a later signed head vouches for it.
   */
  signed_head?: SignedLogHead;
  /** recorded_at of the last event up to `at`; undefined for an empty log. */
  last_event_at?: string;
}

export interface PassportStateInput {
  passport_id: string;
  /** When the passport was created: before it, it did not exist. */
  created_at: Date;
  at: Date;
  /** The log in sequence order from seq 0; events recorded after `at` may follow and are ignored. */
  events: readonly EventRecord[];
  /** The stored canonical signed texts of `events`, when the caller has them (saves canonicalising each again). */
  texts?: readonly string[];
  /** The signed head the store kept for the last event up to `at` (or the empty log's), to check and carry. */
  signed_head?: SignedLogHead;
}

/**
 * The passport's state at `input.at`, or undefined when it did not exist yet. Throws LOG_MISMATCH
 * when the events are not one passport's log from seq 0, or when the signed head offered does not
 * cover exactly the events up to `at`; ILLEGAL_TRANSITION when the log breaks rule I6.
 */
export function passportStateAt(input: PassportStateInput): PassportState | undefined {
  if (input.at.getTime() < input.created_at.getTime()) return undefined;
  const at = input.at.toISOString();
  let status: PassportStatus = INITIAL_STATUS;
  let frontier: Frontier = EMPTY_FRONTIER;
  let lastEventAt: string | undefined;
  const encoder = new TextEncoder();
  for (const [index, event] of input.events.entries()) {
    if (Date.parse(event.recorded_at) > input.at.getTime()) break;
    if (event.passport_id !== input.passport_id || event.seq !== index) {
      throw new IssuerError('LOG_MISMATCH', `event ${index} of passport ${input.passport_id} is seq ${event.seq} of ${event.passport_id}`, {
        reason: 'the events are not the log of this passport in sequence order',
      });
    }
    // recorded_at is toISOString's: texts of one length, which compare as their instants do.
    if (lastEventAt !== undefined && event.recorded_at < lastEventAt) {
      throw new IssuerError('LOG_MISMATCH', `event ${index} was recorded before the one it follows`, { reason: 'recorded_at goes back along the chain' });
    }
    status = applyEvent(status, event.type);
    const text = input.texts?.[index];
    frontier = appendLeaf(frontier, leafHash(text === undefined ? eventBytes(event) : encoder.encode(text)));
    lastEventAt = event.recorded_at;
  }
  const head: HeadAt = { size: frontier.size, root_hash: hashToHex(frontierRoot(frontier)) };
  const signed = input.signed_head;
  if (signed && (signed.passport_id !== input.passport_id || signed.size !== head.size || signed.root_hash !== head.root_hash)) {
    throw new IssuerError('LOG_MISMATCH', `the head kept for size ${head.size} does not cover the events up to ${at}`, {
      reason: `kept head: size ${signed.size}, root ${signed.root_hash}; the log: size ${head.size}, root ${head.root_hash}`,
    });
  }
  return {
    passport_id: input.passport_id,
    at,
    status,
    event_count: head.size,
    head,
    ...(signed ? { signed_head: signed } : {}),
    ...(lastEventAt === undefined ? {} : { last_event_at: lastEventAt }),
  };
}
