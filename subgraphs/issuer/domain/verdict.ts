/**
 * The full-pipeline verdict: the log verdict, the event signature audit, the pack verdict and the
 * standing of every signing key at the time it signed (answered by the trust service), combined
 * into one outcome with coverage: which checks ran, out of how many, and why the others did not.
 *
 * Key standing is asked per signing role and kid at the first and the last time the key signed in
 * that role: a key's good standing is one interval (from its issue until its revocation takes
 * effect), so good standing at both ends covers every use between them.
 */
import { readProtectedHeader } from '../../../lib/crypto/index.js';
import type { SignedLogHead } from '../../../lib/formats/issuer/checkpoint.js';
import type { EventRecord } from '../../../lib/formats/issuer/event-log.js';
import type { LogVerdict, SignatureFailure } from '../../../lib/formats/issuer/log-verdict.js';
import type { PackCheck } from '../../../lib/formats/issuer/pack.js';
import type { PassportStatus } from '../../../lib/formats/issuer/status.js';
import type { KeyStandingValue } from '../../../lib/formats/trust/key-standing.js';
import { VERDICT_CHECKS, type CheckOutcome, type VerdictCheck, type VerdictOutcome } from '../../../lib/formats/issuer/verdict-checks.js';

export type SigningRole = 'event' | 'log_head' | 'pack';

/** A key's use in one role, from its first to its last signature. */
export interface KeyUse {
  role: SigningRole;
  kid: string;
  first_used: string;
  last_used: string;
}

/**
 * The trust service's answer for one key at one instant (the contract's `trustKeyStanding`). Only
 * `valid` is good standing; `unknown` means trust cannot say, which leaves the check not run.
 */
export interface KeyStanding {
  kid: string;
  at: string;
  standing: KeyStandingValue;
  reason?: string;
}

/** The (kid, instant) questions to put to the trust service for this passport. */
export function keyUses(events: readonly EventRecord[], head: SignedLogHead | undefined, pack: PackCheck | undefined): KeyUse[] {
  const uses = new Map<string, KeyUse>();
  const note = (role: SigningRole, kid: string, at: string): void => {
    const key = `${role} ${kid}`;
    const use = uses.get(key);
    if (!use) uses.set(key, { role, kid, first_used: at, last_used: at });
    else {
      if (at < use.first_used) use.first_used = at;
      if (at > use.last_used) use.last_used = at;
    }
  };
  for (const event of events) note('event', event.kid, event.recorded_at);
  if (head) {
    const kid = headKid(head);
    if (kid !== undefined) note('log_head', kid, head.timestamp);
  }
  if (pack?.claims && pack.kid !== undefined) note('pack', pack.kid, new Date(pack.claims.iat * 1000).toISOString());
  return [...uses.values()];
}

/** One key's signatures on a passport's events, from the first to the last (as the event store keeps them). */
export interface EventKeyRange {
  kid: string;
  first_used: string;
  last_used: string;
}

/**
 * The same uses as keyUses, from the event store's summary of which keys signed events and when
 * rather than from the events themselves: what a list of passports needs without reading every log.
 */
export function signingKeyUses(eventKeys: readonly EventKeyRange[], head: SignedLogHead | undefined, pack: Pick<PackCheck, 'claims' | 'kid'> | undefined): KeyUse[] {
  const uses: KeyUse[] = eventKeys.map((range) => ({ role: 'event', kid: range.kid, first_used: range.first_used, last_used: range.last_used }));
  const kid = head && headKid(head);
  if (head && kid !== undefined) uses.push({ role: 'log_head', kid, first_used: head.timestamp, last_used: head.timestamp });
  if (pack?.claims && pack.kid !== undefined) {
    const at = new Date(pack.claims.iat * 1000).toISOString();
    uses.push({ role: 'pack', kid: pack.kid, first_used: at, last_used: at });
  }
  return uses;
}

/** Every instant keyUses asks about, as the trust service is to be queried. */
export function standingQuestions(uses: readonly KeyUse[]): { kid: string; at: string }[] {
  const questions = new Map<string, { kid: string; at: string }>();
  for (const use of uses) {
    for (const at of [use.first_used, use.last_used]) questions.set(`${use.kid} ${at}`, { kid: use.kid, at });
  }
  return [...questions.values()];
}

