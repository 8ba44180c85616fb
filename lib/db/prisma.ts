import { createHash } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Tracer } from '@opentelemetry/api';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { traceStatements } from '../ops/tracing.js';
import { parseDatabaseUrl } from './postgres.js';

/** The constructor of a service's generated Prisma client. */
export type PrismaClientClass<T> = new (options: { adapter: PrismaPg; transactionOptions?: { maxWait?: number } }) => T;

/** Told of every SQL statement once answered: its text, its duration in seconds, whether it failed. */
export type StatementObserver = (sql: string, seconds: number, failed: boolean) => void;

type QueryCallback = (error: unknown, result: unknown) => void;
/** pg's Client.query as called: a text or config (or a submittable), then values and a callback, each optional. */
type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** A callback that tells the observer how long the statement took before it hands on the answer. */
function timedCallback(observe: StatementObserver, sql: string, started: number, callback: QueryCallback): QueryCallback {
  return (error, result) => {
    observe(sql, (performance.now() - started) / 1000, Boolean(error));
    callback(error, result);
  };
}

/**
 * Counts the SQL statements a pool sends (every `query` of every client it hands out: Prisma's
 * queries, raw SQL and transaction control alike), so that tests can see how many a request costs,
 * and tells an observer (the metrics) how long each took. pg's clients are asked both ways: with a
 * callback (pg.Pool's own query) and with a promise (Prisma's adapter in a transaction). Either way
 * the statement is timed by one callback handed to pg: a promise is answered from it rather than
 * followed with `.then` (which would add a promise, two closures and a turn of the microtask queue
 * a statement; docs/OPS-COST.md). A submittable (pg-cursor, pg-query-stream) or a config
 * carrying its own callback is counted, not timed.
 */
export class StatementCounter {
  #count = 0;
  readonly #observe: StatementObserver | undefined;

  constructor(observe?: StatementObserver) {
    this.#observe = observe;
  }

  get count(): number {
    return this.#count;
  }

  /** Counts from now on every statement sent on the pool's connections. */
  watch(pool: pg.Pool): void {
    const observe = this.#observe;
    pool.on('connect', (client) => {
      const query = client.query as Query;
      const counted: Query = (config, values, callback) => {
        this.#count += 1;
        if (!observe || config == null || (typeof config !== 'string' && (typeof (config as { submit?: unknown }).submit === 'function' || (config as { callback?: unknown }).callback))) {
          return query.call(client, config, values, callback);
        }
        const sql = typeof config === 'string' ? config : String((config as { text?: unknown }).text ?? '');
        const started = performance.now();
        if (typeof values === 'function') return query.call(client, config, timedCallback(observe, sql, started, values as QueryCallback));
        if (typeof callback === 'function') return query.call(client, config, values, timedCallback(observe, sql, started, callback as QueryCallback));
        return new Promise((resolve, reject) => {
          query.call(client, config, values, (error: unknown, result: unknown) => {
            observe(sql, (performance.now() - started) / 1000, Boolean(error));
            if (error) reject(error);
            else resolve(result);
          });
        });
      };
      (client as unknown as { query: Query }).query = counted;
    });
  }
}

/**
 * DATABASE_WAIT_MS, default 10 s: how long a request waits for one of the pool's connections, then
 * fails as DATABASE_UNAVAILABLE (503): a query, and a transaction of any service alike (Prisma's
 * `maxWait`, 2 s unless set, which made a busy pool answer 500 "Unable to start a transaction in the
 * given time" before the pool's own wait was up).
 */
function databaseWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.DATABASE_WAIT_MS ?? 10_000);
  return Number.isInteger(configured) && configured > 0 ? configured : 10_000;
}

/** DATABASE_STATEMENT_TIMEOUT_MS, default 30 s: the longest any one SQL statement may run. */
function statementTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.DATABASE_STATEMENT_TIMEOUT_MS ?? 30_000);
  return Number.isInteger(configured) && configured > 0 ? configured : 30_000;
}

/**
 * DATABASE_PREPARED_STATEMENTS, default on: each statement Prisma sends is prepared once per
 * connection, under a name taken from a digest of its text, and after that only bound and run, so
 * that PostgreSQL parses and analyses it once per connection rather than on every request (a
 * passport read by ids: 167 µs of PostgreSQL's CPU unnamed, 70 µs prepared; docs/SCALING.md).
 * `off` for a connection pooler that cannot keep a client's named statements (PgBouncer in
 * transaction mode before 1.21).
 */
function preparedStatements(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.DATABASE_PREPARED_STATEMENTS?.trim().toLowerCase() !== 'off';
}

/**
 * A statement with more parameters than this runs unnamed: a list of ids is written as one
 * parameter each (`IN ($1,$2,…)`), so every length would be a statement of its own kept by every
 * connection; up to this many, the few lengths a request asks stay few.
 */
const MOST_PREPARED_PARAMETERS = 32;
/** Names by text, for the texts seen most: a digest is made once per text rather than per statement. */
const statementNames = new LRUCache<string, string>({ max: 4096 });

/** A statement's name: the same text, the same name (so a connection prepares it once), within PostgreSQL's 63 bytes; '' is the unnamed statement. */
function statementName({ sql, args }: { sql: string; args: readonly unknown[] }): string {
  if (args.length > MOST_PREPARED_PARAMETERS) return '';
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `prisma_${createHash('sha256').update(sql).digest('base64url').slice(0, 32)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/** What may watch a service's connection pool. */
export interface PoolObservers {
  statements?: StatementCounter;
  tracer?: Tracer;
  watch?: (pool: pg.Pool) => void;
}

/**
 * Opens a service's Prisma client on the `pg` driver adapter, inside the schema named by the URL's
 * `?schema=` parameter. Given, `observers.statements` counts the statements sent, `observers.tracer` traces them,
 * and `observers.watch` sees the pool (its connections, for the metrics).
 */
export function openPrismaClient<T>(Client: PrismaClientClass<T>, url: string, poolSize = 10, observers: PoolObservers = {}): T {
  const target = parseDatabaseUrl(url);
  const connectionString = new URL(url);
  connectionString.searchParams.delete('schema');
  const wait = databaseWaitMs();
  const pool = new pg.Pool({
    connectionString: connectionString.toString(),
    max: poolSize,
    connectionTimeoutMillis: wait,
    // No statement holds a connection longer, so one heavy request cannot starve the others.
    options: `-c statement_timeout=${statementTimeoutMs()} -c idle_in_transaction_session_timeout=${statementTimeoutMs()}`,
  });
  observers.statements?.watch(pool);
  if (observers.tracer) traceStatements(pool, observers.tracer, connectionString.pathname.slice(1));
  observers.watch?.(pool);
  // Every transaction's wait to begin, unless one sets its own (none does); each sets its own timeout.
  const adapter = new PrismaPg(pool, { schema: target.schema, disposeExternalPool: true, ...(preparedStatements() && { statementNameGenerator: statementName }) });
  return new Client({ adapter, transactionOptions: { maxWait: wait } });
}
