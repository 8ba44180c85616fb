/**
 * The log verdict: everything a verifier can check from the events and the signed head alone.
 *
 * - chain: records in order (seq = position), one passport, prev_hash links, recorded_at never
 *   going back;
 * - replay: the statuses the events lead through obey the transition table (rule I6);
 * - head: the signed head verifies, names this passport and this log's size;
 * - root: the RFC 6962 root of the events equals the head's root_hash;
 * - signatures: every event's Ed25519 signature, counted.
 *
 * Every problem names the event's seq (its position in the list) when it concerns one event.
 */
import { canonicalize, type KeyResolver } from '../../crypto/index.js';
import { isIssuerError } from './errors.js';
import { ATTESTED, eventShapeProblem, eventSignatureFailureAsync, GENESIS_PREV_HASH, signedFormFromUnsigned, type EventFailure, type EventRecord } from './event-log.js';
import { verifyLogHead, type SignedLogHead } from './checkpoint.js';
import { hashToHex, leafHash, merkleRoot, sha256, type Hash } from './merkle.js';
import { applyEvent, INITIAL_STATUS, type PassportStatus } from './status.js';

const utf8 = new TextEncoder();

export type LogProblemCode =
  | 'MALFORMED_EVENT'
  | 'SEQ_OUT_OF_ORDER'
  | 'PASSPORT_MISMATCH'
  | 'PREV_HASH_MISMATCH'
  | 'TIME_REGRESSION'
  | 'ILLEGAL_TRANSITION'
  | 'UNKNOWN_EVENT_TYPE'
  | 'HEAD_MISSING'
  | 'HEAD_SIGNATURE_INVALID'
  | 'HEAD_PASSPORT_MISMATCH'
  | 'HEAD_SIZE_MISMATCH'
  | 'ROOT_MISMATCH'
  | 'SIGNATURE_INVALID';

export interface LogProblem {
  code: LogProblemCode;
  /** The event concerned, by position. */
  seq?: number;
  message: string;
  /** Why a signature did not verify (HEAD_SIGNATURE_INVALID): UNKNOWN_KEY, BAD_SIGNATURE, … */
  reason?: string;
}

export interface SignatureFailure {
  seq: number;
  reason: EventFailure;
  message: string;
}

export interface LogVerdict {
  ok: boolean;
  passport_id: string;
  size: number;
  chain: { ok: boolean; problems: LogProblem[] };
  replay: { ok: boolean; status: PassportStatus; problems: LogProblem[] };
  head: { ok: boolean; checked: boolean; kid?: string; problems: LogProblem[] };
  root: { ok: boolean; checked: boolean; computed: string; signed?: string };
  signatures: { ok: boolean; verified: number; total: number; first_failing_seq: number | null; failures: SignatureFailure[] };
  /** All problems in one list, in the order above. */
  problems: LogProblem[];
}

/**
 * Verifies the log of passport `passportId` against its signed head. `events` are in log order;
 * `head` undefined means no head has been signed, so the head and root checks are not run. The
 * event signatures are checked on the thread pool, all cores at once, while the chain is walked.
 *
 * `texts`, when given, are the stored texts the events were parsed from (same order). The log
 * commits to those bytes as they are, and the signature is checked over the text without its
 * `signature` member, so no event needs canonicalizing again: a text that is not the canonical
 * form fails its signature or its hashes, which is what a verifier should say of it.
 */