export interface CheckResult {
  check: VerdictCheck;
  outcome: CheckOutcome;
  detail: string;
}

export interface VerdictInput {
  passport: { id: string; status: PassportStatus };
  log: LogVerdict;
  /** The verification of the latest pack; undefined when none has been minted. */
  pack?: PackCheck;
  /**
   * The signing uses (keyUses) and the trust service's answers; `unavailable` says why the trust
   * service could not answer; undefined when it was not consulted.
   */
  key_standing?: { uses: readonly KeyUse[]; answers: readonly KeyStanding[] } | { unavailable: string };
}

export interface PassportVerdict {
  passport_id: string;
  outcome: VerdictOutcome;
  log_verdict: Omit<LogVerdict, 'signatures'>;
  event_signature_audit: { verified: number; total: number; first_failing_seq: number | null; failures: SignatureFailure[] };
  pack_verdict: { present: boolean; ok: boolean; kid?: string; capability_class?: string; reason?: string; message?: string };
  checks: CheckResult[];
  coverage: { checks_run: number; checks_total: number; not_run: { check: VerdictCheck; why: string }[] };
}

export function assembleVerdict(input: VerdictInput): PassportVerdict {
  const { log, pack, passport } = input;
  const results = new Map<VerdictCheck, Omit<CheckResult, 'check'>>();
  const passed = (check: VerdictCheck, detail: string) => results.set(check, { outcome: 'passed', detail });
  const failed = (check: VerdictCheck, detail: string) => results.set(check, { outcome: 'failed', detail });
  const notRun = (check: VerdictCheck, detail: string) => results.set(check, { outcome: 'not_run', detail });
  const judge = (check: VerdictCheck, ok: boolean, good: string, problems: readonly { message: string }[]) =>
    ok ? passed(check, good) : failed(check, problems.map((problem) => problem.message).join('; '));

  judge('log.chain', log.chain.ok, `${log.size} events chained from the genesis value`, log.chain.problems);
  judge('log.transitions', log.replay.ok, `every status change of the ${log.size} events is in the transition table`, log.replay.problems);
  if (!log.replay.ok) notRun('log.status', 'the events do not replay to a status (see log.transitions)');
  else if (log.replay.status === passport.status) passed('log.status', `the events lead to ${passport.status}`);
  else failed('log.status', `the passport is ${passport.status}, but its events lead to ${log.replay.status}`);

  if (!log.head.checked) {
    notRun('log.head_signature', 'no log head has been signed');
    notRun('log.root', 'no log head has been signed');
  } else {
    judge('log.head_signature', log.head.ok, `signed by ${log.head.kid}, covering ${log.size} events`, log.head.problems);
    if (!log.root.checked) notRun('log.root', 'the log head does not verify or does not cover this log');
    else if (log.root.ok) passed('log.root', `root ${log.root.computed}`);
    else failed('log.root', `the events' root is ${log.root.computed}, the signed head says ${log.root.signed}`);
  }

  const audit = log.signatures;
  if (audit.ok) passed('events.signatures', `${audit.verified} of ${audit.total} event signatures verified`);
  else {
    failed('events.signatures', `${audit.verified} of ${audit.total} event signatures verified; first failure at seq ${audit.first_failing_seq}: ${audit.failures[0]!.reason}`);
  }

  if (!pack) {
    for (const check of ['pack.signature', 'pack.head', 'pack.status', 'key_standing.pack'] as const) notRun(check, 'no pack has been minted');
  } else if (!pack.ok) {
    failed('pack.signature', `${pack.reason}: ${pack.message}`);
    notRun('pack.head', 'the pack does not verify, so its claims are not evidence');
    notRun('pack.status', 'the pack does not verify, so its claims are not evidence');
  } else {
    passed('pack.signature', `ES256 carrier signature by ${pack.kid}${pack.log_head_signature === 'verified' ? ', embedded log head verified' : ''}`);
    const { size, root_hash } = pack.claims.log;
    if (size === log.size && root_hash === log.root.computed) passed('pack.head', `minted at the current head (size ${size})`);
    else failed('pack.head', `minted at size ${size}, root ${root_hash}; the log now has size ${log.size}, root ${log.root.computed}`);
    if (pack.claims.status === passport.status) passed('pack.status', `the pack says ${passport.status}`);
    else failed('pack.status', `the pack says ${pack.claims.status}, the passport is ${passport.status}`);
  }

  const roles: { role: SigningRole; check: VerdictCheck; skip?: string }[] = [
    { role: 'event', check: 'key_standing.event' },
    { role: 'log_head', check: 'key_standing.log_head', ...(log.head.checked ? {} : { skip: 'no log head has been signed' }) },
    { role: 'pack', check: 'key_standing.pack', ...(pack ? {} : { skip: 'no pack has been minted' }) },
  ];
  for (const { role, check, skip } of roles) {
    if (skip) notRun(check, skip);
    else if (!input.key_standing) notRun(check, 'the trust service was not consulted');
    else if ('unavailable' in input.key_standing) notRun(check, `the trust service could not answer: ${input.key_standing.unavailable}`);
    else judgeStanding(check, role, input.key_standing, { passed, failed, notRun });
  }

  const checks = VERDICT_CHECKS.map(({ check }) => ({ check, ...results.get(check)! }));
  const notRunList = checks.filter((result) => result.outcome === 'not_run').map(({ check, detail }) => ({ check, why: detail }));
  const outcome = checks.some((result) => result.outcome === 'failed') ? 'failed' : notRunList.length > 0 ? 'incomplete' : 'verified';
  const { signatures, ...logVerdict } = log;
  return {
    passport_id: passport.id,
    outcome,
    log_verdict: logVerdict,
    event_signature_audit: {
      verified: signatures.verified,
      total: signatures.total,
      first_failing_seq: signatures.first_failing_seq,
      failures: signatures.failures,
    },
    pack_verdict: !pack
      ? { present: false, ok: false }
      : pack.ok
        ? { present: true, ok: true, kid: pack.kid, capability_class: pack.claims.capability_class }
        : {
            present: true,
            ok: false,
            reason: pack.reason,
            message: pack.message,
            ...(pack.kid !== undefined ? { kid: pack.kid } : {}),
            ...(pack.claims ? { capability_class: pack.claims.capability_class } : {}),
          },
    checks,
    coverage: { checks_run: checks.length - notRunList.length, checks_total: checks.length, not_run: notRunList },
  };
}

