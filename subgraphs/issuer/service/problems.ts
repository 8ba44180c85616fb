/**
 * How the issuer's use cases answer what they refuse: the domain's refusals, an append held by an
 * unacknowledged restore and the one-live-passport rule as RFC 9457 problems (for `refusing`,
 * lib/problem.ts), and documents no store or signature could hold refused up front.
 */
import { canonicalize } from '../../../lib/crypto/index.js';
import { conflict, ProblemError, unprocessable } from '../../../lib/problem.js';
import { RestoreUnacknowledged } from '../data/passport-repository.js';
import { isIssuerError, type IssuerError, type PassportIdentity } from '../domain/index.js';

/** How each domain refusal is answered. */
const STATUS_OF: Record<IssuerError['code'], number> = {
  INVALID_IDENTITY: 422,
  UNKNOWN_CAPABILITY_CLASS: 422,
  ILLEGAL_TRANSITION: 409,
  UNKNOWN_EVENT_TYPE: 422,
  INVALID_EVENT_PAYLOAD: 422,
  LOG_MISMATCH: 409,
  CLOCK_REGRESSION: 409,
  WRONG_SIGNING_ALGORITHM: 500,
  INVALID_PACK_CLAIMS: 500,
  PACK_OVER_BUDGET: 422,
  INVALID_BUDGET: 500,
  MALFORMED_PACK: 500,
  INVALID_DISCLOSURE: 422,
};

export function problemFromIssuerError(error: IssuerError): ProblemError {
  return new ProblemError(STATUS_OF[error.code], error.code, error.message, { ...error.details });
}

/** The issuer's refusals as problems (for `refusing`); undefined for any other error. */
export function issuerProblem(error: unknown): ProblemError | undefined {
  return isIssuerError(error) ? problemFromIssuerError(error) : undefined;
}

/** Seconds a client whose append an unacknowledged restore holds is told to wait: an operator has to act first. */
const RESTORE_RETRY_AFTER_SECONDS = 60;

/** An append held by an unacknowledged restore, as a problem (for `refusing`); undefined for any other error. */
export function heldByRestoreProblem(error: unknown): ProblemError | undefined {
  if (!(error instanceof RestoreUnacknowledged)) return undefined;
  const { restoredAt, snapshotAt } = error.restore;
  return new ProblemError(
    503,
    'RESTORE_UNACKNOWLEDGED',
    `The platform was restored at ${restoredAt}${snapshotAt ? ` to a backup as of ${snapshotAt}` : ''}, and appends are held until an admin acknowledges the restore (POST /admin/restore/acknowledgement), so that no sequence number signed before it is signed again.`,
    { retry_after: RESTORE_RETRY_AFTER_SECONDS, restored_at: restoredAt, snapshot_at: snapshotAt },
  );
}

/** The one-live-passport rule's refusal of an identity's passport, naming the live passport (the REST facade adds its URL). */
export function livePassportProblem(live: { id: string; status: string }, identity: PassportIdentity): ProblemError {
  return conflict(
    'LIVE_PASSPORT_EXISTS',
    `the ${identity.granularity} ${identity.digital_link} already has a live passport, ${live.id} (${live.status}); a new one may be issued once it is revoked or at end of life`,
    { passport_id: live.id, passport_status: live.status, identity: identity.digital_link, granularity: identity.granularity },
  );
}

/** An item of a creation of many passports, refused, by its index. */
export interface ItemRefusal {
  index: number;
  problem: ProblemError;
}

/**
 * A creation of many passports refused as a whole: one problem naming each refused item by its
 * index, with its own status, code and detail. 409 when every refusal is the one-live-passport
 * rule's (the state, not the request, stands in the way), else 422.
 */
export function batchRefused(refused: readonly ItemRefusal[], count: number): ProblemError {
  const status = refused.every(({ problem }) => problem.problem.status === 409) ? 409 : 422;
  const indexes = refused.map(({ index }) => index);
  const named = indexes.length > 10 ? `${indexes.slice(0, 10).join(', ')} and ${indexes.length - 10} more` : indexes.join(', ');
  return new ProblemError(
    status,
    'BATCH_REFUSED',
    `${refused.length} of the ${count} passports ${refused.length === 1 ? 'was' : 'were'} refused (item${refused.length === 1 ? '' : 's'} ${named}); none was created.`,
    {
      items: refused.map(({ index, problem: { problem: item } }) => {
        const { type: _type, title: _title, ...details } = item;
        return { index, ...details };
      }),
    },
  );
}

/**
 * Documents are signed and hashed in their RFC 8785 form, which lone surrogates do not have; and
 * PostgreSQL's json and text cannot hold U+0000. Both are refused up front, never a 500.
 */
export function refuseUnrepresentable(value: unknown, member: string, options: { allowNul: boolean } = { allowNul: false }): void {
  let text: string;
  try {
    text = canonicalize(value);
  } catch (error) {
    throw unprocessable('UNSUPPORTED_CHARACTER', `${member} has no RFC 8785 form: ${(error as Error).message}`);
  }
  if (!options.allowNul && text.includes('\\u0000')) throw unprocessable('UNSUPPORTED_CHARACTER', `${member} contains U+0000, which cannot be stored`);
}
