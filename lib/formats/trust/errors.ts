/**
 * Outcomes of the trust domain. Every check that can fail for a reason the API reports returns a
 * TrustResult: the value, or a machine code (UPPER_SNAKE) with a human message. The API turns a
 * failure into an RFC 9457 problem with the HTTP status listed here (DESIGN §3).
 */

/** Machine codes, each with the HTTP status the API answers it with. */
export const TRUST_ERROR_STATUS = {
  // Nodes and their keys
  INVALID_NODE: 422,
  INVALID_KEY: 422,
  KEY_CONFLICT: 409,
  NODE_CONFLICT: 409,
  // Delegation credentials (edges)
  MALFORMED_CREDENTIAL: 422,
  UNKNOWN_ISSUER: 422,
  UNKNOWN_SUBJECT: 422,
  BAD_SIGNATURE: 422,
  REVOKED_KEY: 422,
  KEY_NOT_CURRENT: 422,
  NOT_YET_VALID: 422,
  EXPIRED: 422,
  WIDENED_SCOPE: 422,
  CYCLE: 422,
  // Path resolution (what a verifier asks of the graph)
  UNKNOWN_NODE: 404,
  NO_PATH: 422,
  // Trust lists
  INVALID_TRUST_LIST: 422,
  TRUST_LIST_EXISTS: 409,
  UNKNOWN_TRUST_LIST: 404,
  INVALID_ENTRY: 422,
  UNKNOWN_ENTRY: 422,
  ENTRY_CONFLICT: 409,
  // Master list
  INVALID_WITNESS_SET: 422,
  INVALID_MASTER_LIST_ENTRY: 422,
  // Revocations
  INVALID_REVOCATION: 422,
  UNKNOWN_QUORUM: 422,
  MISSING_QUORUM: 422,
  BAD_ATTESTATION: 422,
  INVALID_QUERY: 400,
} as const satisfies Record<string, 400 | 404 | 409 | 422>;

export type TrustErrorCode = keyof typeof TRUST_ERROR_STATUS;

export interface TrustFailure<C extends TrustErrorCode = TrustErrorCode> {
  readonly ok: false;
  readonly code: C;
  readonly message: string;
}

export interface TrustSuccess<T> {
  readonly ok: true;
  readonly value: T;
}

export type TrustResult<T, C extends TrustErrorCode = TrustErrorCode> = TrustSuccess<T> | TrustFailure<C>;

export function success<T>(value: T): TrustSuccess<T> {
  return { ok: true, value };
}

export function failure<C extends TrustErrorCode>(code: C, message: string): TrustFailure<C> {
  return { ok: false, code, message };
}

export function httpStatusOf(code: TrustErrorCode): 400 | 404 | 409 | 422 {
  return TRUST_ERROR_STATUS[code];
}
