/**
 * A passport's event log and signed log head, offline: the issuer's own log verdict (verifyLog:
 * order, hash chain, transitions, head signature, Merkle root, every event signature) under pinned
 * keys only, and each signing key in force when it signed.
 */
import { keySetResolver, type PublicJwk } from '../lib/crypto/index.js';
import { verifyLogHead, type SignedLogHead } from '../lib/formats/issuer/checkpoint.js';
import { verifyLog, type LogVerdict } from '../lib/formats/issuer/log-verdict.js';
import { failed, makeReport, notChecked, ok, type Finding, type Report } from './report.js';
import { hasPinnedKeys, InputError, jwsKid, keyLifetimeProblem, pinnedKey, pinnedResolver, unresolvedReason, type PinSet } from './pins.js';

/** A log as exported: the passport, its events in log order, its signed head. */
export interface LogExport {
  readonly passportId: string;
  readonly events: readonly unknown[];
  readonly head?: unknown;
  /** The exact texts of the events when they came as lines (a snapshot's events.jsonl). */
  readonly texts?: readonly string[];
}

/**
 * Reads an exported log: GraphQL `passport(id) { id events logHead }` (the whole answer, its `data`
 * or the passport object), or the issuer's REST `GET /passports/{id}?include_events=true`.
 */
export function logExportFrom(value: unknown): LogExport {
  let passport = value as Record<string, unknown> | null;
  const data = (passport?.data as Record<string, unknown> | undefined) ?? passport;
  if (data && typeof data.passport === 'object') passport = data.passport as Record<string, unknown> | null;
  if (typeof passport !== 'object' || passport === null) throw new InputError('MALFORMED_EXPORT', 'the export holds no passport');
  const passportId = passport.id ?? passport.passport_id;
  const events = passport.events ?? passport.log;
  const head = passport.logHead ?? passport.log_head;
  if (typeof passportId !== 'string' || !Array.isArray(events)) {
    throw new InputError('MALFORMED_EXPORT', 'an exported log is passport(id) { id events logHead } (or REST passport_id, log, log_head)');
  }
  return { passportId, events, ...(head !== undefined && head !== null && { head }) };
}

/** Reads JSON Lines as a snapshot stores events: one canonical event per line, each ending in LF. */
export function eventsFromJsonLines(text: string): { events: unknown[]; texts: string[] } {
  if (text !== '' && !text.endsWith('\n')) throw new InputError('MALFORMED_EXPORT', 'the events file does not end with a line feed');
  const texts = text === '' ? [] : text.slice(0, -1).split('\n');
  const events = texts.map((line, index) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new InputError('MALFORMED_EXPORT', `line ${index + 1} of the events file is not JSON`);
    }
  });
  return { events, texts };
}

export async function verifyLogExport(log: LogExport, pins: PinSet, material: readonly PublicJwk[] = [], check = 'log'): Promise<Report> {
  const findings: Finding[] = [];
  if (!hasPinnedKeys(pins)) {
    findings.push(notChecked(`${check}.signatures`, 'NO_PINNED_KEY', 'no key is pinned: give the issuer keyring (or its kids) with --pin'));
    return makeReport('log', log.passportId, findings);
  }
  const resolver = pinnedResolver(pins, material);
  const verdict = await verifyLog(log.events, log.head as SignedLogHead | undefined, resolver.resolve, log.passportId, log.texts);
  findings.push(...logFindings(verdict, log, pins, material, check));
  return makeReport('log', log.passportId, findings);
}

