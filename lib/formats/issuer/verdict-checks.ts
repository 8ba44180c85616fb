/**
 * The checks of the issuer's full-pipeline verdict (GET /passports/{id}/verdict), in the order the
 * verdict lists them, and the outcomes it answers: the wire vocabulary the issuer computes
 * (subgraphs/issuer/domain/verdict.ts), its discovery document publishes (`verdict_checks`) and the
 * REST facade's OpenAPI document enumerates.
 */
export const VERDICT_CHECKS = [
  { check: 'log.chain', description: 'events are in order, of this passport, hash-chained, with non-decreasing recorded_at' },
  { check: 'log.transitions', description: 'the events lead through legal status transitions (rule I6)' },
  { check: 'log.status', description: "the passport's status is the status its events lead to" },
  { check: 'log.head_signature', description: 'the log head is signed by the issuer, names this passport and covers the whole log' },
  { check: 'log.root', description: "the RFC 6962 root of the events equals the signed head's root" },
  { check: 'events.signatures', description: 'every event carries a valid Ed25519 signature and the Attested marker' },
  { check: 'pack.signature', description: 'the latest Tier-A pack verifies (ES256 carrier signature; embedded log head for class verify-offline)' },
  { check: 'pack.head', description: "the pack's log size and root equal the current log" },
  { check: 'pack.status', description: "the pack's status equals the passport's current status" },
  { check: 'key_standing.event', description: 'every event key was in good standing whenever it signed' },
  { check: 'key_standing.log_head', description: 'the log head key was in good standing when it signed' },
  { check: 'key_standing.pack', description: 'the pack carrier key was in good standing when it signed' },
] as const;

export type VerdictCheck = (typeof VERDICT_CHECKS)[number]['check'];

/** What became of one check. */
export const CHECK_OUTCOMES = ['passed', 'failed', 'not_run'] as const;
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];

/** The verdict as a whole: every check passed, one failed, or none failed and some did not run. */
export const VERDICT_OUTCOMES = ['verified', 'failed', 'incomplete'] as const;
export type VerdictOutcome = (typeof VERDICT_OUTCOMES)[number];
