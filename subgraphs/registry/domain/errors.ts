/**
 * Errors of the registry's domain rules. Each carries a machine code the API reports in its
 * RFC 9457 problem body; `REGISTRY_ERROR_STATUS` is the HTTP status each code maps to.
 */
import type { ValidationIssue } from '../../../lib/formats/registry/model-schema.js';

export type RegistryErrorCode =
  /** An identifier outside the identifier syntax. */
  | 'INVALID_ID'
  /** A root (generic) identifier that would shadow a fixed path of the specification. */
  | 'RESERVED_ID'
  /** An expected version that is not a non-negative integer. */
  | 'INVALID_VERSION'
  /** The caller built on a version that is no longer the latest. */
  | 'STALE_VERSION'
  /** The new version's status may not follow the latest version's status. */
  | 'ILLEGAL_STATUS_TRANSITION'
  /** The kind takes no new versions through the API (models, protocol bindings, verification mechanisms). */
  | 'NOT_VERSIONABLE'
  /** A record version whose fields or body break the record rules. */
  | 'INVALID_RECORD'
  /** A model that is not a JSON Schema 2020-12 accepted in strict mode. */
  | 'INVALID_SCHEMA'
  /** A reference `id@version` outside its syntax. */
  | 'INVALID_REF'
  /** List, cursor or applicability query parameters outside their syntax or range. */
  | 'INVALID_QUERY';

export const REGISTRY_ERROR_STATUS: Readonly<Record<RegistryErrorCode, number>> = {
  INVALID_ID: 400,
  RESERVED_ID: 422,
  INVALID_VERSION: 400,
  STALE_VERSION: 409,
  ILLEGAL_STATUS_TRANSITION: 409,
  NOT_VERSIONABLE: 405,
  INVALID_RECORD: 422,
  INVALID_SCHEMA: 422,
  INVALID_REF: 400,
  INVALID_QUERY: 400,
};

/** One failed check against a JSON Schema (lib/formats/registry/model-schema.ts). */
export type { ValidationIssue };

export class RegistryError extends Error {
  readonly code: RegistryErrorCode;
  /** Schema-level detail when the failure comes from a JSON Schema check. */
  readonly issues: readonly ValidationIssue[];

  constructor(code: RegistryErrorCode, message: string, issues: readonly ValidationIssue[] = []) {
    super(message);
    this.name = 'RegistryError';
    this.code = code;
    this.issues = issues;
  }

  get status(): number {
    return REGISTRY_ERROR_STATUS[this.code];
  }
}