function judgeStanding(
  check: VerdictCheck,
  role: SigningRole,
  standing: { uses: readonly KeyUse[]; answers: readonly KeyStanding[] },
  record: Record<'passed' | 'failed' | 'notRun', (check: VerdictCheck, detail: string) => unknown>,
): void {
  const uses = standing.uses.filter((use) => use.role === role);
  if (uses.length === 0) {
    record.passed(check, role === 'event' ? 'the log has no events, so no event key signed' : `no ${role} key signed`);
    return;
  }
  const bad: string[] = [];
  const unknown: string[] = [];
  for (const use of uses) {
    for (const at of new Set([use.first_used, use.last_used])) {
      const answer = standing.answers.find((candidate) => candidate.kid === use.kid && candidate.at === at);
      if (!answer || answer.standing === 'unknown') unknown.push(`${use.kid} at ${at}`);
      else if (answer.standing !== 'valid') bad.push(`${use.kid} at ${at}: ${answer.standing}${answer.reason ? ` (${answer.reason})` : ''}`);
    }
  }
  if (bad.length > 0) record.failed(check, `not in good standing when it signed: ${bad.join(', ')}`);
  else if (unknown.length > 0) record.notRun(check, `the trust service has no standing for ${unknown.join(', ')}`);
  else record.passed(check, `in good standing: ${uses.map((use) => `${use.kid} (${use.first_used} to ${use.last_used})`).join(', ')}`);
}

function headKid(head: SignedLogHead): string | undefined {
  try {
    const kid = readProtectedHeader(head.signature).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}
