import { decodeBase64Url, encodeBase64Url } from '../../../lib/crypto/index.js';
import { RegistryError } from './errors.js';
import { isValidRecordId } from './identifiers.js';
import { RECORD_STATUSES, isRecordStatus, type RecordStatus, type RecordVersion } from './record.js';
import { INSTANT_EXPECTED } from '../../../lib/time.js';
import { normalizeInstant } from './time.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/**
 * A validated list query over one collection's records (each at its latest version), in id order.
 * The data layer translates it into a keyset query: `id > after`, `take: limit + 1`.
 */
export interface ListQuery {
  readonly limit: number;
  /** Resume after this id (decoded from the cursor); null for the first page. */
  readonly after: string | null;
  /** Keep records whose latest version has one of these statuses; null for all. */
  readonly statuses: readonly RecordStatus[] | null;
  /** Keep records whose id starts with this; null for all. */
  readonly idPrefix: string | null;
  /** Keep records whose latest version was created at or after this instant; null for all. */
  readonly updatedSince: string | null;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Cursor of the next page; null on the last page. */
  readonly nextCursor: string | null;
}

const invalid = (message: string) => new RegistryError('INVALID_QUERY', message);

/** An opaque cursor: base64url of `{"after": id}`, the keyset position of the last item served. */
export function encodeCursor(lastId: string): string {
  return encodeBase64Url(JSON.stringify({ after: lastId }));
}

/** The id a cursor resumes after; INVALID_QUERY for anything encodeCursor did not produce. */
export function decodeCursor(cursor: string): string {
  let position: unknown;
  try {
    position = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(decodeBase64Url(cursor)));
  } catch {
    throw invalid('cursor is not a cursor this registry issued');
  }
  const after = (position as { after?: unknown } | null)?.after;
  if (!isValidRecordId(after) || Object.keys(position as object).length !== 1) throw invalid('cursor is not a cursor this registry issued');
  return after;
}

const LIST_PARAMETERS = new Set(['limit', 'cursor', 'status', 'id_prefix', 'updated_since']);
const ID_PREFIX = /^[a-z0-9][a-z0-9._-]{0,127}$/;

function parseLimit(value: unknown): number {
  if (value === undefined) return DEFAULT_PAGE_SIZE;
  const limit = typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw invalid(`limit is an integer from 1 to ${MAX_PAGE_SIZE}; got ${JSON.stringify(value)}`);
  }
  return limit;
}

function parseStatuses(value: unknown): RecordStatus[] | null {
  if (value === undefined) return null;
  const parts = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : [value];
  if (parts.length === 0 || !parts.every(isRecordStatus)) {
    throw invalid(`status is one or more (comma-separated) of ${RECORD_STATUSES.join(', ')}; got ${JSON.stringify(value)}`);
  }
  return [...new Set(parts)];
}

/**
 * Reads list query parameters, named as in the REST API: `limit` (1–500, default 50), `cursor`
 * (from a previous page), `status` (comma-separated statuses), `id_prefix`, `updated_since`
 * (RFC 3339 date-time). Values may be strings (query string) or typed (GraphQL arguments).
 * Unknown parameters are refused too, so a misspelt filter never silently returns everything.
 */
export function parseListQuery(params: Readonly<Record<string, unknown>>): ListQuery {
  for (const name of Object.keys(params)) {
    if (!LIST_PARAMETERS.has(name)) throw invalid(`unknown list parameter "${name}"`);
  }
  const { cursor, id_prefix: idPrefix, updated_since: updatedSince } = params;
  if (cursor !== undefined && typeof cursor !== 'string') throw invalid('cursor is a string');
  if (idPrefix !== undefined && !(typeof idPrefix === 'string' && ID_PREFIX.test(idPrefix))) {
    throw invalid(`id_prefix is the start of a record id; got ${JSON.stringify(idPrefix)}`);
  }
  const since = updatedSince === undefined ? null : typeof updatedSince === 'string' ? normalizeInstant(updatedSince) : undefined;
  if (since === undefined) throw invalid(`updated_since must be ${INSTANT_EXPECTED}; got ${JSON.stringify(updatedSince)}`);
  return {
    limit: parseLimit(params.limit),
    after: cursor === undefined ? null : decodeCursor(cursor),
    statuses: parseStatuses(params.status),
    idPrefix: idPrefix ?? null,
    updatedSince: since,
  };
}

/** Whether a record (at its latest version) passes the query's filters and lies after its cursor. */
export function matchesListQuery(record: RecordVersion, query: ListQuery): boolean {
  return (
    (query.after === null || record.id > query.after) &&
    (query.statuses === null || query.statuses.includes(record.status)) &&
    (query.idPrefix === null || record.id.startsWith(query.idPrefix)) &&
    (query.updatedSince === null || record.createdAt >= query.updatedSince)
  );
}

/**
 * One page from rows already filtered and ordered by id, fetched with one row beyond the limit:
 * the extra row only tells that another page exists.
 */
export function pageFrom<T extends { readonly id: string }>(rows: readonly T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1]!.id) : null };
}

/**
 * The page a query selects from one collection's records at their latest versions, in id order
 * (UTF-16 code unit order, which equals byte order for the ASCII ids; a database must sort with
 * the "C" collation to agree).
 */
export function listRecords(latest: readonly RecordVersion[], query: ListQuery): Page<RecordVersion> {
  const rows = latest.filter((record) => matchesListQuery(record, query)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return pageFrom(rows.slice(0, query.limit + 1), query.limit);
}
