import { RegistryError } from './errors.js';
import { KIND_COLLECTIONS, type RecordKind } from './kinds.js';

/**
 * Record identifiers: lower-case ASCII letters and digits, with `.`, `_` and `-` inside, at most
 * 128 characters. Every such string is a single URL path segment needing no percent-encoding
 * (RFC 3986 unreserved characters), and cannot be `.` or `..`. Lower case only, so two records
 * never differ by case alone.
 */
export const RECORD_ID_PATTERN = /^[a-z0-9](?:[a-z0-9._-]{0,126}[a-z0-9])?$/;

/**
 * Identifiers a generic record may not take, because a generic record is addressed at the
 * registry's root (`/{id}`) and these are fixed paths there: the specification's collections and
 * service paths, plus the paths the platform serves beside them.
 */
export const RESERVED_ROOT_IDS: readonly string[] = Object.freeze(
  [...Object.values(KIND_COLLECTIONS), 'healthz', 'admin', 'schemas', 'applicability', 'keyring', 'graphql', 'graphiql', 'docs', 'openapi.json', 'favicon.ico', 'robots.txt'].sort(),
);

const RESERVED = new Set(RESERVED_ROOT_IDS);

export function isValidRecordId(id: unknown): id is string {
  return typeof id === 'string' && RECORD_ID_PATTERN.test(id);
}

/**
 * Checks an identifier for a new record of `kind`: INVALID_ID outside the syntax, RESERVED_ID for
 * a generic record named like a fixed root path. Reserved names are fine inside a collection
 * (`/items/schemas` shadows nothing).
 */
export function checkRecordId(id: unknown, kind: RecordKind): string {
  if (!isValidRecordId(id)) {
    throw new RegistryError('INVALID_ID', `a record id is 1 to 128 characters of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit; got ${JSON.stringify(id)}`);
  }
  if (kind === 'generic' && RESERVED.has(id)) {
    throw new RegistryError('RESERVED_ID', `"${id}" is a fixed path at the registry root and cannot name a record`);
  }
  return id;
}

/** A reference to one version of a record, written `id@version` (a passport's type ref). */
export interface RecordRef {
  readonly id: string;
  readonly version: number;
}

const REF_PATTERN = /^([^@]+)@([1-9][0-9]{0,8})$/;

/** Parses `id@version`; INVALID_REF when either part is malformed. */
export function parseRecordRef(text: string): RecordRef {
  const match = REF_PATTERN.exec(text);
  if (!match || !isValidRecordId(match[1])) {
    throw new RegistryError('INVALID_REF', `a record reference is "id@version" with a positive version; got ${JSON.stringify(text)}`);
  }
  return { id: match[1], version: Number(match[2]) };
}

export function formatRecordRef(ref: RecordRef): string {
  return `${ref.id}@${ref.version}`;
}
