/**
 * What every check of the verifier answers: a list of findings and one verdict.
 *
 * A finding is `ok`, `failed` (the material is not what it claims: invalid), `not_checked` (the
 * verifier lacked something to decide: an input, a pinned key) or `info` (context that decides
 * nothing). The verdict is `invalid` when any finding failed, else `unchecked` when any could not
 * be checked, else `valid`; the CLI exits 0, 1 and 2 for them.
 */
export type FindingStatus = 'ok' | 'failed' | 'not_checked' | 'info';

export interface Finding {
  /** What was checked, e.g. `bagit.manifest`, `log.chain`, `path.credential`. */
  readonly check: string;
  readonly status: FindingStatus;
  /** A machine code for failures and unchecked findings, e.g. `PREV_HASH_MISMATCH`. */
  readonly code?: string;
  readonly message: string;
}

export type Verdict = 'valid' | 'invalid' | 'unchecked';

export type MaterialKind = 'pack' | 'log' | 'snapshot' | 'path' | 'manifest';

export interface Report {
  readonly kind: MaterialKind;
  /** What was verified: the pack's passport, the log's passport, the snapshot id, the node. */
  readonly subject: string;
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
}

export const EXIT_CODES: Readonly<Record<Verdict, number>> = { valid: 0, invalid: 1, unchecked: 2 };

export function verdictOf(findings: readonly Finding[]): Verdict {
  if (findings.some((finding) => finding.status === 'failed')) return 'invalid';
  if (findings.some((finding) => finding.status === 'not_checked')) return 'unchecked';
  return 'valid';
}

export function makeReport(kind: MaterialKind, subject: string, findings: readonly Finding[]): Report {
  return { kind, subject, verdict: verdictOf(findings), findings };
}

export const ok = (check: string, message: string): Finding => ({ check, status: 'ok', message });
export const failed = (check: string, code: string, message: string): Finding => ({ check, status: 'failed', code, message });
export const notChecked = (check: string, code: string, message: string): Finding => ({ check, status: 'not_checked', code, message });
export const info = (check: string, message: string): Finding => ({ check, status: 'info', message });

/** Findings whose status is failed, in order: the reasons a material is invalid. */
export function failures(report: Report): Finding[] {
  return report.findings.filter((finding) => finding.status === 'failed');
}

const MARKS: Record<FindingStatus, string> = { ok: 'ok  ', failed: 'FAIL', not_checked: 'SKIP', info: 'info' };
const HEADLINES: Record<Verdict, string> = { valid: 'VALID', invalid: 'INVALID', unchecked: 'COULD NOT CHECK' };

/** The human-readable form: a headline, then one line per finding. */
export function formatReport(report: Report): string {
  const lines = [`${HEADLINES[report.verdict]}: ${report.kind} ${report.subject}`];
  for (const finding of report.findings) {
    lines.push(`  ${MARKS[finding.status]} ${finding.check}${finding.code ? ` [${finding.code}]` : ''}: ${finding.message}`);
  }
  return `${lines.join('\n')}\n`;
}
