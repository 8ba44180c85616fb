/** Which failures mean "PostgreSQL cannot be reached" (503) and which are faults of their own (500, 4xx). */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPrismaClient } from '../../lib/db/prisma.js';
import { isDatabaseUnavailable } from '../../lib/db/unavailable.js';
import { Prisma } from '../../prisma/trust/generated/client.js';

/** Prisma's TransactionManagerError, as its transaction API throws it. */
const transactionError = (reason: string) => Object.assign(new Error(`Transaction API error: ${reason}`), { name: 'TransactionManagerError', code: 'P2028' });
const known = (code: string, cause?: unknown) => Object.assign(new Prisma.PrismaClientKnownRequestError('failed', { code, clientVersion: '7' }), cause ? { cause } : {});

describe('isDatabaseUnavailable', () => {
  it('recognises an unreachable or vanished database in every wrapping', () => {
    expect(isDatabaseUnavailable(known('P1001'))).toBe(true);
    expect(isDatabaseUnavailable(known('P2010', { name: 'DriverAdapterError', cause: { kind: 'DatabaseNotReachable' } }))).toBe(true);
    // $queryRaw: Prisma puts the driver adapter's error in meta, not in cause.
    const raw = new Prisma.PrismaClientKnownRequestError('Raw query failed.', {
      code: 'P2010',
      clientVersion: '7',
      meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'DatabaseNotReachable' } } },
    });
    expect(isDatabaseUnavailable(raw)).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('outer', { cause: new Error('Connection terminated unexpectedly') }))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([new Error('x'), Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })]))).toBe(true);
    // A transaction that found no free connection within its maxWait (the pool's own wait).
    expect(isDatabaseUnavailable(transactionError('Unable to start a transaction in the given time.'))).toBe(true);
  });

  it('leaves every other failure alone', () => {
    expect(isDatabaseUnavailable(known('P2002'))).toBe(false);
    // Prisma's other transaction API errors (P2028 too) are faults, e.g. a transaction that outlived its timeout.
    expect(isDatabaseUnavailable(transactionError('A query cannot be executed on an expired transaction. The timeout for this transaction was 5000 ms.'))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(new pg.DatabaseError('syntax error', 10, 'error'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(isDatabaseUnavailable(loop)).toBe(false);
  });
});

describe('the wait for a connection of a service’s pool', () => {
  /** The pool's wait and the transactions' maxWait of a client as openPrismaClient makes it (nothing connects). */
  function waits(): { pool: number | undefined; transaction: number | undefined } {
    let pool: pg.Pool | undefined;
    let options: { transactionOptions?: { maxWait?: number } } = {};
    const client = openPrismaClient(
      class {
        constructor(given: typeof options) {
          options = given;
        }
      },
      'postgresql://passport@127.0.0.1:9/passport?schema=issuer',
      10,
      { watch: (watched) => (pool = watched) },
    );
    expect(client).toBeDefined();
    return { pool: pool?.options.connectionTimeoutMillis, transaction: options.transactionOptions?.maxWait };
  }

  it('is 10 s for a query and a transaction alike, or DATABASE_WAIT_MS (test/first-contact/busy-pool.test.ts waits it out)', () => {
    const configured = process.env.DATABASE_WAIT_MS;
    try {
      delete process.env.DATABASE_WAIT_MS;
      expect(waits()).toEqual({ pool: 10_000, transaction: 10_000 });
      process.env.DATABASE_WAIT_MS = '3000';
      expect(waits()).toEqual({ pool: 3000, transaction: 3000 });
    } finally {
      if (configured === undefined) delete process.env.DATABASE_WAIT_MS;
      else process.env.DATABASE_WAIT_MS = configured;
    }
  });
});
