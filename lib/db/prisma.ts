import { PrismaPg } from '@prisma/adapter-pg';
import type { Tracer } from '@opentelemetry/api';
import pg from 'pg';
import { traceStatements } from '../ops/tracing.js';
import { parseDatabaseUrl } from './postgres.js';

/** The constructor of a service's generated Prisma client. */
export type PrismaClientClass<T> = new (options: { adapter: PrismaPg }) => T;

/** Told of every SQL statement once answered: its text, its duration in seconds, whether it failed. */
export type StatementObserver = (sql: string, seconds: number, failed: boolean) => void;

type QueryCallback = (error: unknown, result: unknown) => void;

/**
 * Counts the SQL statements a pool sends (every `query` of every client it hands out: Prisma's
 * queries, raw SQL and transaction control alike), so that tests can see how many a request costs,
 * and tells an observer (the metrics) how long each took. pg's clients are asked both ways: with a
 * promise (Prisma's adapter in a transaction) and with a callback (pg.Pool's own query).
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
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        this.#count += 1;
        if (!observe) return query(...args);
        const sql = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown } | undefined)?.text ?? '');
        const started = performance.now();
        const done = (failed: boolean) => observe(sql, (performance.now() - started) / 1000, failed);
        const last = args.length - 1;
        if (typeof args[last] === 'function') {
          const callback = args[last] as QueryCallback;
          args[last] = (error: unknown, result: unknown) => {
            done(Boolean(error));
            callback(error, result);
          };
          return query(...args);
        }
        const answer = query(...args);
        if (answer instanceof Promise)
          answer.then(
            () => done(false),
            () => done(true),
          );
        return answer;
      };
    });
  }
}

/** How long a request waits for one of the pool's connections. */
const POOL_WAIT_MS = 10_000;

/** DATABASE_STATEMENT_TIMEOUT_MS, default 30 s: the longest any one SQL statement may run. */
function statementTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.DATABASE_STATEMENT_TIMEOUT_MS ?? 30_000);
  return Number.isInteger(configured) && configured > 0 ? configured : 30_000;
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
  const pool = new pg.Pool({
    connectionString: connectionString.toString(),
    max: poolSize,
    // A request waits this long for a free connection, then fails as DATABASE_UNAVAILABLE (503).
    connectionTimeoutMillis: POOL_WAIT_MS,
    // No statement holds a connection longer, so one heavy request cannot starve the others.
    options: `-c statement_timeout=${statementTimeoutMs()} -c idle_in_transaction_session_timeout=${statementTimeoutMs()}`,
  });
  observers.statements?.watch(pool);
  if (observers.tracer) traceStatements(pool, observers.tracer, connectionString.pathname.slice(1));
  observers.watch?.(pool);
  return new Client({ adapter: new PrismaPg(pool, { schema: target.schema, disposeExternalPool: true }) });
}
