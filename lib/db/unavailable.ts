/**
 * Whether an error means PostgreSQL could not be reached or went away, as opposed to a fault of the
 * request or of our code. Such a failure is the one 5xx that is not a bug: every path answers it with
 * 503 `DATABASE_UNAVAILABLE` and `Retry-After`, and the pool reconnects once the database is back.
 *
 * The error arrives in several wrappings (Prisma's client errors, its driver adapter's mapped errors,
 * node-postgres, Node's sockets), so the chain of causes is walked and each link is judged by its
 * codes, never by its wording alone.
 */

/** Seconds a client is told to wait before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Prisma client error codes: cannot reach, timed out, server closed the connection, pool timeout. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** Prisma driver adapter error kinds of the same meaning. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TlsConnectionError']);
/** Node's socket errors. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** PostgreSQL SQLSTATEs: shutting down, crashed, starting up, too many connections. */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** node-postgres reports a dropped connection without a code. */
const DROPPED_CONNECTION = /^Connection terminated|connection terminated unexpectedly|Client has encountered a connection error|timeout exceeded when trying to connect/i;
/**
 * Prisma's P2028 is every transaction API error; this one is a transaction that found no free
 * connection within its maxWait (lib/db/prisma.ts: the pool's own wait), not a fault.
 */
const NO_CONNECTION_FOR_TRANSACTION = /Unable to start a transaction in the given time/;

function linkIsUnavailable(link: Record<string, unknown>): boolean {
  const { code, kind, name, message } = link;
  if (name === 'PrismaClientInitializationError') return true;
  if (typeof code === 'string') {
    if (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || SQLSTATES.has(code)) return true;
    if (code === 'P2028' && typeof message === 'string' && NO_CONNECTION_FOR_TRANSACTION.test(message)) return true;
    // Class 08: connection exception.
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (typeof kind === 'string' && ADAPTER_KINDS.has(kind)) return true;
  return typeof message === 'string' && DROPPED_CONNECTION.test(message);
}

/**
 * Every link of an error's chain: the error, its `cause` (or `originalError`, as Prisma and GraphQL
 * name it; `meta.driverAdapterError` of a raw query), theirs, and the members of an AggregateError, each once.
 */
export function* errorChain(error: unknown): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const link = pending.shift();
    if (typeof link !== 'object' || link === null || seen.has(link)) continue;
    seen.add(link);
    const record = link as Record<string, unknown>;
    yield record;
    if (Array.isArray(record.errors)) pending.push(...record.errors);
    pending.push(record.cause ?? record.originalError);
    // Prisma's raw queries (P2010) carry the driver adapter's error in meta, not as a cause.
    pending.push((record.meta as Record<string, unknown> | undefined)?.driverAdapterError);
  }
}

export function isDatabaseUnavailable(error: unknown): boolean {
  for (const link of errorChain(error)) if (linkIsUnavailable(link)) return true;
  return false;
}
