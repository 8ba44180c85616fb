/**
 * What the trust service's repositories share: rows carry the domain's documents (as JSON) plus the
 * columns that keys, uniqueness and ordering need; every decision is the domain's, made on rows
 * loaded inside the transaction that writes its outcome, and text the database could not store is
 * refused as the input's own validation failure.
 */
import { failure, instantOf, success, type Instant, type TrustErrorCode, type TrustResult } from '../domain/index.js';
import { Prisma } from '../../../prisma/trust/generated/client.js';

export type Transaction = Prisma.TransactionClient;

export const TRANSACTION_OPTIONS = { timeout: 60_000 } as const;

export interface Written<T> {
  readonly value: T;
  /** False when the write found the same record already stored. */
  readonly created: boolean;
}

export const asJson = (value: unknown) => value as Prisma.InputJsonValue;
export const now = (): Instant => instantOf(new Date());

/** A string PostgreSQL's jsonb cannot hold: U+0000, or a lone surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what it finds
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Walks the document with its own stack: opaque members may nest deeper than the call stack allows. */
function hasUnstorableText(document: unknown): boolean {
  const pending: unknown[] = [document];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) return true;
    } else if (Array.isArray(value)) {
      pending.push(...value);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, member] of Object.entries(value)) {
        if (UNSTORABLE.test(key)) return true;
        pending.push(member);
      }
    }
  }
  return false;
}

/** Refuses, as the input's own validation failure, text the database could not store. */
export function storable<C extends TrustErrorCode>(document: unknown, code: C): TrustResult<true, C> {
  return hasUnstorableText(document) ? failure(code, 'text must not contain U+0000 or unpaired surrogates') : success(true);
}

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