function logFindings(verdict: LogVerdict, log: LogExport, pins: PinSet, material: readonly PublicJwk[], check: string): Finding[] {
  const findings: Finding[] = [];
  const problems = (name: string, list: readonly { code: string; message: string }[], good: string) => {
    if (list.length === 0) findings.push(ok(`${check}.${name}`, good));
    for (const problem of list) findings.push(failed(`${check}.${name}`, problem.code, problem.message));
  };
  problems('chain', verdict.chain.problems, `${verdict.size} events in order, one passport, prev_hash links intact, time never going back`);
  problems('transitions', verdict.replay.problems, `every status transition is allowed (rule I6); status ${verdict.replay.status}`);
  if (log.head === undefined) findings.push(failed(`${check}.head`, 'HEAD_MISSING', 'the export has no signed log head'));
  else {
    const unresolvedHead = verdict.head.problems.find((problem) => problem.code === 'HEAD_SIGNATURE_INVALID' && problem.reason === 'UNKNOWN_KEY');
    if (unresolvedHead) findings.push(unresolvedFinding(`${check}.head`, pins, jwsKid((log.head as { signature?: unknown }).signature)));
    else problems('head', verdict.head.problems, `the log head of size ${verdict.size} verifies under pinned key ${verdict.head.kid}`);
  }
  if (verdict.root.checked) {
    findings.push(
      verdict.root.ok
        ? ok(`${check}.root`, `the events' RFC 6962 root ${verdict.root.computed} is the signed root`)
        : failed(`${check}.root`, 'ROOT_MISMATCH', `the events' Merkle root is ${verdict.root.computed}, the signed head says ${verdict.root.signed}`),
    );
  }
  const failedSeqs = new Set<number>();
  for (const failure of verdict.signatures.failures) {
    failedSeqs.add(failure.seq);
    if (failure.reason === 'UNKNOWN_KEY') {
      const kid = (log.events[failure.seq] as { kid?: unknown }).kid;
      const finding = unresolvedFinding(`${check}.signatures`, pins, String(kid));
      findings.push({ ...finding, message: `event ${failure.seq}: ${finding.message}` });
    } else findings.push(failed(`${check}.signatures`, failure.reason === 'BAD_SIGNATURE' ? 'EVENT_SIGNATURE_INVALID' : failure.reason, `event ${failure.seq}: ${failure.message}`));
  }
  if (verdict.signatures.failures.length === 0) findings.push(ok(`${check}.signatures`, `all ${verdict.signatures.total} event signatures verify under pinned keys`));

  // Each key in force at every instant it signed: events at recorded_at, the head at its timestamp.
  const uses = new Map<string, string[]>();
  log.events.forEach((value, seq) => {
    const event = value as { kid?: unknown; recorded_at?: unknown };
    if (!failedSeqs.has(seq) && typeof event.kid === 'string' && typeof event.recorded_at === 'string') uses.set(event.kid, [...(uses.get(event.kid) ?? []), event.recorded_at]);
  });
  if (verdict.head.ok && verdict.head.kid) uses.set(verdict.head.kid, [...(uses.get(verdict.head.kid) ?? []), String((log.head as { timestamp?: unknown }).timestamp)]);
  for (const [kid, instants] of uses) {
    const key = pinnedKey(pins, kid, material);
    if (!key) continue;
    const problem = instants.map((at) => keyLifetimeProblem(key, at)).find((found) => found !== undefined);
    findings.push(problem ? failed(`${check}.key_lifetime`, 'KEY_NOT_IN_FORCE', problem) : ok(`${check}.key_lifetime`, `key ${kid} was in force at each of its ${instants.length} signatures`));
  }
  return findings;
}

function unresolvedFinding(check: string, pins: PinSet, kid: string): Finding {
  const why = unresolvedReason(pins, kid);
  return why.code === 'KEY_NOT_PINNED' ? failed(check, why.code, why.message) : notChecked(check, why.code, why.message);
}

/**
 * A log head fetched after the pack was signed (the page's optional online check): signed by an
 * Ed25519 key the issuer lists (`issuerKeys`, as its trust path material gives them), about this
 * passport. Its size, or undefined when it is not the issuer's word on this passport.
 */
export function latestLogHeadSize(head: unknown, issuerKeys: readonly PublicJwk[], passportId: string): number | undefined {
  const checked = verifyLogHead(head, keySetResolver(issuerKeys.filter((key) => key.kty === 'OKP')));
  return checked.ok && (head as SignedLogHead).passport_id === passportId ? (head as SignedLogHead).size : undefined;
}