export async function verifyLog(events: readonly unknown[], head: SignedLogHead | undefined, resolveKey: KeyResolver, passportId: string, texts?: readonly string[]): Promise<LogVerdict> {
  const chain: LogProblem[] = [];
  const replay: LogProblem[] = [];
  const failures: SignatureFailure[] = [];
  const pending: Promise<SignatureFailure | undefined>[] = [];
  const leaves: Hash[] = [];
  let status: PassportStatus = INITIAL_STATUS;
  let previousDigest = GENESIS_PREV_HASH;
  let previousTime = '';

  events.forEach((value, position) => {
    const shape = eventShapeProblem(value);
    if (shape) {
      chain.push({ code: 'MALFORMED_EVENT', seq: position, message: `event ${position}: ${shape}` });
      failures.push({ seq: position, reason: 'MALFORMED', message: shape });
      // Its canonical form, when it has one, is still what the log committed to.
      const bytes = canonicalBytesOrUndefined(value);
      leaves.push(leafHash(bytes ?? new Uint8Array(0)));
      previousDigest = bytes ? hashToHex(sha256(bytes)) : '';
      return;
    }
    const event = value as EventRecord;
    const { unsignedText, signedBytes } = signedAndUnsigned(event, texts?.[position]);

    if (event.seq !== position) chain.push({ code: 'SEQ_OUT_OF_ORDER', seq: position, message: `event ${position} carries seq ${event.seq}` });
    if (event.passport_id !== passportId) {
      chain.push({ code: 'PASSPORT_MISMATCH', seq: position, message: `event ${position} belongs to passport ${event.passport_id}` });
    }
    if (previousDigest !== '' && event.prev_hash !== previousDigest) {
      chain.push({
        code: 'PREV_HASH_MISMATCH',
        seq: position,
        message: `event ${position} has prev_hash ${event.prev_hash}, but the previous event hashes to ${previousDigest}`,
      });
    }
    if (event.recorded_at < previousTime) {
      chain.push({ code: 'TIME_REGRESSION', seq: position, message: `event ${position} was recorded at ${event.recorded_at}, before event ${position - 1}` });
    }
    previousDigest = hashToHex(sha256(signedBytes));
    previousTime = event.recorded_at;
    leaves.push(leafHash(signedBytes));

    try {
      status = applyEvent(status, event.type);
    } catch (error) {
      if (!isIssuerError(error)) throw error;
      replay.push({ code: error.code === 'ILLEGAL_TRANSITION' ? 'ILLEGAL_TRANSITION' : 'UNKNOWN_EVENT_TYPE', seq: position, message: `event ${position}: ${error.message}` });
    }

    pending.push(signatureFailure(event, unsignedText, resolveKey).then((failure) => failure && { seq: position, ...failure }));
  });
  for (const failure of await Promise.all(pending)) if (failure) failures.push(failure);
  // Malformed records were noted in the walk, the others as their checks ended: back to log order.
  failures.sort((a, b) => a.seq - b.seq);

  const computed = hashToHex(merkleRoot(leaves));
  const headResult = checkHead(passportId, events.length, head, resolveKey);
  const rootChecked = headResult.checked && headResult.sizeMatches;
  const root = {
    ok: rootChecked && head!.root_hash === computed,
    checked: rootChecked,
    computed,
    ...(head && typeof head.root_hash === 'string' ? { signed: head.root_hash } : {}),
  };
  const rootProblems: LogProblem[] = rootChecked && !root.ok ? [{ code: 'ROOT_MISMATCH', message: `the events' Merkle root is ${computed}, the signed head says ${head!.root_hash}` }] : [];
  const signatureProblems = failures.map<LogProblem>((failure) => ({
    code: 'SIGNATURE_INVALID',
    seq: failure.seq,
    message: `event ${failure.seq}: ${failure.reason}: ${failure.message}`,
  }));

  const problems = [...chain, ...replay, ...headResult.problems, ...rootProblems, ...signatureProblems];
  const signatures = {
    ok: failures.length === 0,
    verified: events.length - failures.length,
    total: events.length,
    first_failing_seq: failures[0]?.seq ?? null,
    failures,
  };
  return {
    ok: problems.length === 0,
    passport_id: passportId,
    size: events.length,
    chain: { ok: chain.length === 0, problems: chain },
    replay: { ok: replay.length === 0, status, problems: replay },
    head: { ok: headResult.checked && headResult.problems.length === 0, checked: headResult.checked, ...(headResult.kid ? { kid: headResult.kid } : {}), problems: headResult.problems },
    root,
    signatures,
    problems,
  };
}

async function signatureFailure(event: EventRecord, unsignedText: string, resolveKey: KeyResolver): Promise<Omit<SignatureFailure, 'seq'> | undefined> {
  if (event.trust !== ATTESTED) return { reason: 'NOT_ATTESTED', message: `trust is ${JSON.stringify(event.trust)}, not "Attested"` };
  return eventSignatureFailureAsync(event, utf8.encode(unsignedText), resolveKey);
}

/** The bytes the log commits to, and the text the signature covers. */
function signedAndUnsigned(event: EventRecord, text: string | undefined): { unsignedText: string; signedBytes: Uint8Array } {
  if (text !== undefined) {
    // In the canonical form `signature` is one member, `,"signature":"…"`, between seq and trust.
    const member = `,"signature":${JSON.stringify(event.signature)}`;
    const at = text.indexOf(member);
    const unsignedText = at > 0 && text.indexOf(member, at + 1) < 0 ? text.slice(0, at) + text.slice(at + member.length) : canonicalizeUnsigned(event);
    return { unsignedText, signedBytes: utf8.encode(text) };
  }
  const unsignedText = canonicalizeUnsigned(event);
  return { unsignedText, signedBytes: utf8.encode(signedFormFromUnsigned(unsignedText, event)) };
}

function canonicalizeUnsigned(event: EventRecord): string {
  const { signature: _signature, ...unsigned } = event;
  return canonicalize(unsigned);
}

function checkHead(passportId: string, size: number, head: SignedLogHead | undefined, resolveKey: KeyResolver): { checked: boolean; sizeMatches: boolean; kid?: string; problems: LogProblem[] } {
  if (head === undefined) return { checked: false, sizeMatches: false, problems: [] };
  const check = verifyLogHead(head, resolveKey);
  if (!check.ok) {
    return { checked: true, sizeMatches: false, problems: [{ code: 'HEAD_SIGNATURE_INVALID', reason: check.reason, message: `the log head does not verify: ${check.reason}: ${check.message}` }] };
  }
  const problems: LogProblem[] = [];
  if (head.passport_id !== passportId) problems.push({ code: 'HEAD_PASSPORT_MISMATCH', message: `the log head is for passport ${head.passport_id}` });
  const sizeMatches = head.size === size;
  if (!sizeMatches) problems.push({ code: 'HEAD_SIZE_MISMATCH', message: `the log head covers ${head.size} events, the log has ${size}` });
  return { checked: true, sizeMatches, kid: check.kid, problems };
}

function canonicalBytesOrUndefined(value: unknown): Uint8Array | undefined {
  try {
    return utf8.encode(canonicalize(value));
  } catch {
    return undefined;
  }
}
