/**
 * Errors the issuer domain raises when it refuses an input. Each carries a machine `code` and a
 * typed `details` record that the API layer copies into its RFC 9457 problem document.
 *
 * Verification never throws these: checks on stored data answer with verdicts instead, so that a
 * broken log is reported, not crashed on.
 */
export interface SchemaViolation {
  /** JSON Pointer (RFC 6901) into the payload. */
  pointer: string;
  message: string;
}

/** The details each code carries. */
export interface IssuerErrorDetails {
  INVALID_IDENTITY: { reason: IdentityFailure; identity: string };
  UNKNOWN_CAPABILITY_CLASS: { capability_class: string };
  /** `from` is a PassportStatus (status.ts), kept as text so that errors.ts depends on nothing. */
  ILLEGAL_TRANSITION: { rule: 'I6'; from: string; event: string };
  UNKNOWN_EVENT_TYPE: { event: string };
  INVALID_EVENT_PAYLOAD: { event: string; violations: SchemaViolation[] };
  LOG_MISMATCH: { reason: string };
  CLOCK_REGRESSION: { previous: string; now: string };
  WRONG_SIGNING_ALGORITHM: { expected: string; actual: string };
  INVALID_PACK_CLAIMS: { reason: string };
  PACK_OVER_BUDGET: { size: number; budget: number };
  INVALID_BUDGET: { budget: number };
  MALFORMED_PACK: { reason: string };
  INVALID_DISCLOSURE: { reason: string };
}

export type IssuerErrorCode = keyof IssuerErrorDetails;

/** Why an identity was refused; see identity.ts. */
export type IdentityFailure =
  | 'NOT_A_URI'
  | 'UNSUPPORTED_SCHEME'
  | 'MISSING_GTIN'
  | 'BAD_GTIN_LENGTH'
  | 'BAD_GTIN_CHECK_DIGIT'
  | 'BAD_KEY_QUALIFIER'
  | 'BAD_AI_VALUE'
  | 'QUERY_OR_FRAGMENT'
  | 'BAD_EPC_URN'
  | 'GRANULARITY_MISMATCH';

export class IssuerError<C extends IssuerErrorCode = IssuerErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    readonly details: IssuerErrorDetails[C],
  ) {
    super(message);
    this.name = 'IssuerError';
  }

  toJSON(): { code: C; message: string } & IssuerErrorDetails[C] {
    return { code: this.code, message: this.message, ...this.details };
  }
}

export function isIssuerError<C extends IssuerErrorCode>(error: unknown, code?: C): error is IssuerError<C> {
  return error instanceof IssuerError && (code === undefined || error.code === code);
}
